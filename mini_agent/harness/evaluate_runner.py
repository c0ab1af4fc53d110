"""``mini-agent evaluate``: run the policy explorer over many session files, in parallel.

A team's ``~/.claude/projects`` holds thousands of sessions. :func:`evaluate_paths` expands
folders into transcript files, evaluates each one (load, then
:func:`mini_agent.core.replay.evaluate_session`) and returns the reports in input order:

* ``workers=N`` (default 1): a ``concurrent.futures.ProcessPoolExecutor`` of N processes
  (one child process for ``workers=1``) for every file when there are two or more, fed
  batches of files (:mod:`.evaluate_pool`): a file that kills its worker, as the
  out-of-memory killer would, costs its own report only; a lone file runs in this process;
* ``scheduler=ADDRESS`` (or a ``distributed.Client``): on a Dask cluster through
  ``dask.distributed`` (``client.map`` then ``as_completed``).

A progress bar (``tqdm.auto``: a text bar in the terminal, a widget in Jupyter) counts
finished sessions when there is more than one. A file that cannot be loaded or evaluated does
not stop the run: its report is ``{"path": ..., "error": "..."}`` (:func:`evaluate_file`).

IO: reads files, starts processes, prints.

Source: Python ``concurrent.futures``; Dask distributed docs (``Client``, ``Client.map``,
``as_completed``, ``LocalCluster``).
"""

from __future__ import annotations

import contextlib
import csv
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from mini_agent.core.explorer_tables import format_report
from mini_agent.core.replay import DEFAULT_POLICIES, UnknownPolicyError, policy_spec
from mini_agent.harness.calibration_report import calibration_report  # noqa: F401
from mini_agent.harness.evaluate_pool import (  # noqa: F401 (evaluate_file: re-exported)
    evaluate_file, run_files)
from mini_agent.harness.real_sessions import CLAUDE_PROJECTS, shared_data_dir
from mini_agent.harness.transcript_scan import (  # noqa: F401 (re-exported)
    SUFFIXES, expand_paths, is_conversationless_jsonl, is_foreign_json, transcript_files)


CSV_FIELDS = ("path", "name", "tokens_sent", "usd", "hit_rate", "cache_breaks",
              "retained_facts", "total_facts", "vs_best", "estimator_median_abs_error", "error")
"""Columns of ``--csv``: one row per (session, policy); a file that failed has one row with
its ``path`` and ``error`` only (``error`` is empty on every other row)."""

ERROR_NAMES_SHOWN = 5
"""How many failed or skipped files a summary line on stderr names before "and N more"."""


def session_choices(*, newest_own: int = 20) -> dict[str, Path]:
    """List the sessions a notebook can offer.

    Args:
        newest_own: how many of your own newest Claude Code sessions (by modification time,
            from ``~/.claude/projects``) to add; default 20.

    Returns:
        Label -> path: ``shared: ...`` for every file in ``../shared/data`` when present,
        then ``own: folder/file`` for your own.
    """
    out: dict[str, Path] = {}
    shared = shared_data_dir()
    try:
        shared_files = transcript_files([shared]) if shared.is_dir() else []
    except FileNotFoundError:  # a folder with no transcript in it
        shared_files = []
    for p in shared_files:
        out[f"shared: {p.relative_to(shared)}"] = p
    own = CLAUDE_PROJECTS.expanduser()
    if own.is_dir():
        files = sorted(own.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
        for p in files[:newest_own]:
            out[f"own: {p.parent.name}/{p.name}"] = p
    return out


def evaluate_paths(paths: Iterable[str | Path], *, policies: Sequence[str] = DEFAULT_POLICIES,
                   model: str | None = None, workers: int = 1, scheduler: Any = None,
                   progress: bool | None = None, reference: bool = False
                   ) -> list[dict[str, Any]]:
    """Evaluate every transcript under ``paths``; return one report per file, in input order.

    Where the files run (here, a process pool, Dask) is :func:`~.evaluate_pool.run_files`'s
    choice: every file of a run of two or more runs in the pool (one child process for
    ``workers=1``). A
    ``.json`` a folder scan found that is no transcript (:func:`is_foreign_json`) gets no
    report (:func:`evaluate_scan` says which).

    Args:
        paths: files or folders.
        policies: policy names (checked before any work starts).
        model: price every session with this model (default: each session's own).
        workers: processes for a local pool (default 1: one child process).
        scheduler: a Dask scheduler address (``"tcp://host:8786"``) or a
            ``distributed.Client``; overrides ``workers``.
        progress: show the bar (None: when there is more than one file).
        reference: replay with the reference replay (slower, the same figures).

    Returns:
        One report per file, in input order (a failed file's is ``{"path", "error"}``).

    Raises:
        FileNotFoundError: a path that does not exist.
        UnknownPolicyError: a policy name the explorer does not know.
        ValueError: ``workers`` below 1.
    """
    return evaluate_scan(paths, policies=policies, model=model, workers=workers,
                         scheduler=scheduler, progress=progress, reference=reference)[0]


def evaluate_scan(paths: Iterable[str | Path], *, policies: Sequence[str] = DEFAULT_POLICIES,
                  model: str | None = None, workers: int = 1, scheduler: Any = None,
                  progress: bool | None = None, reference: bool = False
                  ) -> tuple[list[dict[str, Any]], list[str]]:
    """Evaluate like :func:`evaluate_paths`; also say which scanned files were skipped.

    A file a folder scan found whose load failed and that is well-formed JSON of no
    transcript shape (:func:`is_foreign_json`: a ``config.json`` beside the sessions), or a
    Claude Code ``.jsonl`` holding no conversation (:func:`is_conversationless_jsonl`: only
    ``summary`` or snapshot entries), is skipped, not reported as failed. A file named on its own is never skipped, and neither
    is a corrupt ``.jsonl`` or a file that is not JSON at all: their reports keep the error.

    Args:
        paths: files or folders.
        policies: policy names (checked before any work starts).
        model: price every session with this model (default: each session's own).
        workers: processes for a local pool (default 1: one child process).
        scheduler: a Dask scheduler address or a ``distributed.Client``; overrides
            ``workers``.
        progress: show the bar (None: when there is more than one file).
        reference: replay with the reference replay (slower, the same figures).

    Returns:
        ``(reports, skipped)``: one report per file not skipped, in input order; the skipped
        files, each as its path relative to the folder whose scan found it.

    Raises:
        FileNotFoundError: a path that does not exist.
        UnknownPolicyError: a policy name the explorer does not know.
        ValueError: ``workers`` below 1.
    """
    for name in policies:
        policy_spec(name)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    found = expand_paths(paths)
    reports = run_files([path for path, _ in found], policies=policies, model=model,
                        workers=workers, scheduler=scheduler, progress=progress,
                        reference=reference)
    kept, skipped = [], []
    for (path, folder), report in zip(found, reports):
        if "error" in report and folder is not None and (
                is_foreign_json(path) or is_conversationless_jsonl(path)):
            skipped.append(str(path.relative_to(folder)))
        else:
            kept.append(report)
    return kept, skipped


# --------------------------------------------------------------------------- output

def write_csv(reports: Sequence[dict[str, Any]], target: TextIO) -> None:
    """Write one CSV row per (session, policy) with :data:`CSV_FIELDS`.

    A session whose every request has usage gets one more row named ``recorded``: what its
    requests cost as they ran (no ``retained_facts``, ``total_facts`` or ``vs_best``).

    Args:
        reports: :func:`evaluate_paths` reports; a failed file gives one row with its
            ``path`` and ``error`` (the machine-readable list of what failed).
        target: an open text file (``newline=""``).
    """
    writer = csv.DictWriter(target, fieldnames=CSV_FIELDS)
    writer.writeheader()
    for report in reports:
        if "error" in report:
            writer.writerow({"path": report["path"], "error": report["error"]})
        rows = list(report.get("policies", []))
        if report.get("recorded"):
            rows.append({"name": "recorded", **report["recorded"]})
        for p in rows:
            writer.writerow({**{k: p[k] for k in CSV_FIELDS if k in p}, "path": report["path"],
                             "estimator_median_abs_error":
                                 report["estimator_median_abs_error"]})


def name_list(names: Sequence[str], shown: int = ERROR_NAMES_SHOWN) -> str:
    """Join file names for a one-line summary, the first ``shown`` then "and N more".

    Args:
        names: the names, in order.
        shown: how many to name (default :data:`ERROR_NAMES_SHOWN`).

    Returns:
        ``"a.json, b.json"`` or ``"a.json, b.json, ... and 3 more"``.
    """
    head = ", ".join(names[:shown])
    return head if len(names) <= shown else f"{head} and {len(names) - shown} more"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


SAMPLE_EXCHANGES = 30
"""Tool exchanges of each session ``mini-agent evaluate --sample N`` generates."""


@contextlib.contextmanager
def sample_folder(count: int):
    """Write ``count`` kit-generated sessions to a temporary folder, removed afterwards.

    Each is :func:`~mini_agent.core.sample_sessions.sample_session_jsonl` of
    :data:`SAMPLE_EXCHANGES` exchanges (variants 0, 1, ...), named ``kit-sample-NN.jsonl``;
    its task opens with the kit's "not a recording" label.

    Args:
        count: how many sessions (>= 1).

    Yields:
        The folder's path.

    Raises:
        ValueError: ``count < 1``.
    """
    if count < 1:
        raise ValueError(f"--sample needs at least 1 session, got {count}")
    from mini_agent.core.sample_sessions import sample_session_jsonl
    with tempfile.TemporaryDirectory(prefix="mini-agent-samples-") as folder:
        for k in range(count):
            (Path(folder) / f"kit-sample-{k:02d}.jsonl").write_text(
                sample_session_jsonl(SAMPLE_EXCHANGES, variant=k), encoding="utf-8")
        yield Path(folder)


def _csv_unwritable(csv_path: str) -> str | None:
    """Say why the CSV target cannot be written, before hours of replays are spent on it.

    The file is opened for appending (nothing in it changes) and removed again when the probe
    made it, so a run that stops on a usage error leaves no empty CSV behind.

    Args:
        csv_path: the ``--csv`` file.

    Returns:
        The operating system's reason (a folder, a missing folder, a permission), or None.
    """
    target = Path(csv_path)
    existed = target.exists()
    try:
        with open(target, "a", encoding="utf-8"):
            pass
    except OSError as error:
        return error.strerror or str(error)
    if not existed:
        target.unlink(missing_ok=True)
    return None


def main_evaluate(paths: Sequence[str], *, policies: Sequence[str] | None = None,
                  model: str | None = None, as_json: bool = False, csv_path: str | None = None,
                  workers: int = 1, scheduler: str | None = None, samples: int = 0,
                  stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run ``mini-agent evaluate``: print tables (or JSON), optionally write a CSV.

    Each failed file's error is written out once for a reader: in the text report (stdout),
    in file order; with ``--json``, whose stdout is for a program, on stderr, one line per
    file (``mini-agent evaluate: PATH: ERROR``). The machine-readable record is the JSON's
    ``{"path", "error"}`` objects and the CSV's rows with an ``error``. Whatever the format,
    stderr ends with one line naming the failed files (and one naming the files skipped
    because they are not transcripts), so a pipe never hides that something failed.

    Args:
        paths: files or folders.
        policies: policy names (None: every policy).
        model: price every session with this model (None: each session's own).
        as_json: print the reports as JSON instead of tables.
        csv_path: also write :func:`write_csv` rows to this file; ``"-"`` prints them on
            stdout instead of the tables (each failed file's error then goes to stderr, as
            with ``as_json``; both at once is a usage error).
        workers: processes for a local pool.
        scheduler: a Dask scheduler address.
        samples: also evaluate this many kit-generated sessions (:func:`sample_folder`),
            for trying the explorer without sessions of your own.
        stdout: where results go (default ``sys.stdout``).
        stderr: where errors and the progress bar go (default ``sys.stderr``).

    Returns:
        The exit status: 0 when every file was evaluated (a ``.json`` a folder scan found
        that is no transcript is skipped with a line on stderr, not a failure); 1 when some
        file failed (a corrupt transcript, or a file named on the command line that is not
        one); 2 with a one-line ``mini-agent evaluate: error: ...`` for a missing path, a
        folder with no transcript, no path and no samples, an unknown policy or model, or
        workers or samples < 1, or a ``csv_path`` that cannot be written, or ``"-"`` with
        ``as_json``.
    """
    out, err = stdout or sys.stdout, stderr or sys.stderr
    csv_out = csv_path == "-"   # the CSV is the output, on stdout
    try:
        if csv_out and as_json:
            print("mini-agent evaluate: error: --csv - and --json both print on stdout; "
                  "give --csv a file name", file=err)
            return 2
        if model is not None:
            from mini_agent.core.pricing import model_price
            model_price(model)
        if not paths and not samples:
            print("mini-agent evaluate: error: give transcript files or folders (PATH...), or "
                  "--sample N", file=err)
            return 2
        if csv_path and not csv_out and (problem := _csv_unwritable(csv_path)):
            print(f"mini-agent evaluate: error: cannot write the CSV {csv_path}: {problem}",
                  file=err)
            return 2
        with contextlib.ExitStack() as stack:
            folder = stack.enter_context(sample_folder(samples)) if samples else None
            if folder is not None:
                paths = [*paths, str(folder)]
            reports, skipped = evaluate_scan(paths, policies=tuple(policies or DEFAULT_POLICIES),
                                             model=model, workers=workers, scheduler=scheduler)
            if folder is not None:  # the folder is deleted: name the samples, not their path
                reports = [{**r, "path": Path(r["path"]).name}
                           if Path(r["path"]).parent == folder else r for r in reports]
    except (FileNotFoundError, UnknownPolicyError, ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"mini-agent evaluate: error: {message}", file=err)
        return 2
    except OSError as error:  # a scheduler address nobody answers on
        if scheduler is None:
            raise
        message = f"cannot reach the Dask scheduler {scheduler}: {error}"
        print(f"mini-agent evaluate: error: {message}", file=err)
        return 2
    if skipped:
        print(f"mini-agent evaluate: skipped {_plural(len(skipped), 'file')} that "
              f"{'is' if len(skipped) == 1 else 'are'} not a transcript: {name_list(skipped)}",
              file=err)
    if not reports:
        print(f"mini-agent evaluate: error: no transcript under {', '.join(map(str, paths))}",
              file=err)
        return 2
    if as_json:
        print(json.dumps(reports, indent=1, ensure_ascii=False), file=out)
    elif csv_out:
        write_csv(reports, out)
    else:
        print("\n\n".join(format_report(r) for r in reports), file=out)
    if csv_path and not csv_out:
        with open(csv_path, "w", newline="", encoding="utf-8") as handle:
            write_csv(reports, handle)
    failed = [r["path"] for r in reports if "error" in r]
    if as_json or csv_out:  # the errors' one place a reader sees: stdout is for a program
        for r in reports:
            if "error" in r:
                print(f"mini-agent evaluate: {r['path']}: {r['error']}", file=err)
    if failed:
        where = "above" if as_json or csv_out else "in the report"
        print(f"mini-agent evaluate: {len(failed)} of {_plural(len(reports), 'file')} failed "
              f"(errors {where}): {name_list([Path(f).name for f in failed])}", file=err)
    return 1 if failed else 0
