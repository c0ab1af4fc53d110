"""The JSON Schema subset of structured outputs: what the API refuses, what a value must match.

Structured outputs (``output_config.format: {"type": "json_schema", "schema": {...}}``)
compile the schema into a grammar, so the API takes a subset of JSON Schema and refuses the
rest with a 400. :func:`schema_problem` returns that refusal: an object without
``"additionalProperties": false``, a number or integer with ``minimum`` / ``maximum`` /
``exclusiveMinimum`` / ``exclusiveMaximum`` / ``multipleOf``, a string with ``minLength`` /
``maxLength`` or an unknown ``format``, an array with ``minItems`` other than 0 or 1,
``maxItems`` or ``uniqueItems``, a ``$ref`` outside the schema or pointing at nothing in it,
a recursive ``$ref``, ``$defs`` / ``definitions`` that are not an object.
:func:`is_valid` tells whether a value matches a schema of that subset (types, ``enum``,
``const``, ``anyOf`` / ``oneOf`` / ``allOf``, ``properties`` / ``required`` / closed
objects, ``items`` / ``minItems``, local ``$ref`` with JSON Pointer escapes);
:func:`example_value` builds the smallest value that matches one, which is what the offline
API answers with when its brain's text is not valid JSON for the schema (the real model is
constrained to the grammar). Pure: no IO, inputs never mutated. Used by
:mod:`mini_agent.offline.forced_output`.

Source: structured outputs docs, "JSON Schema limitations" (supported: basic types, enum,
const, anyOf, allOf, local $ref / $defs, required, ``additionalProperties: false``, string
formats, ``minItems`` 0 or 1; not supported: recursive schemas, numerical constraints,
string length constraints, array constraints beyond ``minItems`` 0/1, external ``$ref``;
"If you use an unsupported feature, you'll receive a 400 error with details", quoted in
laravel/ai#715); the SDK's ``lib/_parse/_transform.py`` (``transform_schema`` keeps exactly
that subset, ``SupportedStringFormats``); the API's refusals as quoted in public reports:
"output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly
set to false" (several), "For 'integer' type, property 'minimum' is not supported"
(agentjido/req_llm#302), "For 'integer' type, properties maximum, minimum are not
supported" (BerriAI/litellm#21016), "For 'array' type, 'minItems' values other than 0 or 1
are not supported" (ghostlobster/memorize-everything#93). ASSUMPTIONS (wording not
documented): the string ``format``, external, dangling and recursive ``$ref`` and ``$defs``
refusals; the length and ``maxItems`` / ``uniqueItems`` refusals worded like the numeric
ones.
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import unquote

__all__ = ["STRING_FORMATS", "example_value", "is_valid", "schema_problem"]

STRING_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname",
                            "uri", "ipv4", "ipv6", "uuid"})
"""String ``format`` values structured outputs take (SDK ``SupportedStringFormats``)."""

UNSUPPORTED = {"integer": ("exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum",
                           "multipleOf"),
               "number": ("exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum",
                          "multipleOf"),
               "string": ("maxLength", "minLength"),
               "array": ("maxItems", "uniqueItems")}
"""Schema ``type`` -> the keywords the API refuses on it."""

_EXAMPLE_STRINGS = {"date-time": "2026-01-01T00:00:00Z", "time": "00:00:00",
                    "date": "2026-01-01", "duration": "P1D", "email": "a@example.com",
                    "hostname": "example.com", "uri": "https://example.com",
                    "ipv4": "127.0.0.1", "ipv6": "::1",
                    "uuid": "00000000-0000-0000-0000-000000000000"}


def schema_problem(schema: Any, where: str = "output_config.format.schema") -> str | None:
    """Return the API's 400 message for the first unsupported feature of ``schema``, or None.

    Args:
        schema: the JSON schema (a dict; anything else is refused).
        where: the field path the message starts with.

    Returns:
        ``"<where>: <what is not supported>"``, or None when the API takes the schema.

    >>> schema_problem({"type": "integer", "minimum": 1})
    "output_config.format.schema: For 'integer' type, property 'minimum' is not supported"
    """
    if not isinstance(schema, Mapping):
        return f"{where}: Input should be a valid dictionary"
    for key in ("definitions", "$defs"):
        if schema.get(key) is not None and not isinstance(schema[key], Mapping):
            return f"{where}.{key}: Input should be a valid dictionary"
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    problem = _node_problem(schema, schema, defs, (), set())
    return f"{where}: {problem}" if problem else None


def _node_problem(node: Any, root: Mapping, defs: Mapping, refs: tuple[str, ...],
                  clean: set[str]) -> str | None:
    """The node's first problem; ``refs`` the chain being followed, ``clean`` the targets
    already checked whole (a target many refs share is checked once, not once per path)."""
    if not isinstance(node, Mapping):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#"):
            return f"External $ref '{ref}' is not supported"
        if ref in refs:
            return "Recursive schemas are not supported"
        if ref in clean:
            return None
        target = _resolve(ref, root)
        if target is None:
            return f"$ref '{ref}' does not resolve to a schema in this one"
        problem = _node_problem(target, root, defs, refs + (ref,), clean)
        if problem is None:
            clean.add(ref)
        return problem
    kinds = node.get("type")
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        problem = _type_problem(node, kind)
        if problem:
            return problem
    children: list[Any] = []
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list):
            children.extend(node[key])
    if isinstance(node.get("properties"), Mapping):
        children.extend(node["properties"].values())
    if isinstance(node.get("items"), Mapping):
        children.append(node["items"])
    if node is root:
        children.extend(defs.values())
    for child in children:
        problem = _node_problem(child, root, defs, refs, clean)
        if problem:
            return problem
    return None


def _type_problem(node: Mapping, kind: Any) -> str | None:
    if kind == "object" and node.get("additionalProperties") is not False:
        return "For 'object' type, 'additionalProperties' must be explicitly set to false"
    if kind == "array" and node.get("minItems") not in (None, 0, 1):
        return "For 'array' type, 'minItems' values other than 0 or 1 are not supported"
    if kind == "string" and node.get("format") is not None \
            and node["format"] not in STRING_FORMATS:
        return f"For 'string' type, format '{node['format']}' is not supported"
    found = sorted(k for k in UNSUPPORTED.get(kind, ()) if k in node)
    if len(found) == 1:
        return f"For '{kind}' type, property '{found[0]}' is not supported"
    if found:
        return f"For '{kind}' type, properties {', '.join(found)} are not supported"
    return None


def _resolve(ref: str, root: Mapping) -> Any:
    """The local schema ``#/a/b`` points at (JSON Pointer: ``~1`` is ``/``, ``~0`` ``~``)."""
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/") if ref != "#" else []:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def is_valid(value: Any, schema: Any, root: Any = None) -> bool:
    """Tell whether ``value`` matches ``schema`` (the structured-outputs subset).

    Args:
        value: a parsed JSON value.
        schema: a schema :func:`schema_problem` accepts (keywords outside the subset are
            ignored).
        root: the schema local ``$ref`` resolve against (default: ``schema``).

    Returns:
        True when the value has the schema's type, ``enum`` / ``const``, the ``anyOf`` /
        ``oneOf`` / ``allOf`` branches, the required and no other properties, and array
        items that all match, with at least ``minItems``.

    >>> is_valid({"a": 1}, {"type": "object", "properties": {"a": {"type": "integer"}},
    ...                     "required": ["a"], "additionalProperties": False})
    True
    """
    root = schema if root is None else root
    if not isinstance(schema, Mapping):
        return True
    if isinstance(schema.get("$ref"), str):
        return is_valid(value, _resolve(schema["$ref"], root), root)
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if isinstance(schema.get("enum"), list) and not any(_same(value, e) for e in schema["enum"]):
        return False
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and \
                not any(is_valid(value, s, root) for s in schema[key]):
            return False
    if isinstance(schema.get("allOf"), list) and \
            not all(is_valid(value, s, root) for s in schema["allOf"]):
        return False
    kinds = schema.get("type")
    if kinds is None:
        return True
    return any(_type_valid(value, schema, kind, root)
               for kind in (kinds if isinstance(kinds, list) else [kinds]))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float))
        and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def _type_valid(value: Any, schema: Mapping, kind: str, root: Any) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        if not isinstance(value, list) or len(value) < (schema.get("minItems") or 0):
            return False
        return all(is_valid(v, schema.get("items"), root) for v in value)
    if kind == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties") or {}
        if any(k not in value for k in schema.get("required") or ()):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        return all(is_valid(v, props[k], root) for k, v in value.items() if k in props)
    return False


_BRANCHES = ("anyOf", "oneOf", "allOf")

EXAMPLE_NODES = 1_000_000
"""Values :func:`example_value` builds at most (a ``$ref`` or a branch's choice is not one of
its own). Each adds at least one character, so the answer built before they run out is
longer than any reply (128,000 output tokens, about 512,000 characters): a schema whose
smallest value is bigger (definitions that each name the next twice, 2**30 strings) is cut
by ``max_tokens`` where the real reply would be, and the values past the budget (None) are
never shown."""


def example_value(schema: Any, root: Any = None) -> Any:
    """Build the smallest value that matches ``schema``.

    Args:
        schema: a schema :func:`schema_problem` accepts.
        root: the schema local ``$ref`` resolve against (default: ``schema``).

    Returns:
        The ``const``, else the first ``enum`` value valid for the rest of the schema (the
        first one when none is), else the first ``anyOf`` / ``oneOf``
        branch's example, else by type: ``{}`` with the required properties' examples,
        ``[]`` (one item when ``minItems`` is 1), ``""`` (a sample for a known ``format``),
        0, False or None; None where a ``$ref`` would enter a schema its own expansion is
        already inside (a tool's ``input_schema`` may refer to itself), and for every value
        past :data:`EXAMPLE_NODES`.

    >>> example_value({"type": "object", "properties": {"n": {"type": "integer"},
    ...                "tag": {"enum": ["a", "b"]}}, "required": ["n", "tag"],
    ...                "additionalProperties": False})
    {'n': 0, 'tag': 'a'}
    """
    return _example(schema, schema if root is None else root, (), [EXAMPLE_NODES])


def _example(schema: Any, root: Any, refs: tuple[str, ...], left: list[int]) -> Any:
    """:func:`example_value` with the ``$ref`` chain being expanded (a repeat gives None)
    and the values it may still build (``left[0]``; None once they are spent)."""
    if not isinstance(schema, Mapping) or left[0] <= 0:
        return None
    if isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        return None if ref in refs else _example(_resolve(ref, root), root, refs + (ref,), left)
    if "const" in schema or (isinstance(schema.get("enum"), list) and schema["enum"]) or \
            not any(isinstance(schema.get(k), list) and schema[k] for k in _BRANCHES):
        left[0] -= 1   # a value of its own, not a branch's: at least one character
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        rest = {k: v for k, v in schema.items() if k != "enum"}   # the type, say, as well
        return next((e for e in schema["enum"] if is_valid(e, rest, root)), schema["enum"][0])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _example(schema[key][0], root, refs, left)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part_value = _example(part, root, refs, left)
            if not isinstance(part_value, dict):
                return part_value
            merged.update(part_value)
        return merged
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {k: _example(props.get(k), root, refs, left) for k in schema.get("required") or ()}
    if kind == "array":
        item = _example(schema.get("items"), root, refs, left)
        return [item] if schema.get("minItems") == 1 else []
    if kind == "string":
        return _EXAMPLE_STRINGS.get(schema.get("format"), "")
    return {"integer": 0, "number": 0, "boolean": False}.get(kind)
