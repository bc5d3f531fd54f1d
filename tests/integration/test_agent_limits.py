"""Run limits hold while a request or a tool call is in flight, not only between turns:
a hung server, a shell command longer than the run, a token total reached mid-run."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.agent import Agent, Limits, Recorder
from agentrun.model import OpenAIModel
from agentrun.policy import policy_for
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.sandbox.docker import DockerSandbox
from agentrun.toolset import builtin_specs
from agentrun.trajectory import Trajectory

pytestmark = pytest.mark.docker

SLACK_S = 20  # start-up, one retry's backoff, a loaded machine: far below what a limit that fails costs


class _Hung(http.server.BaseHTTPRequestHandler):
    """Lists its model, then takes chat requests and never answers (a wedged server)."""

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        time.sleep(600)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture()
def sandbox(todo_image: str, tmp_path: Path) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(
        todo_image, run_id=f"limits-{tmp_path.name}"[:40], workspace=tmp_path / "ws"
    ) as box:
        yield box


def _agent(
    base_url: str, sandbox: DockerSandbox, tmp_path: Path, name: str = "replay", **limits: Any
) -> tuple[Agent, Any]:
    model = OpenAIModel(base_url, name)
    agent = Agent(
        model,
        sandbox,
        builtin_specs(),
        policy=policy_for("corrected", tool_retries=3),
        limits=Limits(**limits),
        recorder=Recorder(Trajectory(tmp_path / "t.jsonl", run_id="t", mode="corrected")),
    )
    return agent, model


def test_a_hung_server_cannot_hold_the_run_past_its_wall_time(sandbox: DockerSandbox, tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hung)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent, model = _agent(
            f"http://127.0.0.1:{server.server_address[1]}/v1", sandbox, tmp_path, "m", max_wall_s=4
        )
        started = time.monotonic()
        with model:
            reason = agent.run("Write a.txt.")
        elapsed = time.monotonic() - started
    finally:
        server.shutdown()
    assert reason == "max_wall_time"
    assert elapsed < 4 + SLACK_S, elapsed  # the request's own timeout is 600 s


def test_a_shell_command_ends_with_the_runs_wall_time(sandbox: DockerSandbox, tmp_path: Path) -> None:
    sleep = ScriptCall(name="run_shell", arguments={"command": "sleep 300", "timeout": 600})
    script = Script(turns=[ScriptTurn(tool_calls=[sleep]), ScriptTurn(content="done")])
    with ReplayServer(script, ttft=0, token_delay=0) as replay:
        agent, model = _agent(replay.base_url, sandbox, tmp_path, max_wall_s=5)
        started = time.monotonic()
        with model:
            reason = agent.run("Wait.")
        elapsed = time.monotonic() - started
    assert reason == "max_wall_time"
    assert elapsed < 5 + SLACK_S, elapsed
    assert agent.stats.tool_failed == 1  # the sleep was cut off (timeout), not waited out


def test_the_token_total_is_checked_before_each_request(sandbox: DockerSandbox, tmp_path: Path) -> None:
    write = [
        ScriptCall(name="write_file", arguments={"path": f"f{i}.txt", "content": "x" * 400})
        for i in range(12)
    ]
    script = Script(turns=[*(ScriptTurn(tool_calls=[c]) for c in write), ScriptTurn(content="done")])
    limit = 12_000
    with ReplayServer(script, ttft=0, token_delay=0) as replay:
        agent, model = _agent(replay.base_url, sandbox, tmp_path, max_tokens_total=limit)
        with model:
            reason = agent.run("Write the files.")
    assert reason == "max_tokens"
    assert 0 < agent.stats.turns < len(script.turns)
    assert agent.stats.usage.total_tokens <= limit  # never past it by a turn


@pytest.mark.parametrize("field", ["max_turns", "max_tokens_total", "max_wall_s", "max_tokens_per_turn"])
@pytest.mark.parametrize("value", [0, -1, float("nan")])
def test_limits_of_zero_or_less_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})
