"""How fast is masking? ``mask_old_observations`` + ``approx_tokens`` vs ``json.dumps``.

Builds a deterministic history of 5,000 messages (~20 MB: a user task, then assistant
tool_use turns answered by multi-line tool_result observations, some with list content and
an image) and times, best of several repeats in the same run:

* ``json.dumps(history)``: the serialisation every request pays anyway (the yardstick);
* the masking path of one request as ``/stats`` runs it: ``approx_tokens(history)``,
  ``mask_old_observations(history, keep=4)``, ``approx_tokens(view)``.

Prints the ratio masking / json.dumps (target: <= 1.0). Not a timed test: run it by hand,
``python benchmarks/masking_speed.py [--messages N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import json
import time

from mini_agent.core.masking import mask_old_observations
from mini_agent.core.messages import validate_messages
from mini_agent.core.tokens import approx_tokens

PNG_HEADER_B64 = "iVBORw0KGgoAAAANSUhEUgAAAyAAAAJYCAIAAAD7A2WvAAAAAA=="  # 800x600 IHDR


def build_history(n_messages: int = 5_000, *, observation_chars: int = 8_000) -> list[dict]:
    """A valid history of ``n_messages`` messages, about ``n_messages * observation_chars / 2``
    characters. Deterministic: the same bytes on every run."""
    line = "    def method_{k}(self, value):  # returns the value scaled by the factor\n"
    history: list[dict] = [{"role": "user", "content": "Fix the failing invoice test."}]
    k = 0
    while len(history) < n_messages:
        k += 1
        tid = f"toolu_{k:06d}"
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}: reading the next module to find the bug."},
            {"type": "tool_use", "id": tid, "name": "read_file",
             "input": {"path": f"src/module_{k}.py"}}]})
        body = "".join(line.format(k=j) for j in range(observation_chars // len(line)))
        if k % 10 == 0:
            content: str | list = [{"type": "text", "text": body},
                                   {"type": "image", "source": {
                                       "type": "base64", "media_type": "image/png",
                                       "data": PNG_HEADER_B64}}]
        else:
            content = body
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": content}]})
    if history[-1]["role"] == "assistant":  # an unanswered tool_use would be invalid
        history.pop()
    return history


def best_seconds(fn, repeats: int) -> float:
    """The fastest of ``repeats`` calls of ``fn()``, in seconds (perf_counter)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def masking_path(history: list[dict]) -> tuple[int, int]:
    """The work of one masked request: estimate, mask, estimate the view."""
    raw = approx_tokens(history)
    view = mask_old_observations(history, keep=4)
    return raw, approx_tokens(view)


def main(argv: list[str] | None = None) -> float:
    """Run the benchmark, print the figures, return the ratio (masking / json.dumps)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    history = build_history(args.messages)
    validate_messages(history)
    size_mb = len(json.dumps(history)) / 1e6
    t_json = best_seconds(lambda: json.dumps(history), args.repeats)
    t_mask = best_seconds(lambda: masking_path(history), args.repeats)
    raw, view = masking_path(history)
    ratio = t_mask / t_json
    print(f"history: {len(history)} messages, {size_mb:.1f} MB of JSON, "
          f"~{raw} tokens raw, ~{view} tokens masked (keep=4)")
    print(f"json.dumps:                       {t_json * 1e3:8.1f} ms (best of {args.repeats})")
    print(f"approx + mask + approx (masking): {t_mask * 1e3:8.1f} ms (best of {args.repeats})")
    print(f"ratio masking / json.dumps: {ratio:.3f} (target <= 1.0)")
    return ratio


if __name__ == "__main__":
    main()
