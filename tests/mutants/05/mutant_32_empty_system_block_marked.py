"""MUTANT (wrong on purpose): With no caller marker, the last system block is marked even when it is whitespace-only; exposed by system ['Rules.', ' \\n'].

Exercise 05: fingerprint requests, detect cache breaks, place breakpoints
(notebooks/05_prompt_caching.ipynb).

The prompt cache reads the longest prefix (tools -> system -> messages) an earlier request
wrote at a ``cache_control`` breakpoint. A break shows up as a drop in
``usage.cache_read_input_tokens``; the detector of seed 002 (see docs/sources.md) says why by
comparing fingerprints of the request with the previous one.

* 05.1 ``tools_fingerprint(tools)``: SHA-256 hex of the CANONICAL JSON of the tools: sorted
  by name, keys sorted at every level, no ``cache_control`` keys. The same tool set written in
  another order must give the same fingerprint.
* 05.2 ``system_fingerprint(system)``: SHA-256 hex of the STATIC part of a system prompt
  string (before the first ``DYNAMIC_BOUNDARY``): the dynamic part (time, cwd) may change
  freely.
* 05.3 ``CacheBreakDetector.check_response(usage)``: a break is a drop in
  ``cache_read_input_tokens`` versus the previous response of MORE than 2,000 tokens AND MORE
  than 5% of the previous read. Causes: "system_prompt_changed", "tools_changed" (both can
  hold, in any order), else "unknown". Always remember this response as the new "previous".
* 05.4 ``place_breakpoints(request)``: return a copy of the request with ``cache_control``
  ``{"type": "ephemeral"}`` on the last tool, at the end of the static system part (the
  caller's own system marker, else the last system block; a whitespace-only block passes it
  back to the last non-empty one before it), and on the last non-empty block of the last
  message: never more than 4 markers in total, never on an empty or whitespace-only text
  block (a 400), tools kept in their order, input not mutated.

Grade with ``mini-agent grade 05``; the same checks pass on the kit's own functions
(``from mini_agent import tools_fingerprint, system_fingerprint, CacheBreakDetector,
place_breakpoints``), which do more on request (``finer_causes``, ``canonical``, ``anchors``).
"""

from __future__ import annotations

import copy
import hashlib
import json

from mini_agent import split_system_prompt
from mini_agent.core.cache import DYNAMIC_BOUNDARY

MAX_BREAKPOINTS = 4


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tools_fingerprint(tools: list[dict]) -> str:
    """Return the SHA-256 hex digest of the canonical JSON of ``tools``.

    Canonical: tools sorted by ``"name"``, ``json.dumps(..., sort_keys=True)``, every
    ``cache_control`` key removed. Example: ``tools_fingerprint([a, b]) ==
    tools_fingerprint([b, a])``.
    """
    # BEGIN SOLUTION
    def strip(obj):
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if k != "cache_control"}
        if isinstance(obj, list):
            return [strip(v) for v in obj]
        return obj
    ordered = sorted(tools, key=lambda t: t["name"])
    return _sha256(json.dumps(strip(ordered), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False))
    # END SOLUTION


def system_fingerprint(system: str) -> str:
    """Return the SHA-256 hex digest of the static part of ``system``.

    The static part is the text before the first ``DYNAMIC_BOUNDARY`` exactly as it is
    (nothing trimmed), the whole string when there is none; hashed as UTF-8 bytes.
    Example: ``system_fingerprint("Rules." + DYNAMIC_BOUNDARY + "now: 10:00") ==
    hashlib.sha256(b"Rules.").hexdigest()``.
    """
    # BEGIN SOLUTION
    return _sha256(split_system_prompt(system)[0])
    # END SOLUTION


class CacheBreakDetector:
    """Seed 002's detector: ``record_request`` before sending, ``check_response`` after.

    Attributes: last: ``{"system", "tools", "read"}`` of the previous response or None;
    pending: fingerprints of the request just recorded, or None.
    """

    MIN_DROP_TOKENS = 2_000
    MIN_DROP_RATIO = 0.05

    def __init__(self) -> None:
        self.last: dict | None = None
        self.pending: dict | None = None

    def record_request(self, system: str, tools: list[dict]) -> None:
        """Remember the fingerprints of the request about to be sent."""
        self.pending = {"system": system_fingerprint(system), "tools": tools_fingerprint(tools)}

    def check_response(self, usage: dict) -> dict | None:
        """Return ``{"dropped_tokens": int, "causes": [str, ...]}`` for a break, else None.

        Args: usage: ``{"cache_read_input_tokens": int, ...}``. Returns None when nothing
        was recorded since the last check, for the first response, or when the drop is not
        a break. ``causes`` lists each cause once, in any order.
        """
        # BEGIN SOLUTION
        if self.pending is None:
            return None
        state = dict(self.pending, read=usage.get("cache_read_input_tokens", 0))
        self.pending = None
        report = None
        if self.last is not None:
            drop = self.last["read"] - state["read"]
            ratio = drop / self.last["read"] if self.last["read"] > 0 else 0.0
            if drop > self.MIN_DROP_TOKENS and ratio > self.MIN_DROP_RATIO:
                causes = []
                if self.last["system"] != state["system"]:
                    causes.append("system_prompt_changed")
                if self.last["tools"] != state["tools"]:
                    causes.append("tools_changed")
                report = {"dropped_tokens": drop, "causes": causes or ["unknown"]}
        self.last = state
        return report
        # END SOLUTION


def place_breakpoints(request: dict) -> dict:
    """Return a copy of ``request`` with at most 4 ``cache_control`` breakpoints.

    Shapes: request ``{"tools"?: [tool], "system"?: [text block], "messages": [MessageParam]}``
    (system already a list of blocks; message content may be a string). Marks, each
    ``{"type": "ephemeral"}``: the last tool of the list as given (tools keep their order);
    the end of the static system part: a system block the caller already marked keeps its
    marker (the last one, if several: the blocks after it are dynamic and must not be
    cached), else the last system block gets one; the last non-empty block of the last
    message (text with non-whitespace text, or any non-text block except thinking; a
    tool_result takes the marker itself, not its content; non-empty string content becomes
    one text block). Never on an empty or whitespace-only text block (the API answers 400
    "cache_control cannot be set for empty text blocks"): the system marker goes on the
    last non-empty block at or before the end of the static part (never after it), and
    empty string content stays as it is. Every other existing marker is removed; nothing
    else changes. Never mutates ``request``.
    """
    # BEGIN SOLUTION
    out = copy.deepcopy(request)
    marker = {"type": "ephemeral"}
    for tool in out.get("tools") or []:
        tool.pop("cache_control", None)
    system = out.get("system") or []
    own = [i for i, block in enumerate(system) if "cache_control" in block]
    kept = own[-1] if own else None  # the caller's marker: the end of the static part
    for i, block in enumerate(system):
        if i != kept:
            block.pop("cache_control", None)
    for message in out.get("messages") or []:
        if isinstance(message["content"], list):
            for block in message["content"]:
                block.pop("cache_control", None)
    if out.get("tools"):
        out["tools"][-1]["cache_control"] = dict(marker)
    end = kept if kept is not None else len(system) - 1   # the end of the static part
    if system:
        system[end].pop("cache_control", None)
        for block in reversed(system[:end + 1]):   # never after it: that part is dynamic
            block["cache_control"] = dict(marker)
            break
    if out.get("messages"):
        last = out["messages"][-1]
        if isinstance(last["content"], str):
            if last["content"].strip():
                last["content"] = [{"type": "text", "text": last["content"],
                                    "cache_control": dict(marker)}]
        else:
            for block in reversed(last["content"]):
                kind = block.get("type")
                if kind in ("thinking", "redacted_thinking"):
                    continue
                if kind != "text" or block.get("text", "").strip():
                    block["cache_control"] = dict(marker)
                    break
    return out
    # END SOLUTION


__all__ = ["DYNAMIC_BOUNDARY", "MAX_BREAKPOINTS", "CacheBreakDetector", "place_breakpoints",
           "system_fingerprint", "tools_fingerprint"]
