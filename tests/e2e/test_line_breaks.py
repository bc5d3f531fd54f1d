"""A whole run whose model reply and tool output hold every Unicode line-break character and
lone surrogates: it completes and is graded, its folder reads back (trajectory.jsonl, ATIF,
report.html) and ``agentrun report`` renders it.

The replay model plays the todo-cli solution after one extra turn: content and reasoning
with U+2028, U+2029, U+0085, \\x0b, \\x0c, \\x1c-\\x1e, a lone \\r and lone surrogates (sent as
``\\ud800`` escapes, raw separators as vLLM sends them), and a ``run_shell`` call whose
arguments hold them too and whose command prints them all, so the tool's output has them.
A second call's arguments end in a comma: the corrected mode's repair shows that raw text in report.html,
which a real Chromium must then render without an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import markupsafe
import pytest
from agentrun_testsupport import load_result, only_run, read_jsonl, run_cli
from report_browser import browser, chromium_path, open_page

from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn, script_from_task
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LONE = "\ud800|\udfff"
# printf's octal and \u escapes: the tool's output holds every break (and a lone \r) as raw text
PRINTS = r"printf 'out:\r\013\014\034\035\036\u0085\u2028\u2029:end\n'"

# JSON with a trailing comma and the separators raw in its string (valid there): the repair
# quotes that text in the report
TRAILING_COMMA = '{"command": "echo separators # \u2028\u2029\x85",}'
ESCAPED_LONE = '{"command": "echo \\ud800 > lone.txt"}'  # valid JSON whose string is a lone surrogate


def _script() -> Script:
    solution = script_from_task(load_task("todo-cli"))
    hostile = ScriptTurn(
        reasoning=f"thinking{BREAKS}{LONE}",
        content=f"Looking first{BREAKS}{LONE}",
        tool_calls=[ScriptCall(name="run_shell", arguments={"command": f"{PRINTS} # {BREAKS}{LONE}"})],
    )
    repaired = ScriptTurn(
        tool_calls=[
            ScriptCall(name="run_shell", arguments=TRAILING_COMMA),
            ScriptCall(name="run_shell", arguments=ESCAPED_LONE),
        ]
    )
    return Script(turns=[hostile, repaired, *solution.turns], model_name="replay")


def test_a_run_with_every_line_break_and_lone_surrogates_completes_and_reads_back(
    tmp_path: Path, todo_image: str
) -> None:
    with ReplayServer(_script(), ttft=0, token_delay=0) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "replay", "--results", str(tmp_path)
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(tmp_path)
    result = load_result(run_dir)
    assert result["stop_reason"] == "final_answer" and result["reward"] == 1, result
    events = read_jsonl(run_dir / "trajectory.jsonl")
    responses = [e for e in events if e["event"] == "response"]
    first = responses[0]["completion"]["message"]
    assert first["content"] == f"Looking first{BREAKS}\ufffd|\ufffd"  # lone surrogates made U+FFFD
    assert first["reasoning"] == f"thinking{BREAKS}\ufffd|\ufffd"
    assert json.loads(first["tool_calls"][0]["arguments"])["command"].endswith(f"# {BREAKS}\ufffd|\ufffd")
    outputs = [json.dumps(e, ensure_ascii=False) for e in events if e["event"] == "tool_result"]
    printed = "out:\\r\\u000b\\f\\u001c\\u001d\\u001e\x85\u2028\u2029:end"  # as JSON writes it
    assert any(printed in o for o in outputs), outputs[:2]
    calls = {e["call"]["id"]: e["call"] for e in events if e["event"] == "tool_call"}
    results = {e["result"]["call_id"]: e["result"] for e in events if e["event"] == "tool_result"}
    (lone,) = [i for i, c in calls.items() if "lone.txt" in c["arguments"].get("command", "")]
    assert calls[lone]["arguments"]["command"] == "echo \ufffd > lone.txt" and results[lone]["error"] is None
    atif = json.loads((run_dir / "trajectory.atif.json").read_text(encoding="utf-8"))
    assert any(f"Looking first{BREAKS}" in (step.get("message") or "") for step in atif["steps"])
    (repair,) = [e["repair"] for e in events if e["event"] == "repair" and "\u2028" in e["repair"]["before"]]
    again = run_cli("report", str(run_dir), "--out", str(tmp_path / "again.html"))
    assert again.returncode == 0, again.stderr[-2000:]
    for page in (run_dir / "report.html", tmp_path / "again.html"):
        assert markupsafe.escape(repair["before"]) in page.read_text(encoding="utf-8")
    _renders(run_dir / "report.html")


def _renders(html: Path) -> None:
    """The page in a real Chromium: drawn, no console error (skipped without one, outside CI)."""
    if chromium_path() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no chromium: scripts/test.sh installs it with apt-get")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    with browser() as b:
        page = open_page(b, html)
    assert page.console_errors == [] and page.ready == "1", page
