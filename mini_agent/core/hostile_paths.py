"""A corpus of hostile memory tool paths, each labelled with the trick it plays.

Used by the tests (every one must be refused, nothing outside the base directory touched),
by ``mini_agent.harness.memory_audit`` (the kit's checks side by side with the SDK's own
``_validate_path``) and by ``notebooks/09_memory_and_subagents.ipynb``. The paths named in
:data:`SYMLINK_NAMES` only become hostile once the audit has planted symlinks pointing out of
the memory directory under those names.

Source: 004_b74ef821c58ee4ec.txt (path traversal); OWASP "Path Traversal" (encodings,
double encoding, backslashes, NUL); Unicode TR39 confusables for ``/`` and ``.``.
"""

from __future__ import annotations

SYMLINK_NAMES = ("link_dir", "link_file.md", "dangling.md")
"""Names the audit turns into symlinks pointing outside: a directory, a file, nothing."""

HOSTILE_PATHS: tuple[tuple[str, str], ...] = (
    # leaving the root
    ("dot-dot", "/memories/../secret.txt"),
    ("dot-dot twice", "/memories/../../etc/passwd"),
    ("dot-dot after a name", "/memories/notes/../../secret.txt"),
    ("dot then dot-dot", "/memories/./../secret.txt"),
    ("dot-dot out and back in", "/memories/../memories/notes.md"),
    ("absolute path elsewhere", "/etc/passwd"),
    ("the filesystem root", "/"),
    ("relative path", "memories/notes.md"),
    ("relative dot-dot", "../memories/notes.md"),
    ("empty path", ""),
    ("double leading slash", "//memories/notes.md"),
    ("upper case root", "/MEMORIES/notes.md"),
    ("leading space", " /memories/notes.md"),
    # the prefix trick
    ("prefix trick", "/memoriesX/notes.md"),
    ("prefix trick with underscore", "/memories_backup/notes.md"),
    ("prefix trick with dots", "/memories../secret.txt"),
    # percent-encoding, once and more
    ("encoded slash then dot-dot", "/memories%2f..%2fsecret.txt"),
    ("encoded dot-dot", "/memories/%2e%2e/secret.txt"),
    ("encoded dot-dot, upper case", "/memories/%2E%2E/%2E%2E/etc/passwd"),
    ("encoded slash only", "/memories/..%2fsecret.txt"),
    ("double-encoded dot-dot", "/memories/%252e%252e/secret.txt"),
    ("double-encoded slash", "/memories/..%252fsecret.txt"),
    ("triple-encoded dot-dot", "/memories/%25252e%25252e/secret.txt"),
    ("fully encoded root", "%2fmemories%2f..%2fsecret.txt"),
    ("invalid UTF-8 escape", "/memories/%ff%fe.md"),
    # backslashes
    ("backslash dot-dot", "/memories\\..\\secret.txt"),
    ("backslash in a name", "/memories/notes\\..\\..\\secret.txt"),
    ("encoded backslash", "/memories/%5c..%5csecret.txt"),
    ("fullwidth reverse solidus", "/memories/\uff3c..\uff3csecret.txt"),
    # NUL and control characters
    ("NUL byte", "/memories/notes.md\x00.txt"),
    ("encoded NUL", "/memories/notes.md%00.txt"),
    ("double-encoded NUL", "/memories/notes.md%2500.txt"),
    ("newline in a name", "/memories/notes\n.md"),
    # invisible formatting characters: what is shown is not what is stored
    ("right-to-left override U+202E", "/memories/notes\u202etxt.md"),
    ("encoded right-to-left override", "/memories/notes%E2%80%AEtxt.md"),
    ("first strong isolate U+2068", "/memories/\u2068notes\u2069.md"),
    ("zero-width space U+200B", "/memories/no\u200btes.md"),
    ("byte order mark U+FEFF", "/memories/\ufeffnotes.md"),
    # Unicode look-alikes of / and .
    ("division slash U+2215", "/memories\u2215..\u2215secret.txt"),
    ("fraction slash U+2044", "/memories/..\u2044secret.txt"),
    ("big solidus U+29F8", "/memories/..\u29f8secret.txt"),
    ("fullwidth solidus U+FF0F", "/memories\uff0f..\uff0fsecret.txt"),
    ("one dot leader U+2024", "/memories/\u2024\u2024/secret.txt"),
    ("two dot leader U+2025", "/memories/\u2025/secret.txt"),
    ("fullwidth full stop U+FF0E", "/memories/\uff0e\uff0e/secret.txt"),
    ("small full stop U+FE52", "/memories/\ufe52\ufe52/secret.txt"),
    ("encoded fullwidth solidus", "/memories%EF%BC%8F..%EF%BC%8Fsecret.txt"),
    ("encoded division slash", "/memories/..%E2%88%95secret.txt"),
    # length
    ("over-long name", "/memories/" + "a" * 300 + ".md"),
    ("over-long path", "/memories/" + "d/" * 200 + "x.md"),
    ("over-long before decoding", "/memories/" + "%41" * 100 + ".md"),
    # symlinks planted by the audit
    ("symlinked directory pointing out", "/memories/link_dir/secret.txt"),
    ("symlinked file pointing out", "/memories/link_file.md"),
    ("dangling symlink pointing out", "/memories/dangling.md"),
)
"""``(label, path)`` pairs; every path must be refused by a safe memory tool."""
