"""Tests for ``mini-agent evaluate`` (mini_agent.harness.evaluate_runner): output, errors,
the process pool and a Dask LocalCluster giving the same reports as one process."""

from __future__ import annotations

import csv
import io
import json

import pytest

from mini_agent.cli import main
from mini_agent.harness.evaluate_runner import evaluate_paths, main_evaluate, transcript_files
from mini_agent.core.sample_sessions import sample_session_jsonl

POLICIES = ("raw", "mask-4")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("projects")
    (root / "p1").mkdir()
    (root / "p1" / "a.jsonl").write_text(sample_session_jsonl(6, variant=1))
    (root / "p1" / "b.jsonl").write_text(sample_session_jsonl(5, variant=2))
    (root / "notes.txt").write_text("not a transcript")
    return root


def _strip(reports):
    return json.loads(json.dumps(reports))


def test_folders_expand_to_transcripts_only(folder, tmp_path):
    assert [p.name for p in transcript_files([folder])] == ["a.jsonl", "b.jsonl"]
    with pytest.raises(FileNotFoundError, match="no such file"):
        transcript_files([tmp_path / "missing"])


def test_a_folder_without_sessions_is_an_error_not_an_empty_success(tmp_path, capsys):
    # `mini-agent evaluate ~/.claude/projects` on a machine without sessions said nothing
    empty = tmp_path / "nosess"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(FileNotFoundError, match=r"no transcript files \(\*\.jsonl, .*\) under "
                       r".*nosess$"):
        transcript_files([empty])
    assert main_evaluate([str(empty)]) == 2
    assert "no transcript files" in capsys.readouterr().err
    assert main_evaluate([str(empty)], as_json=True) == 2


def test_json_output_has_the_documented_fields(folder, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "out.csv"
    code = main_evaluate([str(folder)], policies=POLICIES, as_json=True, csv_path=str(target),
                         stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    assert [d["path"].rsplit("/", 1)[-1] for d in data] == ["a.jsonl", "b.jsonl"]
    row = data[0]["requests"][1]
    assert {"estimated_input_tokens", "real_input_tokens"} <= set(row)
    assert [p["name"] for p in data[0]["policies"]] == list(POLICIES)
    assert set(data[0]["policies"][0]) == {"name", "tokens_sent", "usd", "hit_rate",
                                          "cache_breaks", "retained_facts", "total_facts",
                                          "vs_best"}
    rows = list(csv.DictReader(target.open()))
    # per session: each policy, then the recorded usage (the samples record usage)
    assert [r["name"] for r in rows] == [*POLICIES, "recorded"] * 2
    assert float(rows[2]["tokens_sent"]) == data[0]["recorded"]["tokens_sent"]
    assert float(rows[0]["usd"]) == pytest.approx(data[0]["policies"][0]["usd"])


def test_table_output_through_the_cli(folder, capsys):
    assert main(["evaluate", str(folder / "p1" / "a.jsonl"), "--policies", "raw,payback",
                 "--model", "claude-haiku-4-5"]) == 0
    text = capsys.readouterr().out
    assert "claude-haiku-4-5" in text and "hindsight bound" in text
    assert text.splitlines()[3].split()[:3] == ["policy", "tokens", "sent"]
    assert any(line.startswith("payback") for line in text.splitlines())


@pytest.mark.parametrize("args,message", [
    (["--policies", "nope"], "unknown policy 'nope'"),
    (["--model", "gpt-x"], "no price for model 'gpt-x' (no row in the kit's model table); "
                           "known: claude-3-5-haiku, "),
    (["--workers", "0"], "workers must be >= 1")])
def test_usage_errors_exit_2_with_one_line(folder, args, message, capsys):
    assert main(["evaluate", str(folder / "p1"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mini-agent evaluate: error: ") and message in err
    assert err.count("\n") == 1


def test_a_bad_file_is_reported_and_the_others_still_run(folder, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a transcript"}')
    out, err = io.StringIO(), io.StringIO()
    code = main_evaluate([str(folder / "p1" / "a.jsonl"), str(bad)], policies=("raw",),
                         as_json=True, stdout=out, stderr=err)
    assert code == 1
    data = json.loads(out.getvalue())
    assert "policies" in data[0] and "unknown format" in data[1]["error"]
    assert "bad.json" in err.getvalue()


def test_process_pool_gives_the_same_reports(folder):
    one = evaluate_paths([folder], policies=POLICIES, workers=1, progress=False)
    two = evaluate_paths([folder], policies=POLICIES, workers=2, progress=False)
    assert _strip(one) == _strip(two)


def test_dask_local_cluster_gives_the_same_reports(folder):
    distributed = pytest.importorskip("distributed")
    one = evaluate_paths([folder], policies=POLICIES, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = evaluate_paths([folder], policies=POLICIES, scheduler=client, progress=False)
        assert _strip(on_dask) == _strip(one)
        by_address = evaluate_paths([folder / "p1" / "b.jsonl"], policies=POLICIES,
                                    scheduler=cluster.scheduler_address, progress=False)
        assert _strip(by_address) == _strip(one[1:])


def test_calibration_report_fits_on_half_and_reports_the_other_half(tmp_path):
    from mini_agent.harness.evaluate_runner import calibration_report
    assert "nothing to fit" in calibration_report(tmp_path)
    for k in range(4):
        (tmp_path / f"s{k}.jsonl").write_text(sample_session_jsonl(4, variant=k))
    text = calibration_report(tmp_path)
    assert text.count("held-out session") == 2 and "s1.jsonl" in text
    # the samples' usage is the kit's own calibrated count: the fit reproduces it closely
    rows = [line.split() for line in text.splitlines() if line.startswith("s")
            and line.split()[0].endswith(".jsonl")]
    assert len(rows) == 4 and all(float(r[1].rstrip("%")) < 1.0 for r in rows)


def test_session_choices_lists_own_claude_code_sessions(tmp_path, monkeypatch):
    from mini_agent.harness import evaluate_runner
    projects = tmp_path / "projects" / "-home-me-repo"
    projects.mkdir(parents=True)
    (projects / "abc.jsonl").write_text(sample_session_jsonl(2))
    monkeypatch.setattr(evaluate_runner, "CLAUDE_PROJECTS", tmp_path / "projects")
    monkeypatch.setenv("MINI_AGENT_SHARED_DATA", str(tmp_path / "absent"))
    assert list(evaluate_runner.session_choices()) == ["own: -home-me-repo/abc.jsonl"]


def test_an_unexpected_error_in_one_file_is_reported_not_raised(folder, monkeypatch):
    import mini_agent.core.replay as replay

    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(replay, "evaluate_session", broken)
    from mini_agent.harness.evaluate_runner import evaluate_file
    report = evaluate_file(folder / "p1" / "a.jsonl", policies=("raw",))
    assert report == {"path": str(folder / "p1" / "a.jsonl"),
                      "error": "unexpected RuntimeError: boom (a kit bug: please report it "
                               "with the file)"}


def test_an_unreadable_file_is_reported(tmp_path):
    from mini_agent.harness.evaluate_runner import evaluate_file
    report = evaluate_file(tmp_path / "a_folder.jsonl", policies=("raw",))  # does not exist
    assert report["path"].endswith("a_folder.jsonl") and "Error" in report["error"]


def test_sample_sessions_can_be_evaluated_without_files_of_your_own(capsys):
    # a workshop without Claude Code sessions or ../shared: `evaluate --sample 2`
    assert main(["evaluate", "--sample", "2", "--json", "--policies", "raw,breakeven"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["path"].rsplit("/", 1)[-1] for r in reports] == ["kit-sample-00.jsonl",
                                                                 "kit-sample-01.jsonl"]
    assert all(len(r["requests"]) >= 31 and [p["name"] for p in r["policies"]]
               == ["raw", "breakeven"] for r in reports)
    assert reports[0]["policies"][0]["tokens_sent"] != reports[1]["policies"][0]["tokens_sent"]
    assert main(["evaluate"]) == 2
    assert "give transcript files or folders (PATH...), or --sample N" in capsys.readouterr().err
    assert main(["evaluate", "--sample", "0"]) == 2


@pytest.mark.parametrize("where", ["folder", "missing/out.csv"])
def test_a_csv_that_cannot_be_written_is_a_usage_error_before_any_replay(
        folder, tmp_path, where, capsys, monkeypatch):
    import mini_agent.harness.evaluate_runner as runner
    replayed = []
    monkeypatch.setattr(runner, "evaluate_scan", lambda *a, **k: replayed.append(1) or ([], []))
    target = tmp_path / where
    target.mkdir() if where == "folder" else None
    assert main(["evaluate", str(folder / "p1"), "--csv", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mini-agent evaluate: error: cannot write the CSV ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert replayed == []                          # refused before the sessions are replayed
    assert not (tmp_path / "missing").exists()


def test_a_csv_probe_leaves_no_file_when_the_run_stops_on_a_usage_error(folder, tmp_path):
    target = tmp_path / "out.csv"
    assert main(["evaluate", str(folder / "p1"), "--policies", "nope", "--csv", str(target)]) == 2
    assert not target.exists()


def test_a_line_holding_a_huge_number_is_skipped_like_any_bad_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(sample_session_jsonl(3, variant=1) + '{"type": "x", "n": ' + "9" * 5000
                    + "}\n")
    reports = evaluate_paths([path], policies=POLICIES)
    assert "error" not in reports[0], reports[0].get("error")
    from mini_agent.harness.transcript_files import load
    assert any("a number too long to read" in r for r in load(path).repairs)


def test_csv_dash_prints_the_rows_on_stdout_and_writes_no_file(folder, tmp_path, monkeypatch):
    # `--csv -` used to write a file named "-" in the current folder
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user"\n')
    out, err = io.StringIO(), io.StringIO()
    code = main_evaluate([str(folder / "p1"), str(bad)], policies=POLICIES, csv_path="-",
                         stdout=out, stderr=err)
    assert code == 1
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["path"].rsplit("/", 1)[-1], r["name"]) for r in rows] == [
        ("a.jsonl", "raw"), ("a.jsonl", "mask-4"), ("a.jsonl", "recorded"), ("b.jsonl", "raw"),
        ("b.jsonl", "mask-4"), ("b.jsonl", "recorded"), ("bad.jsonl", "")]
    assert rows[-1]["error"].startswith("TranscriptError")
    assert int(rows[0]["tokens_sent"]) > int(rows[1]["tokens_sent"]) > 0
    assert not (tmp_path / "-").exists()
    # the error a reader needs goes to stderr, as with --json: stdout is the CSV alone
    assert f"mini-agent evaluate: {bad}: TranscriptError" in err.getvalue()
    assert "1 of 3 files failed (errors above): bad.jsonl" in err.getvalue()


def test_csv_dash_with_json_is_a_usage_error(folder, capsys):
    assert main(["evaluate", str(folder / "p1"), "--csv", "-", "--json"]) == 2
    assert capsys.readouterr().err == ("mini-agent evaluate: error: --csv - and --json both "
                                       "print on stdout; give --csv a file name\n")
