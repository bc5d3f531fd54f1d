"""``agentrun load`` from the command line: a shipped recording replayed, compared, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli


def _one_line_error(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    text = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in text, (needle, proc.stderr)


def test_replay_a_shipped_recording_then_compare(tmp_path: Path) -> None:
    args = ["load", "--replay", "todo-cli", "--concurrency", "2", "--sessions", "3", "--time-scale", "0"]
    proc = run_cli(*args, "--results", str(tmp_path), "--slo", "ttft=1,e2e=30", "--sample-interval", "0.2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ttft (ms)" in proc.stdout and "load.json:" in proc.stdout
    folders = sorted(p for p in tmp_path.iterdir() if (p / "load.json").exists())
    assert len(folders) == 1
    document = json.loads((folders[0] / "load.json").read_text())
    assert document["mode"] == "replay" and document["plan"]["concurrency"] == 2
    assert document["aggregates"]["requests"]["total"] == 33
    assert document["aggregates"]["goodput"]["slo"] == {"ttft_s": 1.0, "e2e_s": 30.0}
    assert document["server_series"] and document["schema"] == "agentrun.load/1"
    proc = run_cli("load", "compare", str(folders[0]), str(folders[0] / "load.json"))
    assert proc.returncode == 0, proc.stderr
    assert "throughput.requests_per_s" in " ".join(proc.stdout.split())
    assert "1.000" in proc.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--replay", "todo-cli", "--concurrency", "0"], "--concurrency"),
        (["--replay", "todo-cli", "--model", "m"], "--base-url"),
        (["compare", "only-one"], "compare A B"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    """The cases test_bad_input.py's table does not already cover."""
    _one_line_error(run_cli("load", *args, "--results", str(tmp_path)), needle)
