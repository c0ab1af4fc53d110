"""list_dir and glob stream huge folders: the first entries in sort order up to a cap, the
exact count of the rest, memory bounded by the cap; glob lists what pathlib's glob lists."""

import os
import tracemalloc

import pytest

from mini_agent.harness import file_tools, listing
from mini_agent.harness.workspace import Workspace, inside


@pytest.fixture
def big(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    for i in range(3_000):
        os.close(os.open(root / f"f{i:05d}.txt", os.O_CREAT | os.O_WRONLY))
    (root / "sub").mkdir()
    (root / "zz.bak").write_text("")  # ignored
    return root


def test_list_dir_stops_at_its_cap_and_counts_the_rest(big, monkeypatch):
    monkeypatch.setattr(listing, "LIST_MAX_ENTRIES", 100)
    out = file_tools.list_dir(Workspace(big), {})
    lines = out.splitlines()
    assert lines[:100] == [f"f{i:05d}.txt" for i in range(100)]   # sorted, not disk order
    assert lines[100:] == [
        "[... and 2,901 more entries not shown: the first 100 are shown, by name. Use glob "
        "with a pattern (e.g. '*.py') or grep to find what you need]"]


def test_list_dir_keeps_whole_lines_within_the_output_cap(big, monkeypatch):
    monkeypatch.setattr(listing, "LIST_MAX_ENTRIES", 1_000)
    out = file_tools.list_dir(Workspace(big, max_output_chars=1_000), {})
    lines = out.splitlines()
    assert lines[:-1] == [f"f{i:05d}.txt" for i in range(len(lines) - 1)]
    shown = len(lines) - 1
    assert shown == 63   # 11 characters a line (its newline too) within 1,000 less 300
    assert lines[-1].startswith(f"[... and {3_001 - shown:,} more entries not shown: "
                                f"the first {shown} are shown")
    assert len(out) <= 1_000


def test_list_dir_of_a_huge_folder_holds_the_cap_not_the_folder(big, monkeypatch):
    monkeypatch.setattr(listing, "LIST_MAX_ENTRIES", 10)
    ws = Workspace(big)
    tracemalloc.start()
    try:
        file_tools.list_dir(ws, {})
        _, streamed = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        everything = sorted(big.iterdir())   # what a listing held before streaming
        _, held = tracemalloc.get_traced_memory()
        del everything
    finally:
        tracemalloc.stop()
    assert streamed < held / 5, (streamed, held)


def test_glob_stops_at_its_cap_and_counts_the_rest(big, monkeypatch):
    monkeypatch.setattr(listing, "GLOB_MAX_PATHS", 5)
    (big / "sub" / "f.txt").write_text("")
    out = file_tools.glob(Workspace(big), {"pattern": "**/*.txt"})
    assert out.splitlines() == [
        "f00000.txt", "f00001.txt", "f00002.txt", "f00003.txt", "f00004.txt",
        "[... and 2,996 more paths not shown: the first 5 are shown, in sorted order. Narrow "
        "the pattern (a folder, an extension)]"]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    for rel in ["a.py", "b.txt", ".hidden.py", "pkg/a.py", "pkg/sub/c.py", "pkg/sub/d.md",
                "qkg/e.py", "pkg/sub/deep/f.py", "node_modules/x.py", "pkg/a.py.bak",
                "x]y/z.py", "pkg/!n.py"]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    os.symlink(root / "pkg" / "sub", root / "linked")       # inside: pathlib follows for */x
    os.symlink(tmp_path, root / "out")                      # pointing out: left out
    (tmp_path / "secret.py").write_text("")
    return root


def _pathlib_glob(ws, pattern):
    """What glob listed when it was pathlib's ``Path.glob`` over the whole tree."""
    matches = set()
    for found in ws.root.glob(pattern):
        if not inside(found, ws.root) or ws.is_ignored(found.absolute()):
            continue
        matches.add(ws.relative(found.absolute()) + ("/" if found.is_dir() else ""))
    return sorted(matches)


@pytest.mark.parametrize("pattern", [
    "*", "*.py", "**/*", "**/*.py", "pkg/**", "pkg/**/*.py", "*/*.py", "*/sub/*", "[pq]kg/*.py",
    "[!p]kg/*", "p?g/*", "**/sub/*.md", "pkg/sub", "**/deep", "x]y/*", "linked/*", "**/c.py",
    "pkg/**/sub/**", "pkg/[!a]*", "*/[]x]*",
])
def test_glob_lists_what_pathlib_lists(tree, pattern):
    ws = Workspace(tree)
    got = list(listing.first_sorted(listing.glob_paths(ws, pattern), 10_000, key=str)[0])
    assert got == _pathlib_glob(ws, pattern)


def test_a_link_pointing_out_is_never_entered(tree):
    """pathlib followed ``out`` (a link to the folder above) for ``*/*`` and listed
    ``out/tree/``: a path through the outside that resolves back in. glob does not."""
    paths = list(listing.glob_paths(Workspace(tree), "*/*"))
    assert not [p for p in paths if p.startswith("out")]
    assert "linked/c.py" in paths and "pkg/a.py" in paths


def test_glob_lists_each_path_once(tree):
    ws = Workspace(tree)
    paths = list(listing.glob_paths(ws, "**/sub/**"))
    assert len(paths) == len(set(paths))
    assert sorted(paths) == ["pkg/sub/", "pkg/sub/deep/"]


def test_a_lone_double_star_lists_the_folders_below_the_root(tree):
    assert file_tools.glob(Workspace(tree), {"pattern": "**"}) == (
        "pkg/\npkg/sub/\npkg/sub/deep/\nqkg/\nx]y/")


def test_glob_with_a_fixed_folder_reads_only_that_folder(tree, monkeypatch):
    read = []
    real = os.scandir

    def scandir(path):
        read.append(os.path.relpath(path, tree))
        return real(path)

    monkeypatch.setattr(listing.os, "scandir", scandir)
    assert file_tools.glob(Workspace(tree), {"pattern": "pkg/sub/*.md"}) == "pkg/sub/d.md"
    assert read == [".", "pkg", "pkg/sub"]
