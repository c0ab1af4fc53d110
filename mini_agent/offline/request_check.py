"""What the offline API refuses before it serves a request: the body's 400s and the 404 model.

:func:`request_refusal` runs the API's checks on a ``/v1/messages`` or ``count_tokens`` body in
the order the offline API applies them: the top-level rules
(:func:`mini_agent.core.request_rules.request_problem`, with the model's limits when the kit
knows the model), the types of ``messages``, ``system`` and ``tools``, the shapes
(:func:`mini_agent.offline.wire_shapes.shape_problem`), the ``output_config.format`` of
structured outputs (:func:`mini_agent.offline.forced_output.output_format_problem`),
``inference_geo`` on a model older than Opus 4.6 (:func:`inference_geo_problem`), then the
conversation
(``validate_messages`` with the automatic ``cache_control`` placed, ``role: "system"`` messages
left out and consecutive same-role turns combined, as the API combines them) and the tools a
history's ``tool_use`` blocks need. :func:`not_served` tells the 404 of a model the API no
longer (or never) serves, checked after the body. Pure: no IO, the body never mutated. Used
by :class:`mini_agent.offline.transport.OfflineTransport`, which re-exports :func:`not_served`.

Source: Messages API reference and errors docs (400 ``invalid_request_error`` before the
model lookup's 404 ``not_found_error``, message ``"model: <id>"``); models overview
(retired models); data residency docs ("The inference_geo parameter is supported on Claude
Opus 4.6 and all subsequent models ... Requests with inference_geo on legacy models return
a 400 error"; Claude Platform on AWS names Opus 4.5, Sonnet 4.5 and Haiku 4.5).
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

from mini_agent.core.messages import MessageValidationError, validate_messages
from mini_agent.core.models import UnknownModelError, model_spec
from mini_agent.core.request_rules import (combine_consecutive_turns,
                                           place_automatic_cache_control, request_problem)
from mini_agent.core.system_messages import without_system_messages
from mini_agent.core.wire_rules import tools_required_problem
from mini_agent.offline.forced_output import output_format_problem
from mini_agent.offline.wire_shapes import shape_problem

__all__ = ["MAX_BODY_DEPTH", "body_depth", "inference_geo_problem", "not_served",
           "request_refusal"]

MAX_BODY_DEPTH = 256
"""Deepest nesting of JSON arrays and objects the offline API reads in a request body; a
deeper body is a 400 ("Request body nested too deeply"). The API documents no such limit; the
offline one has it so that Python's recursion limit (which depends on how deep the caller's
own stack already is) never decides, differently from run to run, whether a body is served."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def body_depth(raw: bytes) -> int:
    """Measure the deepest nesting of arrays and objects in a JSON text, without recursion.

    Args:
        raw: a JSON text (a request's body), already known to parse.

    Returns:
        The nesting depth: 0 for a scalar, 1 for ``{}`` or ``[1]``, 2 for ``{"a": []}``;
        brackets inside strings do not count.
    """
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(1 if b in (91, 123) else -1 for b in brackets), default=0)


def request_refusal(body: dict[str, Any], *, count_tokens: bool, version: str,
                    betas: tuple[str, ...]) -> str | None:
    """Return the API's 400 message for a malformed request body, or None.

    Args:
        body: the JSON request body (a dict; never mutated).
        count_tokens: True for ``/v1/messages/count_tokens`` (no ``max_tokens``, fewer fields).
        version: the request's ``anthropic-version`` header.
        betas: the request's ``anthropic-beta`` flags.

    Returns:
        The first refusal's message (``"<field path>: <what is wrong>"`` or the API's own
        wording), or None when the body passes; an unknown model id passes here (its 404
        comes from :func:`not_served` once the body is valid).
    """
    if body.get("model") is not None and not isinstance(body["model"], str):
        return "model: Input should be a valid string"
    try:
        limits = model_spec(body.get("model") or "")
    except UnknownModelError:
        limits = None   # an unknown id passes here and is a 404 once the body is valid
    problem = request_problem(body, count_tokens=count_tokens, api_version=version,
                              betas=betas, limits=limits)
    if problem:
        return problem
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: Field required"
    system = body.get("system")
    if system is not None and not isinstance(system, str) and not (
            isinstance(system, list) and all(isinstance(b, dict) for b in system)):
        return "system: Input should be a valid string or a list of text blocks"
    tools = body.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools)):
        return "tools: Input should be a list of tool objects, each with a name"
    problem = shape_problem(body) or output_format_problem(body) or inference_geo_problem(body)
    if problem:
        return problem
    placed = place_automatic_cache_control(body)
    try:   # system messages passed request_problem; the rest is checked without them
        validate_messages(combine_consecutive_turns(without_system_messages(
            placed["messages"])),
                          system=placed.get("system"), tools=placed.get("tools"))
    except MessageValidationError as exc:
        return str(exc)
    missing = tools_required_problem(messages, body.get("tools"))
    return missing[1] if missing else None


NO_INFERENCE_GEO_MODELS = frozenset({
    "claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1",
    "claude-opus-4", "claude-sonnet-4", "claude-haiku-3-5", "claude-3-5-haiku"})
"""Models released before Claude Opus 4.6, which refuse ``inference_geo`` (data residency
docs: "Older models released before Opus 4.6 do not support the parameter")."""

INFERENCE_GEO_REFUSED = "inference_geo: is not supported on this model"
"""ASSUMPTION (the docs give no wording): the 400 message for ``inference_geo`` on an older
model."""


def inference_geo_problem(body: dict[str, Any]) -> str | None:
    """Return the API's 400 message for ``inference_geo`` on a model that does not take it.

    Args:
        body: the request body (``model`` already a string or absent; never mutated).

    Returns:
        :data:`INFERENCE_GEO_REFUSED` when the body sets ``inference_geo`` (any value,
        ``"global"`` too) for a model of :data:`NO_INFERENCE_GEO_MODELS` (a snapshot date
        after the id counts as that model), else None.

    >>> inference_geo_problem({"model": "claude-haiku-4-5-20251001", "inference_geo": "us"})
    'inference_geo: is not supported on this model'
    """
    model = body.get("model")
    if body.get("inference_geo") is None or not isinstance(model, str):
        return None
    base = model[:-9] if len(model) > 9 and model[-9] == "-" and model[-8:].isdigit() \
        else model
    return INFERENCE_GEO_REFUSED if base in NO_INFERENCE_GEO_MODELS else None


def not_served(model: str) -> bool:
    """Tell whether the API answers a request for ``model`` with a 404, as it does today.

    Args:
        model: the request's ``model`` (already checked to be a string).

    Returns:
        True for an id the model table lacks or marks ``retired`` (its end-of-life date has
        passed): the API's ``not_found_error``, message ``"model: <id>"``. The check comes after
        the body's 400 checks, as the API validates the body before it looks the model up.
    """
    try:
        return model_spec(model).retired
    except UnknownModelError:
        return True
