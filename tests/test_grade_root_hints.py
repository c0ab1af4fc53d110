"""What a missing exercise file says for odd ``--root`` folders: a hint that can be followed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mini_agent.grading.grader import find_file

REPO = Path(__file__).resolve().parents[1]


def test_root_at_exercises_itself_never_says_to_copy_into_exercises_exercises(tmp_path):
    # --root names exercises/ itself, which holds other exercises but not 05: the hint told
    # the learner to copy the files into <kit>/exercises/exercises
    exercises = tmp_path / "kit" / "exercises"
    exercises.mkdir(parents=True)
    shutil.copy(REPO / "exercises" / "03_masking.py", exercises)
    with pytest.raises(FileNotFoundError) as caught:
        find_file("exercises", "05", root=exercises)
    assert "exercises/exercises" not in str(caught.value)
    assert f"--root {exercises.parent}" in str(caught.value)


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_folder_is_named_as_such(tmp_path, kind):
    # a mistyped --root, or a file, was answered with "copy the exercise files again ...
    # into <root>/exercises": the folder does not exist, or cannot
    root = tmp_path / "kti"
    if kind == "file":
        root.write_text("", encoding="utf-8")
    with pytest.raises(FileNotFoundError) as caught:
        find_file("exercises", "03", root=root)
    assert "copy the exercise files again" not in str(caught.value)
    assert str(caught.value).startswith(
        f"the folder to grade, {root}, is "
        + ("a file, not a folder" if kind == "file" else "not there (no such folder)"))


def test_a_root_with_a_tilde_is_the_home_folder(tmp_path, monkeypatch):
    from mini_agent.grading.grader import resolve_root
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_root("exercises", "~/kit") == (tmp_path / "kit").resolve()


def test_a_missing_exercises_folder_names_the_option_for_python_and_the_command_line(tmp_path):
    from mini_agent.grading import find_root
    with pytest.raises(FileNotFoundError) as caught:
        find_root(tmp_path)
    assert str(caught.value).endswith("(--root DIR on the command line, root=DIR in Python)")
    with pytest.raises(FileNotFoundError) as caught:
        find_file("exercises", "03", root=tmp_path / "nowhere")
    assert "(--root DIR, or root=DIR in Python)" in str(caught.value)
