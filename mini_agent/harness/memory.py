"""``MemoryTool``: a hardened backend for Claude's memory tool, on the SDK's own filesystem tool.

Claude's memory tool (``{"type": "memory_20250818", "name": "memory"}``) runs on the client:
the model sends ``view``, ``create``, ``str_replace``, ``insert``, ``delete`` or ``rename`` on
paths under ``/memories`` and the application carries them out. :class:`MemoryTool` subclasses
the SDK's ``BetaLocalFilesystemMemoryTool`` (anthropic >= 2.14), so
``MemoryTool(base_dir).call({"command": "view", "path": "/memories"})`` is exactly what the
SDK's tool runner (``client.beta.messages.tool_runner(tools=[tool])``) calls, and a refusal is
the SDK's ``ToolError``, which the runner returns as a ``tool_result`` with ``is_error: true``.
:meth:`MemoryTool.kit_tool` wraps the same object for the kit's own ``Agent``.

What it adds to the SDK's tool, as the chapter asks:

* every path goes through :func:`mini_agent.core.memory_paths.validate_memory_path` first
  (decoding, look-alikes, backslashes, NUL, the ``/memoriesX`` prefix trick, length), then
  through the SDK's own ``_validate_path`` (resolution and symlinks pointing out); once
  decoded it is put in Unicode form NFC, so ``café`` with a combining accent (NFD, as macOS
  often sends it) and with a precomposed one name one file (one kept in NFD stays reachable);
* a size cap per file and in total (bytes, checked before anything is written);
* secrets redacted before they are written (:func:`mini_agent.core.secrets.redact_secrets`);
* provenance and time for every file (who wrote it, created, updated, last used), kept in
  ``<base_dir>/memory_meta.json``, outside the ``/memories`` tree the model can reach;
* files unused for ``expiry_seconds`` are removed (:meth:`MemoryTool.expire`, also run before
  each command), with the time read from an injectable clock.

Files live in ``<base_dir>/memories/`` (the SDK's layout), a real folder: a symbolic link or
a file there is refused (:mod:`mini_agent.harness.memory_root`), so nothing is ever read,
written, renamed or deleted outside ``base_dir``. Taught in ``notebooks/09_memory_and_subagents.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (memory tool: normalise paths, strip secrets, cap file size,
expire unused files); Anthropic memory tool docs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from anthropic.lib.tools import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool

from mini_agent.harness.clock import Clock, SystemClock
from mini_agent.harness.memory_fields import TEXT_FIELDS, check_fields, clock_seconds
from mini_agent.harness.memory_root import check_root
from mini_agent.core.memory_lifecycle import check_seconds
from mini_agent.core.memory_paths import (MEMORY_ROOT, MemoryPathError, validate_memory_path,
                                          nfc_memory_path as _nfc)
from mini_agent.core.secrets import redact_secrets
from mini_agent.harness.result_text import encodable_text
from mini_agent.harness.tools import Tool
from mini_agent.harness.tools import ToolError as KitToolError


DEFAULT_MAX_FILE_BYTES = 32_000
"""Largest memory file in UTF-8 bytes (about 8,000 approx tokens)."""

DEFAULT_MAX_TOTAL_BYTES = 256_000
"""Largest total of all memory files in bytes."""

DEFAULT_EXPIRY_SECONDS = 30 * 24 * 3600.0
"""A file not used (viewed or written) for this many seconds is removed: 30 days."""

META_FILE = "memory_meta.json"
"""Provenance file beside (not inside) the memories directory."""

MEMORY_TOOL_PARAM = {"type": "memory_20250818", "name": "memory"}
"""The tool definition the API expects (the memory tool has no input_schema of ours)."""



class MemoryTool(BetaLocalFilesystemMemoryTool):
    """The memory tool's backend: the SDK's filesystem tool with the chapter's safeguards.

    Args:
        base_dir: directory that holds everything (created if missing); files go to
            ``<base_dir>/memories``, provenance to ``<base_dir>/memory_meta.json``.
        max_file_bytes: cap per file in UTF-8 bytes.
        max_total_bytes: cap on the sum of all files in bytes.
        expiry_seconds: unused files older than this are removed; None keeps them forever.
        clock: time source, ``now()`` in Unix seconds (``ManualClock`` in tests); read once.
        source: provenance recorded for writes made through ``call`` (default "model").
    Attributes:
        redactions: ``{kind: count}`` of secrets removed so far.
        refusals: messages of refused commands, in order.
        expired: virtual paths removed by expiry, in order.

    Raises:
        ValueError: ``max_file_bytes`` < 1 or ``max_total_bytes`` < ``max_file_bytes``;
            ``<base_dir>/memories`` is a symbolic link or not a folder (left as it is); or
            ``clock.now()`` is not seconds (a ``datetime``): named, nothing created.
        TypeError: ``clock`` has no ``now()`` (see :func:`~.memory_fields.clock_seconds`).
    """

    def __init__(self, base_dir: str | os.PathLike[str], *,
                 max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 expiry_seconds: float | None = DEFAULT_EXPIRY_SECONDS,
                 clock: Clock | None = None, source: str = "model") -> None:
        if max_file_bytes < 1 or max_total_bytes < max_file_bytes:
            raise ValueError("need 1 <= max_file_bytes <= max_total_bytes")
        clock = clock or SystemClock()
        clock_seconds(clock)   # before anything is made: a bad clock loses nothing
        Path(base_dir).mkdir(parents=True, exist_ok=True)
        try:  # before the SDK makes the folder: a dangling link is not followed
            check_root(Path(base_dir) / "memories")
        except ToolError as exc:
            raise ValueError(str(exc)) from None
        super().__init__(str(base_dir))
        self.base_dir = Path(base_dir).resolve()
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.expiry_seconds = expiry_seconds
        self.clock = clock
        self.source = source
        self.redactions: dict[str, int] = {}
        self.refusals: list[str] = []
        self.expired: list[str] = []

    # ------------------------------------------------------------------ paths
    def _validate_path(self, path: str) -> Path:
        """Kit checks on the text, then the SDK's checks on the disk; ToolError on refusal."""
        try:
            virtual = _nfc(sent := validate_memory_path(path))   # NFC once decoded too
        except MemoryPathError as exc:
            raise ToolError(str(exc)) from None
        if sent != virtual and [os.path.lexists(self.memory_root / p[len(MEMORY_ROOT) + 1:])
                                for p in (virtual, sent)] == [False, True]:
            virtual = sent   # a file kept in another form before paths were put in NFC
        try:
            full = super()._validate_path(virtual)
        except ToolError as exc:
            raise ToolError(f"refused memory path {path!r}: {exc}. Use a path under "
                            f"{MEMORY_ROOT}/ that is not a link leading out of it") from None
        root = self.memory_root.resolve()
        if full != root and not full.is_relative_to(root):  # belt and braces
            raise ToolError(f"refused memory path {path!r}: it resolves outside {MEMORY_ROOT}")
        return full

    def _virtual(self, full: Path) -> str:
        rel = full.relative_to(self.memory_root.resolve()).as_posix()
        return MEMORY_ROOT if rel == "." else f"{MEMORY_ROOT}/{rel}"

    # ------------------------------------------------------------------ the one entry point
    def execute(self, command: Any) -> Any:
        """Run one command (the SDK's ``call`` comes here) with caps, redaction and provenance.

        Expiry (:meth:`expire`) runs first, once the command's name and fields are checked;
        then secrets are redacted from the text a write carries and the size caps are
        checked. A refused command writes no memory file, but files expired before the
        refusal stay removed.

        Args:
            command: the SDK's parsed memory command (``command.command`` is ``"view"``,
                ``"create"``, ``"str_replace"``, ``"insert"``, ``"delete"`` or ``"rename"``,
                plus that command's fields).

        Returns:
            The SDK tool's result text, with ``(N secret(s) were redacted before writing.)``
            appended when secrets were removed.

        Raises:
            ToolError: the SDK's, with an actionable message, for every refusal (unknown
                command, missing field, refused path, a cap passed); the SDK's tool runner
                turns it into an ``is_error`` tool_result. Also appended to ``refusals``.
        """
        found: dict[str, int] = {}
        try:
            check_fields(command)   # the command's name and fields
            check_root(self.memory_root)
            now = clock_seconds(self.clock)   # before anything is written
            self.expire(now)
            text_field = TEXT_FIELDS.get(command.command)
            if text_field is not None:
                text, found = redact_secrets(str(getattr(command, text_field) or ""))
                for kind, n in found.items():
                    self.redactions[kind] = self.redactions.get(kind, 0) + n
                command = command.model_copy(update={text_field: text})
                self._check_size(command, text)
            result = self._run(command)
        except ToolError as exc:
            self.refusals.append(str(exc))
            raise
        self._record(command, now)
        if isinstance(result, str):   # a non-UTF-8 file name in a listing: U+FFFD
            result = encodable_text(result)
        if found:
            result = f"{result} ({sum(found.values())} secret(s) were redacted before writing.)"
        return result

    def _run(self, command: Any) -> Any:
        """Run the SDK's command; a file it cannot read or a failed file operation is a ToolError.

        A regular file over ``max_file_bytes`` (put there by hand) is not viewed; a file that
        is not UTF-8 is named; an ``OSError`` (a file where a folder should be, a folder
        renamed into itself, a name too long for the disk) is reported with the virtual
        paths only, never the host's.
        """
        paths = [getattr(command, f) for f in ("path", "old_path", "new_path")
                 if getattr(command, f, None) is not None]
        try:
            if command.command == "view":
                full = self._validate_path(command.path)
                size = full.stat().st_size if full.is_file() else 0
                if size > self.max_file_bytes:
                    raise ToolError(f"{command.path} is {size:,} bytes, over the "
                                    f"{self.max_file_bytes:,}-byte cap on a memory file (it "
                                    "was not written by this tool); delete it or ask the user "
                                    "to shorten it")
            return super().execute(command)
        except UnicodeDecodeError as exc:
            raise ToolError(f"{command.path} is not UTF-8 text (byte {exc.start}); the memory "
                            "tool reads UTF-8 only. Delete it, or rename it out of the "
                            "way") from None
        except OSError as exc:
            raise ToolError(f"{command.command} {' -> '.join(paths)} failed: "
                            f"{exc.strerror or type(exc).__name__}. Check that every folder on "
                            "the path is a folder (not a file), that a folder is not moved "
                            "into itself, and that names are short") from None

    def _check_size(self, command: Any, text: str) -> None:
        """Refuse a write whose file or total would pass the caps (bytes, upper bound)."""
        full = self._validate_path(command.path)
        current = full.stat().st_size if full.is_file() else 0
        added = len(text.encode("utf-8"))
        if command.command == "str_replace":
            new_size = current - len(str(command.old_str).encode("utf-8")) + added
        else:
            new_size = current + added + (1 if command.command == "insert" else 0)
        if new_size > self.max_file_bytes:
            raise ToolError(f"{command.path} would be {new_size:,} bytes; the cap per memory "
                            f"file is {self.max_file_bytes:,}. Keep memories short: summarise, "
                            "or split the content into several files")
        total = self.total_bytes() - current + new_size
        if total > self.max_total_bytes:
            raise ToolError(f"memory would hold {total:,} bytes; the cap is "
                            f"{self.max_total_bytes:,}. Delete or shorten memories you no "
                            "longer need first (view /memories to see their sizes)")

    # ------------------------------------------------------------------ provenance and expiry
    def total_bytes(self) -> int:
        """Measure what the memory files hold.

        Returns:
            The sum of the sizes of all memory files in bytes (symlinks not counted).
        """
        return sum(p.stat().st_size for p in self.memory_root.rglob("*")
                   if p.is_file() and not p.is_symlink())

    def metadata(self) -> dict[str, dict[str, Any]]:
        """Read the provenance file.

        Returns:
            ``{virtual_path: {"source", "created_at", "updated_at"?, "last_used_at"}}``, times
            in seconds from the clock; ``updated_at`` only once the file was written; ``{}``
            when there is no provenance file yet.

        Raises:
            ToolError: the file is not JSON or not of that shape (every entry an object with
                a numeric ``last_used_at``); it is left as it is, nothing is overwritten.
        """
        meta_path = self.base_dir / META_FILE
        if not meta_path.exists():
            return {}
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError as exc:  # JSON or UTF-8
            meta, problem = None, str(exc)
        else:
            problem = "not an object of {virtual path: entry}"
        if isinstance(meta, dict) and all(
                isinstance(v, dict) and isinstance(v.get("last_used_at"), (int, float))
                and not isinstance(v.get("last_used_at"), bool) for v in meta.values()):
            return meta
        raise ToolError(f"{meta_path} is not a provenance file ({problem}); nothing was "
                        "changed. Move it away (the memories keep their files) and retry")

    def _save_metadata(self, meta: dict[str, dict[str, Any]]) -> None:
        tmp = self.base_dir / (META_FILE + ".tmp")
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.base_dir / META_FILE)

    def _record(self, command: Any, now: float) -> None:
        meta = self.metadata()
        if command.command == "rename":
            old = _nfc(validate_memory_path(command.old_path))
            new = _nfc(validate_memory_path(command.new_path))
            for key in [k for k in meta if k == old or k.startswith(old + "/")]:
                meta[new + key[len(old):]] = {**meta.pop(key), "last_used_at": now}
        elif command.command == "delete":
            gone = _nfc(validate_memory_path(command.path))
            meta = {k: v for k, v in meta.items() if k != gone and not k.startswith(gone + "/")}
        else:
            path = _nfc(validate_memory_path(command.path))
            if not (self.memory_root.resolve() / path[len(MEMORY_ROOT) + 1:]).is_file() \
                    or path == MEMORY_ROOT:
                return
            entry = meta.get(path) or {"source": self.source, "created_at": now}
            entry["last_used_at"] = now
            if command.command != "view":
                entry["updated_at"] = now
                entry["source"] = self.source if command.command == "create" else entry["source"]
            meta[path] = entry
        self._save_metadata(meta)

    def expire(self, now: float | None = None) -> list[str]:
        """Remove files unused (not viewed or written) for more than ``expiry_seconds``.

        A file without provenance (put there by hand) counts as used when first seen: it is
        recorded with source ``"unknown"``. Does nothing when ``expiry_seconds`` is None.

        Args:
            now: the time in seconds (default: the clock's ``now()``).

        Returns:
            The virtual paths removed by this call (also appended to ``expired``).

        Raises:
            ToolError: the memories folder became a symbolic link or a file; nothing is
                removed.
            ValueError: ``now``, or the clock's time, is not seconds (a ``datetime``).
        """
        if self.expiry_seconds is None:
            return []
        check_root(self.memory_root)
        now = clock_seconds(self.clock) if now is None else check_seconds(now, "now")
        meta = self.metadata()
        root = self.memory_root.resolve()
        removed = []
        for file in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            virtual = self._virtual(file)
            entry = meta.setdefault(virtual, {"source": "unknown", "created_at": now,
                                              "last_used_at": now})
            if now - entry["last_used_at"] > self.expiry_seconds:
                file.unlink()
                meta.pop(virtual)
                removed.append(virtual)
        if removed or meta != self.metadata():
            self._save_metadata(meta)
        self.expired += removed
        return removed

    def clear_all_memory(self) -> str:
        """Remove every memory file and the provenance file; recreate an empty memories folder.

        Returns:
            ``"All memory cleared"``.

        Raises:
            ToolError: the memories folder became a symbolic link or a file; nothing is
                removed.
        """
        if self.memory_root.exists() or self.memory_root.is_symlink():
            check_root(self.memory_root)
        (self.base_dir / META_FILE).unlink(missing_ok=True)
        if self.memory_root.exists():
            shutil.rmtree(self.memory_root)
        self.memory_root.mkdir(mode=0o700)
        return "All memory cleared"

    # ------------------------------------------------------------------ the kit's agent
    def kit_tool(self) -> "MemoryKitTool":
        """Wrap this tool for ``mini_agent``'s ``Agent`` (``tools={"memory": t.kit_tool()}``).

        Returns:
            A :class:`MemoryKitTool` over this object.
        """
        return MemoryKitTool(self)


class MemoryKitTool(Tool):
    """The memory tool as a kit :class:`~mini_agent.harness.tools.Tool`: same name, same definition.

    ``definition()`` is ``{"type": "memory_20250818", "name": "memory"}``; ``run(input)``
    calls ``memory.call(input)`` and turns the SDK's ToolError into the kit's. A "write" tool.

    Args:
        memory: the :class:`MemoryTool` that does the work (also kept as ``.memory``).
    """

    def __init__(self, memory: MemoryTool) -> None:
        def run(input: dict[str, Any]) -> str:
            try:
                return str(memory.call(input))
            except ToolError as exc:
                raise KitToolError(str(exc)) from None
        super().__init__("memory", "Claude's memory tool (client side).",
                         {"type": "object", "properties": {"command": {"type": "string"}},
                          "required": ["command"]}, "write", run)
        object.__setattr__(self, "memory", memory)

    def definition(self) -> dict[str, Any]:
        """Give the memory tool's API definition.

        Returns:
            A copy of ``MEMORY_TOOL_PARAM``: ``{"type": "memory_20250818", "name": "memory"}``.
        """
        return dict(MEMORY_TOOL_PARAM)
