"""Two kit-written conversations of 30+ exchanges with ten essential facts each (one Japanese).

For the chapter's lab (count how many essential facts a summary keeps). They are GENERATED
samples written for the kit, not recordings, and say so in their first message. Each is built
deterministically: a task, the user's later instructions, the agent's decisions, tool calls
whose results carry identifiers, numbers and errors, and ordinary work in between (reads,
greps, test runs) long enough that an early fact sits far from the end. Every fact comes with
the sentence that proves it and the index of the message that first states it.

* :func:`english_conversation`: moving an invoice export from CSV to JSON Lines.
* :func:`japanese_conversation`: converting 1,800 e-books and filling in accessibility data
  (the seed's case study, retold).

Returns ``(messages, facts)``; the messages validate. Pure. Used by
``notebooks/11_evaluating_policies.ipynb`` and ``tests/test_prompt_summary.py``.
Source: 004_b74ef821c58ee4ec.txt (lab 2; the e-book conversion case).
"""

from __future__ import annotations

from mini_agent.core.retention import Fact, view_text
from mini_agent.core.messages import Message

LABEL_EN = "[kit-written sample conversation, not a recording]"
LABEL_JA = "[キットが作成したサンプル会話。実際の記録ではありません]"


def _build(steps: list[tuple], facts: list[tuple[str, str, str]]
           ) -> tuple[list[Message], list[Fact]]:
    """Steps: ``("user", text)`` or ``("tool", say, name, input, result, is_error)``."""
    messages: list[Message] = []
    pending: list[dict] = []
    n = 0
    for step in steps:
        if step[0] == "user":
            content = [*pending, {"type": "text", "text": step[1]}]
            messages.append({"role": "user", "content": content if pending else step[1]})
            pending = []
            continue
        _, say, name, args, result, error = step
        n += 1
        tid = f"toolu_{n:03d}"
        if pending:
            messages.append({"role": "user", "content": pending})
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": say},
            {"type": "tool_use", "id": tid, "name": name, "input": args}]})
        pending = [{"type": "tool_result", "tool_use_id": tid, "content": result,
                    **({"is_error": True} if error else {})}]
    if pending:
        messages.append({"role": "user", "content": pending})
    out = []
    for text, kind, proof in facts:
        first = next(i for i, m in enumerate(messages) if text in view_text([m]))
        out.append(Fact(text, kind, proof, first))
    return messages, out


def _code(path: str, lines: int, seed: int) -> str:
    stem = path.rsplit("/", 1)[-1].split(".")[0]
    return "\n".join(f"{k:4d}  def {stem}_step_{(k * seed) % 97}(row): return row[{k % 7}]"
                     for k in range(1, lines + 1))


def _filler(count: int, files: tuple[str, ...], say: tuple[str, ...], seed: int) -> list[tuple]:
    steps = []
    for k in range(count):
        path = files[(k * 3 + seed) % len(files)]
        kind = k % 3
        text = say[k % len(say)].format(path=path, k=k + 1)
        if kind == 0:
            steps.append(("tool", text, "read_file", {"path": path},
                          _code(path, 40 + (k * 29) % 90, k + seed), False))
        elif kind == 1:
            steps.append(("tool", text, "grep", {"pattern": f"step_{k}", "path": "."},
                          "\n".join(f"{files[(k + j) % len(files)]}:{12 + j}: step_{k}(row)"
                                    for j in range(8)), False))
        else:
            steps.append(("tool", text, "run_bash", {"command": "python -m pytest -q"},
                          "\n".join(f"tests/test_case_{j}.py PASSED" for j in range(12))
                          + f"\nFAILED tests/test_case_{k}.py::test_{k} - AssertionError: "
                            f"expected {k} got {k + 1}\n1 failed, 12 passed", False))
    return steps


def english_conversation() -> tuple[list[Message], list[Fact]]:
    """Build a 30+ exchange coding conversation in English (invoice export).

    Returns:
        ``(messages, facts)``: the conversation and the ten facts a summary must keep.
    """
    files = ("billing/export.py", "billing/models.py", "billing/currency.py",
             "tests/test_export.py", "billing/cli.py")
    say = ("Reading {path} to see how rows are built; I should keep the order because "
           "callers index columns.", "Looking for other callers before I change anything "
           "(step {k}).", "Running the tests again; the change must not break the CLI.")
    steps = [
        ("user", f"{LABEL_EN}\nMigrate the invoice export in billing/export.py from CSV to "
                 "JSON Lines. Keep the public function export_invoices() unchanged."),
        ("tool", "I will read billing/export.py first.", "read_file",
         {"path": "billing/export.py"}, _code("billing/export.py", 120, 3), False),
        ("user", "Also: each export call must stay under 250 ms on the staging dataset."),
        ("tool", "Counting the staging data. The staging dataset has 3,412 invoices.",
         "run_bash", {"command": "python -m billing.cli count --env staging"},
         "3412", False),
        ("tool", "I decided to write timestamps in UTC with a trailing Z, because the "
                 "consumer parses ISO 8601.", "read_file", {"path": "billing/models.py"},
         _code("billing/models.py", 90, 5), False),
        ("user", "Rule from the finance team: never change the column order of the legacy "
                 "CSV. Log the work under ticket FIN-2041."),
        ("tool", "Running the export tests on the current code.", "run_bash",
         {"command": "python -m pytest -q tests/test_export.py"},
         "tests/test_export.py::test_rows PASSED\ntests/test_export.py::test_currency FAILED\n"
         "KeyError: 'currency' in row 1187\n1 failed, 1 passed", True),
        *_filler(12, files, say, 1),
        ("tool", "Checking the JPY case separately.", "run_bash",
         {"command": "python -m pytest -q tests/test_export.py -k jpy"},
         "FAILED tests/test_export.py::test_jpy - AssertionError: Decimal rounding differs "
         "for JPY\n1 failed", True),
        *_filler(16, files, say, 2),
        ("user", "Good progress. Please continue."),
    ]
    facts = [
        ("billing/export.py", "identifier", "Migrate the invoice export in billing/export.py"),
        ("export_invoices()", "identifier", "Keep the public function export_invoices() "
                                            "unchanged."),
        ("250 ms", "number", "each export call must stay under 250 ms on the staging dataset"),
        ("write timestamps in UTC with a trailing Z", "decision",
         "I decided to write timestamps in UTC with a trailing Z"),
        ("never change the column order", "decision",
         "Rule from the finance team: never change the column order of the legacy CSV."),
        ("FIN-2041", "number", "Log the work under ticket FIN-2041."),
        ("KeyError: 'currency' in row 1187", "open_problem", "test_currency FAILED"),
        ("3,412 invoices", "number", "The staging dataset has 3,412 invoices."),
        ("tests/test_export.py", "identifier", "python -m pytest -q tests/test_export.py"),
        ("Decimal rounding differs for JPY", "open_problem", "test_jpy failed"),
    ]
    return _build(steps, facts)


def japanese_conversation() -> tuple[list[Message], list[Fact]]:
    """Build a 30+ exchange conversation in Japanese (e-book conversion).

    Returns:
        ``(messages, facts)``: the conversation and the ten facts a summary must keep.
    """
    files = ("scripts/convert_epub.py", "scripts/validate.py", "books.json", "decisions.md",
             "scripts/alt_text.py")
    say = ("{path} を読んで処理の流れを確認します。", "ほかの呼び出し箇所を探します（{k}回目）。",
           "テストをもう一度実行して、変換結果が壊れていないか確かめます。")
    steps = [
        ("user", f"{LABEL_JA}\n旧形式の電子書籍1,800冊をEPUB 3に変換し、アクセシビリティ情報を"
                 "補ってください。変換スクリプトは scripts/convert_epub.py です。"),
        ("tool", "まず変換スクリプトを読みます。", "read_file",
         {"path": "scripts/convert_epub.py"}, _code("scripts/convert_epub.py", 110, 4), False),
        ("user", "チームで決めたルールです。表の画像の代替テキストは原文のキャプションから取得する"
                 "こと。"),
        ("tool", "状態管理のファイルを確認します。", "read_file", {"path": "books.json"},
         '{"books": 1800, "pending": 1800, "converted": 0, "validated": 0}', False),
        ("user", "処理は一度に20冊ずつ進めてください。作業はチケット ACC-311 に記録してください。"),
        ("tool", "状態を validated にできるのはバリデーター合格後だけにします。", "read_file",
         {"path": "decisions.md"}, "# 決定事項\n- 代替テキストの取得元: 未記入", False),
        ("tool", "最初の20冊でバリデーターを実行します。", "run_bash",
         {"command": "python scripts/validate.py --batch 1"},
         "book-0007: ValidationError: missing alt text (chapter 7)\n19 passed, 1 failed", True),
        *_filler(13, files, say, 3),
        ("tool", "これまでの結果を集計しました。初日のルールと違う方法で処理された本が140冊あります。",
         "run_bash", {"command": "python scripts/report.py"}, "mismatched: 140", False),
        *_filler(15, files, say, 4),
        ("user", "ありがとうございます。続けてください。"),
    ]
    facts = [
        ("scripts/convert_epub.py", "identifier", "変換スクリプトは scripts/convert_epub.py です。"),
        ("1,800冊", "number", "旧形式の電子書籍1,800冊をEPUB 3に変換し"),
        ("表の画像の代替テキストは原文のキャプションから取得する", "decision",
         "チームで決めたルールです。表の画像の代替テキストは原文のキャプションから取得すること。"),
        ("一度に20冊ずつ", "number", "処理は一度に20冊ずつ進めてください。"),
        ("books.json", "identifier", "read_file books.json"),
        ("ACC-311", "number", "作業はチケット ACC-311 に記録してください。"),
        ("validated にできるのはバリデーター合格後だけ", "decision",
         "状態を validated にできるのはバリデーター合格後だけにします。"),
        ("ValidationError: missing alt text (chapter 7)", "open_problem",
         "book-0007: ValidationError: missing alt text (chapter 7)"),
        ("140冊", "number", "初日のルールと違う方法で処理された本が140冊あります。"),
        ("decisions.md", "identifier", "read_file decisions.md"),
    ]
    return _build(steps, facts)
