"""The workshop docs agree with the kit: the full-day route's total, the image's build context.

docs/instructor.md states the full-day route's minutes in words; they must add up to its table.
docs/jupyterhub.md builds an image with ``COPY . /tmp/mini-agent``: the repository's
``.dockerignore`` keeps virtual environments, caches and logs out of that context, and must not
leave out what the Dockerfile installs.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_full_day_route_states_the_minutes_its_table_adds_up_to():
    doc = (REPO / "docs" / "instructor.md").read_text(encoding="utf-8")
    section = doc.split("## A full-day route", 1)[1].split("\n## ", 1)[0]
    teaching = breaks = exercises = 0
    for row in re.findall(r"^\| \d+:\d\d \| (.*)$", section, flags=re.M):
        episode, exercise = [cell.strip() for cell in row.split("|")[:2]]
        minutes = int(re.findall(r"\((\d+)\)", episode)[-1])
        if episode.startswith(("break", "lunch")):
            breaks += minutes
        else:
            teaching += minutes
        found = re.findall(r"\((\d+)\)", exercise)
        exercises += int(found[-1]) if found else 0
    assert (teaching, exercises, breaks) == (280, 145, 75)
    assert (f"{teaching + exercises} minutes (7 h 05 min) of teaching and\nexercises "
            f"({teaching} min of episodes and wrap-up, {exercises} min of exercises) plus "
            f"{breaks} minutes of breaks") in section
    assert "About 6 hours" not in doc


def _docker_ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule, as far as these patterns need: a path is left out when a pattern
    matches it or one of its parent folders (``**`` any folders, ``*`` within one name)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    for pattern in patterns:
        regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*", "[^/]*")
        if any(re.fullmatch(regex, prefix) for prefix in prefixes):
            return True
    return False


def test_dockerignore_leaves_out_caches_and_keeps_what_the_image_installs():
    patterns = [line.strip() for line in
                (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]
    doc = (REPO / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    assert "COPY --chown=${NB_UID}:${NB_GID} . /tmp/mini-agent" in doc
    needed = ["pyproject.toml", "README.md", "mini_agent/__init__.py",
              "mini_agent/grading/checks/checks_03_masking.py"]
    needed += re.findall(r"(binder/[\w.]+)", doc)  # binder/requirements.txt, binder/postBuild
    assert {"binder/requirements.txt", "binder/postBuild"} <= set(needed)
    for path in needed:
        assert (REPO / path).exists(), path
        assert not _docker_ignored(path, patterns), path
    for path in [".git/HEAD", ".venv/bin/python", "venv/bin/python", "build/lib/x.py",
                 "dist/mini_agent-0.1.0.tar.gz", "mini_agent.egg-info/PKG-INFO",
                 "mini_agent/grading/__pycache__/runner.cpython-311.pyc",
                 ".pytest_cache/README.md", "tests/.hypothesis/examples/x",
                 "sessions/a.jsonl", "notebooks/sessions/a.jsonl",
                 "notebooks/.ipynb_checkpoints/03_observation_masking-checkpoint.ipynb"]:
        assert _docker_ignored(path, patterns), path
