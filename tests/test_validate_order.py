"""The one-pass validation raises the same first error as before, whatever the blocks hold.

Before the one pass, the markers were counted after every message had passed its checks; now
each block's values are walked for markers as the block is checked, before the later
messages' rules run. A block whose value refers to itself (built in Python, never read from
JSON) made the walk endless where the old validation reported the later message's error.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = """
from mini_agent.core.messages import validate_messages, MessageValidationError
loop = {"path": "x"}
loop["self"] = loop
history = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": [
               {"type": "tool_use", "id": "a", "name": "t", "input": loop}]},
           {"role": "assistant", "content": "two assistant turns in a row"}]
try:
    validate_messages(history)
except MessageValidationError as error:
    print(error.rule)
"""


def test_a_self_referring_tool_input_does_not_hide_the_pairing_error_behind_an_endless_walk():
    try:
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                              timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError("validate_messages did not return in 10 s (the version before "
                             "the one pass raised tool_use_without_result at once)") from None
    assert done.stdout.strip() == "tool_use_without_result", done.stderr
