"""mini_agent: a small Claude-Code-style agent harness for teaching context engineering.

Start with ``notebooks/00_start_here.ipynb`` or ``mini-agent demo``. Each module holds one
concept and names the episode notebook that teaches it.
"""

__version__ = "0.1.0"
