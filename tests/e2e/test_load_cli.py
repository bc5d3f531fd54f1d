"""``agentrun load`` from the command line: a shipped recording replayed, compared, bad input."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from agentrun_testsupport import read_jsonl, run_cli, signal_cli


def _one_line_error(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    text = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in text, (needle, proc.stderr)


def test_replay_a_shipped_recording_then_compare(tmp_path: Path) -> None:
    args = ["load", "--replay", "todo-cli", "--concurrency", "2", "--sessions", "3", "--time-scale", "0"]
    # a tenth of load's default pacing (0.05 s ttft, 2 ms a token: 8 s of streams a session); the
    # SLO is met either way and the compare is of a load with itself
    args += ["--replay-ttft", "0.005", "--replay-token-delay", "0.0002"]
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


def _a_request_finished(results: Path) -> bool:
    """A span line in some session's traces file: the load has finished one request."""
    return any(f.stat().st_size > 0 for f in results.glob("*/traces/*.spans.jsonl"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_replay_writes_what_finished(tmp_path: Path, sig: int) -> None:
    """Ctrl-C mid-load: exit 130, no traceback, and load.json from every request that finished."""
    args = ["load", "--replay", "todo-cli", "--concurrency", "4", "--sessions", "8"]
    # sent 1 s after the first request's span is written, not at a fixed 6 s after the spawn: the
    # CLI's start-up alone can take longer than that on a loaded machine. The sessions last about
    # 40 s each (11 requests at 0.01 s a token), so they are mid-way then
    done = signal_cli(
        *args,
        "--replay-token-delay",
        "0.01",
        "--results",
        str(tmp_path),
        sig=sig,
        ready=lambda _pid: _a_request_finished(tmp_path),
        settle=1.0,
    )
    out, err = done.stdout, done.stderr
    assert done.returncode == 130, err[-2000:]
    assert "Traceback" not in out + err and "load.json has what finished" in " ".join(err.split())
    (folder,) = [p for p in tmp_path.iterdir() if (p / "load.json").exists()]
    document = json.loads((folder / "load.json").read_text())
    assert document["interrupted"] is True and (folder / "report.html").is_file()
    requests = read_jsonl(folder / "requests.jsonl")
    assert requests and document["aggregates"]["requests"]["total"] == len(requests)
    stopped = [s for s in document["sessions"] if s["stop_reason"] == "interrupted"]
    assert stopped, document["sessions"]
    for session in document["sessions"]:
        mine = [r for r in requests if r["session"] == session["session"]]
        assert len(mine) == session["requests"]
        assert [r["index"] for r in mine] == list(range(len(mine)))  # in order, none lost
    assert all(s["requests"] < 11 for s in stopped)  # cut short, not waited for


def test_a_wrong_server_or_model_is_one_line_before_the_load(tmp_path: Path) -> None:
    """The single run's pre-flight, once for the load: nothing listening, or a model the server
    does not serve, is exit 2 with what to check, and no results folder."""
    from agentrun.replay import ReplayServer, Script

    dead = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    _one_line_error(
        run_cli("load", "--replay", "todo-cli", *dead, "--results", str(tmp_path)), "cannot reach"
    )
    with ReplayServer(Script(model_name="served-one"), ttft=0, token_delay=0) as server:
        wrong = ["--base-url", server.base_url, "--model", "nope"]
        proc = run_cli("load", "--replay", "todo-cli", *wrong, "--results", str(tmp_path))
        _one_line_error(proc, "'nope' is not served", "served-one")
        proc = run_cli("load", "todo-cli", *wrong, "--results", str(tmp_path))  # live: before any sandbox
        _one_line_error(proc, "'nope' is not served")
    assert not list(tmp_path.iterdir())
