"""``agentrun task`` against a server that attacks (issue #23 §4): the real CLI in a
subprocess, a real HTTP server in this process (``hostile_http``). Each attack ends the
run in bounded time, within its wall limit plus a margin, and bounded memory (the child's
peak RSS under the ceiling the README states), with one line that names the cause.

The pre-flight cases need no Docker: the server's first answer is already the attack. The
stream cases answer the pre-flight and attack the agent's first streamed request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import agentrun_cmd, read_jsonl
from hostile_http import CHAT, MODELS, HostileServer, gzip_bomb, run_measured

CEILING_MB = 400  # the README's ceiling on the runner's memory, whatever a server sends
MARGIN_S = 15.0  # the CLI's start-up varying from one run to the next on a busy 2-core machine
SANDBOX_S = 120.0  # start-up, a sandbox and the grading on a busy 2-core machine
WALL_S = 20.0
PREFLIGHT_S = 10.0


def _task(server: HostileServer, results: Path, *extra: str) -> list[str]:
    return agentrun_cmd(  # the page is written at the end too: its memory counts
        "task", "todo-cli", "--base-url", server.base_url, "--model", "m",
        "--max-wall", f"{WALL_S:g}", "--results", str(results), *extra,
    )  # fmt: skip


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr[-3000:]
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb()  # made once: about 1 MB that expands to 1 GB


@pytest.mark.parametrize(
    ("route", "kind", "said"),
    [
        (MODELS, "trickle", "did not answer GET /models within 10 s"),
        (MODELS, "gzip_bomb", "answered GET /models with a reply larger than 16 MB once decoded"),
        (MODELS, "huge_body", "answered GET /models with a reply larger than 16 MB once decoded"),
        (CHAT, "gzip_bomb", "answered a one-token chat request with a reply larger than 16 MB"),
        (CHAT, "huge_line", "answered a one-token chat request with a reply larger than 16 MB"),
    ],
)
def test_a_hostile_preflight_answer_is_one_line_and_exit_2(
    tmp_path: Path, bomb: bytes, route: str, kind: str, said: str
) -> None:
    with HostileServer({MODELS: "models"}, model="another") as peer:  # the CLI's start-up, now
        baseline = run_measured(_task(peer, tmp_path / "peer"), timeout=WALL_S + MARGIN_S + 30)
    assert baseline.returncode == 2 and "is not served" in baseline.stderr, baseline.stderr[-2000:]
    with HostileServer({MODELS: "models", CHAT: "ok", route: kind}) as server:
        run = run_measured(_task(server, tmp_path / "results"), timeout=WALL_S + MARGIN_S + 30)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert said in _error_line(run.stderr)
    # no later than the pre-flight's deadline after a peer run that fails at once, same machine load
    assert run.elapsed_s < baseline.elapsed_s + PREFLIGHT_S + MARGIN_S, (run.elapsed_s, baseline.elapsed_s)
    assert run.peak_rss_mb < CEILING_MB, run.peak_rss_mb
    assert server.hits[0] == MODELS


@pytest.mark.docker
@pytest.mark.parametrize(
    ("kind", "extra", "stop_reason", "cause", "said"),
    [
        ("stream_trickle", (), "max_wall_time", "timeout", "deadline passed"),
        ("stream_stall", ("--request-timeout", "4"), "max_wall_time", "stalled_stream", "no complete event"),
        ("stream_gzip_bomb", (), "model_error", None, "larger than 64 MB once decoded"),
        ("stream_huge_line", (), "model_error", None, "a line longer than 16,777,216 bytes"),
        ("stream_huge_reply", (), "model_error", None, "larger than 64 MB once decoded"),
        ("stream_big_reply", (), "final_answer", None, None),  # 56 MB taken; the page written too
    ],
)
def test_a_hostile_stream_ends_the_run_in_time_and_memory(
    tmp_path: Path,
    todo_image: str,
    bomb: bytes,
    kind: str,
    extra: tuple[str, ...],
    stop_reason: str,
    cause: str | None,
    said: str | None,
) -> None:
    results = tmp_path / "results"
    with HostileServer({MODELS: "models", CHAT: kind}) as server:
        run = run_measured(_task(server, results, *extra), timeout=WALL_S + SANDBOX_S + 60)
    assert run.returncode == 1, (run.returncode, run.stderr[-2000:])  # graded, not passed
    assert "Traceback" not in run.stderr
    assert run.peak_rss_mb < CEILING_MB, run.peak_rss_mb
    (run_dir,) = [p for p in results.iterdir() if (p / "result.json").is_file()]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["stop_reason"] == stop_reason, result.get("error")
    # the agent (its requests) within the wall limit; the sandbox and the grading around it
    assert result["timings"]["agent_wall_s"] < WALL_S + 2.0, result["timings"]
    assert run.elapsed_s < WALL_S + SANDBOX_S, run.elapsed_s
    assert (run_dir / "report.html").is_file()
    events = read_jsonl(run_dir / "trajectory.jsonl")
    failed = [e["attempt"] for e in events if e["event"] == "retry"]
    errors = [e["error"] for e in events if e["event"] == "request_error"]
    assert errors == [] if said is None else len(errors) == 1 and said in errors[0], errors
    if cause is not None:
        assert failed and {a["cause"] for a in failed} == {cause}, failed
        assert all(a["elapsed_s"] < WALL_S + 1.0 for a in failed), failed


def test_a_load_on_a_server_whose_errors_are_huge_keeps_its_memory(tmp_path: Path) -> None:
    """``agentrun load --replay`` against the server (no sandbox): every chat request answered
    HTTP 500 with a 1 GB body; the load's own client reads the head of each (main read all)."""
    args = ["load", "--replay", "todo-cli", "--base-url", "", "--model", "m", "--sessions", "1"]
    with HostileServer({MODELS: "models", CHAT: "huge_error"}) as server:
        args[4] = server.base_url
        args += ["--results", str(tmp_path / "results"), "--no-traces"]
        run = run_measured(agentrun_cmd(*args), timeout=300)
        chats = server.hits.count(CHAT)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert chats >= 2, (chats, run.stdout[-2000:], run.stderr[-2000:])  # retried: each read again
    assert run.peak_rss_mb < CEILING_MB, run.peak_rss_mb
    (load,) = (tmp_path / "results").glob("load-*/load.json")
    requests = json.loads(load.read_text())["requests"]
    assert requests and all(r["error"] == "http_status" for r in requests), requests[:2]
