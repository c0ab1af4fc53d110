"""Tests for mini_agent.grading.stubs: exercises/ generated from solutions/ (maintainers)."""

from __future__ import annotations

import io

import pytest

from mini_agent import cli
from mini_agent.grading import make_exercises, make_stub

# --------------------------------------------------------------------------- make_stub


def test_make_stub_numbers_regions_and_keeps_indentation():
    source = ('def f(x):\n    """Doc."""\n    # BEGIN SOLUTION\n    y = x + 1\n    return y\n'
              "    # END SOLUTION\n\n\nclass A:\n    def g(self):\n        # BEGIN SOLUTION\n"
              "        return 2\n        # END SOLUTION\n")
    assert make_stub(source, "07") == (
        'def f(x):\n    """Doc."""\n    raise NotImplementedError("Exercise 07.1")\n\n\n'
        'class A:\n    def g(self):\n        raise NotImplementedError("Exercise 07.2")\n')


def test_make_stub_without_markers_is_identity():
    assert make_stub("x = 1\n", "03") == "x = 1\n"


@pytest.mark.parametrize("source, message", [
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "line 2: nested"),
    ("x = 1\n# END SOLUTION\n", "line 2: # END SOLUTION without"),
    ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "without # END SOLUTION"),
])
def test_make_stub_marker_errors(source, message):
    with pytest.raises(ValueError, match=message):
        make_stub(source, "03")


def test_make_exercises_writes_then_reports_drift(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "42_demo.py").write_text(
        "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]
    assert not (tmp_path / "exercises").exists()  # check only compares
    assert make_exercises(root=tmp_path) == ["exercises/42_demo.py"]
    text = (tmp_path / "exercises" / "42_demo.py").read_text()
    assert text.endswith('def f():\n    raise NotImplementedError("Exercise 42.1")\n')
    assert text.startswith("# Generated from solutions/42_demo.py")
    assert make_exercises(root=tmp_path, check=True) == []
    (tmp_path / "exercises" / "42_demo.py").write_text(text + "# edited\n")
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]


def test_make_exercises_keeps_edited_files_unless_forced(tmp_path):
    (tmp_path / "solutions").mkdir()
    for name in ("42_demo.py", "43_more.py"):
        (tmp_path / "solutions" / name).write_text(
            "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    make_exercises(root=tmp_path)
    edited = tmp_path / "exercises" / "42_demo.py"
    stub = edited.read_text()
    edited.write_text(stub.replace('raise NotImplementedError("Exercise 42.1")', "return 1"))
    (tmp_path / "exercises" / "43_more.py").unlink()
    assert make_exercises(root=tmp_path) == ["exercises/43_more.py"]  # missing: created
    assert "return 1" in edited.read_text()  # the learner's work survives
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]
    assert make_exercises(root=tmp_path, force=True) == ["exercises/42_demo.py"]
    assert edited.read_text() == stub


def test_make_exercises_finds_solutions_from_a_subfolder(tmp_path, monkeypatch):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "42_demo.py").write_text("x = 1\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    assert make_exercises() == ["exercises/42_demo.py"]
    assert (tmp_path / "exercises" / "42_demo.py").exists()


def test_marker_errors_name_the_solution_file(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "42_demo.py").write_text("x = 1\n# END SOLUTION\n")
    with pytest.raises(ValueError, match=r"42_demo.py: line 2: # END SOLUTION without"):
        make_exercises(root=tmp_path, check=True)


@pytest.mark.parametrize("solutions", ["missing", "empty"])
def test_without_solutions_make_exercises_is_a_maintainer_command(solutions, tmp_path,
                                                                  monkeypatch, capsys):
    (tmp_path / "exercises").mkdir()  # a learner's copy: exercises/ only
    if solutions == "empty":
        (tmp_path / "solutions").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="make-exercises is a maintainer command"):
        make_exercises(check=True)
    for argv in (["make-exercises", "--check"], ["make-exercises"],
                 ["make-exercises", "--root", str(tmp_path)]):
        out = io.StringIO()
        assert cli.main(argv, out=out) == 2
        assert "in sync" not in out.getvalue()
        assert "maintainer command" in capsys.readouterr().err

