"""todo-cli end to end: the real CLI, a real container, the replay model over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import first_line, load_result, only_run, read_jsonl, run_cli, spawn_cli, stop

pytestmark = pytest.mark.docker


def _labelled(docker_client: Any, run_id: str | None = None) -> list[dict[str, Any]]:
    """Container summaries in one call (others' containers come and go on this engine meanwhile)."""
    label = f"agentrun.run_id={run_id}" if run_id else "agentrun=1"
    return list(docker_client.api.containers(all=True, filters={"label": label}))


def test_embedded_replay_model_passes_every_hidden_test(
    tmp_path: Path, todo_image: str, docker_client: Any
) -> None:
    proc = run_cli("task", "todo-cli", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "replay model (scripted, not a real LLM)" in proc.stdout + proc.stderr
    run_dir = only_run(tmp_path)
    result = load_result(run_dir)
    assert result["hidden_tests"] == {"passed": 16, "failed": 0, "total": 16}
    assert result["own_tests"]["total"] >= 7 and result["own_tests"]["failed"] == 0
    assert result["stop_reason"] == "final_answer" and result["mode"] == "corrected"
    assert result["network"] is False

    events = read_jsonl(run_dir / "trajectory.jsonl")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end" and "grading" in kinds
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    responses = [e for e in events if e["event"] == "response"]
    assert len(responses) == result["requests"]
    assert sum(r["completion"]["usage"]["total_tokens"] for r in responses) == result["usage"]["total_tokens"]
    assert sum(e["event"] == "tool_result" for e in events) == result["tool_calls"]["total"]

    atif = json.loads((run_dir / "trajectory.atif.json").read_text())  # Harbor's format too
    assert atif["schema_version"] == "ATIF-v1.4" and atif["session_id"] == result["run_id"]
    assert [s["step_id"] for s in atif["steps"]] == list(range(1, len(atif["steps"]) + 1))
    assert [s["source"] for s in atif["steps"][:2]] == ["system", "user"]
    agent_steps = atif["steps"][2:]
    assert len(agent_steps) == result["turns"] and all(s["source"] == "agent" for s in agent_steps)
    for step in agent_steps:  # each call answered by its own result, in the same order
        calls = [c["tool_call_id"] for c in step.get("tool_calls", [])]
        assert calls == [r["source_call_id"] for r in step.get("observation", {}).get("results", [])]
    assert atif["final_metrics"]["total_prompt_tokens"] == result["usage"]["prompt_tokens"]  # no re-asks here

    spans = read_jsonl(run_dir / "spans.jsonl")
    assert {s["trace_id"] for s in spans} == {result["trace_id"]}
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert len(chats) == result["requests"]
    # every chat span carries the server's counter deltas for its request, and they add up to the run's
    queries = [s["attributes"].get("agentrun.server.prefix_cache_queries") for s in chats]
    assert None not in queries, "a chat span without agentrun.server.* attributes"
    assert sum(queries) == result["server"]["prefix_cache_queries"] > 0
    assert "todo.py" in (run_dir / "workspace.patch").read_text()
    assert (run_dir / "workspace" / "todo.py").is_file()
    assert not _labelled(docker_client, result["run_id"]), "the container must be removed"


HARBOR_IMAGE = os.environ.get("HARBOR_IMAGE", "agentrun-harbor:0.25.0")  # scripts/harbor-env.sh's tag
HARBOR_ENV = Path(__file__).resolve().parents[2] / "scripts" / "harbor-env.sh"


def _harbor_validates(path: Path, docker_client: Any) -> subprocess.CompletedProcess[str]:
    """Harbor's own ATIF validator on ``path``, in the Harbor reference image (.ci/harbor-setup.sh
    builds it before the tests in CI; elsewhere it may be missing, and the check is skipped)."""
    try:
        docker_client.images.get(HARBOR_IMAGE)
    except Exception as exc:  # docker.errors.ImageNotFound
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the Harbor image {HARBOR_IMAGE} is missing: {exc}")
        pytest.skip(f"no Harbor image {HARBOR_IMAGE} (scripts/harbor-env.sh build makes it)")
    cmd = [str(HARBOR_ENV), "run", "python", "-m", "harbor.utils.trajectory_validator", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=path.parent)


def test_rejected_calls_reach_atif_as_the_model_wrote_them(
    tmp_path: Path, todo_image: str, docker_client: Any
) -> None:
    # direct mode with injected faults (seeded): calls with broken JSON and to unknown tools are
    # rejected, and ATIF keeps what the model wrote, where it wrote it
    proc = run_cli("task", "todo-cli", "--mode", "direct", "--faults", "0.5", "--results", str(tmp_path))
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    run_dir = only_run(tmp_path)
    events = read_jsonl(run_dir / "trajectory.jsonl")
    rejected = [e for e in events if e["event"] == "tool_result" and e.get("rejected")]
    atif = json.loads((run_dir / "trajectory.atif.json").read_text())
    steps = {s["extra"]["turn"]: s for s in atif["steps"] if s["source"] == "agent"}
    kinds = set()
    for e in rejected:
        step, call_id, text = steps[e["turn"]], e["result"]["call_id"], e["arguments"]
        [call] = [c for c in step["tool_calls"] if c["tool_call_id"] == call_id]
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):  # a JSON object: shown as the model wrote it
            assert call["arguments"] == parsed and call_id not in step["extra"].get("raw_arguments", {})
        else:  # ATIF v1.4 arguments are an object: the text is kept whole beside it
            assert call["arguments"] == {} and step["extra"]["raw_arguments"][call_id] == text
        kinds.add(isinstance(parsed, dict))
    assert kinds == {True, False}, "the seeded faults give both kinds of rejected call"
    for step in steps.values():
        calls = [c["tool_call_id"] for c in step.get("tool_calls", [])]
        assert calls == [r["source_call_id"] for r in step.get("observation", {}).get("results", [])]
    check = _harbor_validates(run_dir / "trajectory.atif.json", docker_client)
    assert check.returncode == 0 and "Trajectory is valid" in check.stdout, check.stdout + check.stderr


def test_oracle_applies_the_reference_solution(tmp_path: Path, todo_image: str) -> None:
    proc = run_cli("task", "todo-cli", "--agent", "oracle", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = load_result(only_run(tmp_path))
    assert result["hidden_tests"]["passed"] == result["hidden_tests"]["total"] == 16
    assert result["requests"] == 0 and result["model"] == "oracle"


def test_separately_started_replay_server_and_timings(tmp_path: Path, todo_image: str) -> None:
    """The CLI against a ``replay serve`` of its own: the server plays the flags' schedule and
    the run's recorded timings sit on it. Both delays are above ``replay serve``'s defaults
    (0.05 s, 0.002 s per token), so a flag that did not reach the server makes its replies early,
    which load cannot hide; late is what load does (up to 0.31 s for one request at load 22 on
    2 cores), so the upper bound is on the best request and half the ttft. How exact the clocks
    and the schedule are is judged in tests/integration/test_model_replay.py."""
    ttft, delay = 0.15, 0.003
    server = spawn_cli(
        "replay",
        "serve",
        "--task",
        "todo-cli",
        "--port",
        "0",  # the server picks a free port and prints its URL: no port to race anyone for
        "--ttft",
        str(ttft),
        "--token-delay",
        str(delay),
    )
    try:
        base_url = first_line(server)  # printed once it listens
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1"), base_url
        proc = run_cli(
            "task", "todo-cli", "--base-url", base_url, "--model", "replay", "--results", str(tmp_path)
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        server.send_signal(signal.SIGINT)
        try:
            _out, served = server.communicate(timeout=30)
        finally:
            stop(server)
    assert f"ttft {ttft}s, {delay}s per token" in " ".join(served.split()), served  # the console wraps
    run_dir = only_run(tmp_path)
    assert load_result(run_dir)["base_url"] == base_url
    responses = [
        e["completion"] for e in read_jsonl(run_dir / "trajectory.jsonl") if e["event"] == "response"
    ]
    assert len(responses) >= 3
    # seconds past the configured schedule, per request, and the same for the long replies only
    late: dict[str, list[float]] = {"ttft": [], "e2e": [], "e2e of long replies": []}
    for completion in responses:
        timings, tokens = completion["timings"], completion["usage"]["completion_tokens"]
        late["ttft"].append(timings["ttft_s"] - ttft)
        late["e2e"].append(timings["e2e_s"] - (ttft + (tokens - 1) * delay))
        if tokens > 500:  # the file writes: 900-1500 tokens, where a drifting schedule shows
            late["e2e of long replies"].append(late["e2e"][-1])
    assert late["e2e of long replies"], late
    for name, values in late.items():
        # never early: the client's clock starts before the server's, and the server keeps a
        # deadline schedule (at least 2.7 s early for a long reply at the default token delay)
        assert all(v >= -0.001 for v in values), (name, values)
        # on the schedule for the best request: 2-14 ms late over 3 runs at load 22; a clock off
        # by half the ttft, or a schedule drifting 0.08 ms a token over a 934-token reply, misses it
        assert min(values) < ttft / 2, (name, values)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run_leaves_no_container(
    tmp_path: Path, todo_image: str, docker_client: Any, sig: int
) -> None:
    before = {c["Id"] for c in _labelled(docker_client)}
    proc = spawn_cli("task", "todo-cli", "--results", str(tmp_path), "--replay-token-delay", "0.02")
    try:
        deadline, mine = time.monotonic() + 120, []
        while not mine and time.monotonic() < deadline:
            mine = [  # by owner: other people's todo-cli runs share this engine
                c
                for c in _labelled(docker_client)
                if c["Id"] not in before
                and c["Labels"].get("agentrun.owner.pid") == str(proc.pid)
                and "agentrun.run_id" in c["Labels"]
            ]
            time.sleep(0.2)
        assert mine, "the run never started a container"
        run_id = mine[0]["Labels"]["agentrun.run_id"]
        time.sleep(1.0)  # mid-run: the replay model is streaming a long write_file call
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            stop(proc)
    assert proc.returncode == 130, err[-2000:]
    assert not _labelled(docker_client, run_id)
    result = load_result(only_run(tmp_path))
    assert result["stop_reason"] == "interrupted"
    assert (only_run(tmp_path) / "trajectory.jsonl").read_text().strip().endswith("}")
