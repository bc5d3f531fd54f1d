"""The corpus through the real ``agentrun repair`` CLI: recovery >= 98%, no false calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "repair"


def _run(lines: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "from agentrun.cli import main; main()", "repair", *args]
    return subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)


def test_corpus_recovery_through_the_cli() -> None:
    cases = [
        json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text().splitlines() if line.strip()
    ]
    assert len(cases) >= 150
    negatives = [c for c in cases if not c["expected"]]
    assert len(negatives) >= 30
    proc = _run([json.dumps(c["message"]) for c in cases], "--tools", str(FIXTURES / "tools.json"))
    assert proc.returncode == 0, proc.stderr
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(outputs) == len(cases)
    recovered, false_calls = 0, []
    for case, out in zip(cases, outputs, strict=True):
        got = [{"name": t["name"], "arguments": t["arguments"]} for t in out["tool_calls"]]
        runnable = [c for c in out["calls"] if c["status"] == "runnable"]
        assert [{"name": c["name"], "arguments": c["arguments"]} for c in runnable] == got, case["id"]
        assert [c["id"] for c in out["calls"] if c["status"] == "rejected"] == [
            r["call_id"] for r in out["rejected"]
        ], case["id"]
        if case["expected"]:
            recovered += got == case["expected"]
        elif got:
            false_calls.append(case["id"])
    positives = len(cases) - len(negatives)
    assert recovered / positives >= 0.98, f"recovered {recovered}/{positives}"
    assert false_calls == []


def test_direct_mode_through_the_cli_recovers_only_clean_native_calls() -> None:
    cases = [
        json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text().splitlines() if line.strip()
    ]
    proc = _run(
        [json.dumps(c["message"]) for c in cases], "--tools", str(FIXTURES / "tools.json"), "--mode", "direct"
    )
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    by_id = {c["id"]: o for c, o in zip(cases, outputs, strict=True)}
    assert by_id["native-clean"]["tool_calls"][0]["arguments"] == {"path": "a.py"}
    assert by_id["hermes-0"]["tool_calls"] == [] and by_id["hermes-0"]["repairs"] == []
    assert by_id["json-single-quotes"]["rejected"][0]["reason"] == "invalid_json"


def test_bad_input_line_gives_an_error_record_not_a_traceback() -> None:
    proc = _run(["not json", "[1, 2]", '{"content": "hi"}'], "--tools", str(FIXTURES / "tools.json"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr  # the good line is still repaired
    assert proc.stderr.count("\n") == 1 and "2 input line(s) could not be read" in proc.stderr
    first, second, third = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["line"] == 1 and "error" in first
    assert second["line"] == 2 and "error" in second
    assert third["content"] == "hi" and third["tool_calls"] == []


def test_bad_tools_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text("{not json")
    proc = _run([], "--tools", str(bad))
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    proc = _run([], "--tools", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "cannot read tools file" in proc.stderr


def test_calls_come_out_in_the_order_the_model_wrote_them() -> None:
    """A reply of [runnable, unknown tool, runnable, schema error] reads back in that order."""
    calls = [
        ("a", "read_file", '{"path": "a.py"}'),
        ("b", "delete_everything", '{"path": "/"}'),
        ("c", "list_files", '{"pattern": "*.py"}'),
        ("d", "write_file", '{"path": "b.py"}'),  # "content" is required
    ]
    message = {
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
        ],
    }
    proc = _run([json.dumps(message)], "--tools", str(FIXTURES / "tools.json"))
    assert proc.returncode == 0, proc.stderr
    (out,) = (json.loads(line) for line in proc.stdout.splitlines())
    joint = [(c["id"], c["name"], c["status"]) for c in out["calls"]]
    assert joint == [
        ("a", "read_file", "runnable"),
        ("b", "delete_everything", "rejected"),
        ("c", "list_files", "runnable"),
        ("d", "write_file", "rejected"),
    ]
    assert out["calls"][0]["arguments"] == {"path": "a.py"}
    assert out["calls"][1]["reason"] == "unknown_tool" and out["calls"][1]["arguments"] == '{"path": "/"}'
    assert out["calls"][3]["reason"] == "schema" and out["calls"][3]["field"] is not None
    # the split lists stay as they were for older readers, each in the model's order
    assert [c["id"] for c in out["tool_calls"]] == ["a", "c"]
    assert [r["call_id"] for r in out["rejected"]] == ["b", "d"]
