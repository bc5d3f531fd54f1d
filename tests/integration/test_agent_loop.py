"""The agent loop against the replay model over real HTTP and a real Docker sandbox:
what each mode does with a leaked call, a cut-off call and a tool the model keeps getting wrong."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.agent import Agent, Limits, Recorder
from agentrun.messages import Mode
from agentrun.model import OpenAIModel
from agentrun.policy import policy_for
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.replay.faults import FaultInjector
from agentrun.sandbox.docker import DockerSandbox
from agentrun.toolset import builtin_specs
from agentrun.trajectory import Trajectory, read_trajectory

pytestmark = pytest.mark.docker

WRITE = ScriptCall(name="write_file", arguments={"path": "a.txt", "content": "hello\n"})
DONE = ScriptTurn(content="All done.")


@pytest.fixture()
def sandbox(todo_image: str, tmp_path: Path) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(
        todo_image, run_id=f"loop-{tmp_path.name}"[:40], workspace=tmp_path / "ws"
    ) as box:
        yield box


def run(
    script: Script, sandbox: DockerSandbox, mode: Mode, tmp_path: Path, injector: Any = None, **limits: Any
) -> tuple[Agent, str]:
    with (
        ReplayServer(script, ttft=0, token_delay=0, fault_injector=injector) as server,
        OpenAIModel(server.base_url, "replay") as model,
    ):
        trajectory = Trajectory(tmp_path / f"{mode}.jsonl", run_id="t", mode=mode)
        agent = Agent(
            model,
            sandbox,
            builtin_specs(),
            policy=policy_for(mode, tool_retries=Limits(**limits).tool_retries),
            limits=Limits(**limits),
            recorder=Recorder(trajectory),
        )
        reason = agent.run("Write a.txt.")
        trajectory.close()
    return agent, reason


@pytest.mark.parametrize("mode", ["direct", "corrected"])
def test_call_leaked_into_content(mode: Mode, sandbox: DockerSandbox, tmp_path: Path) -> None:
    leaked = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hello\\n"}}\n</tool_call>'
    agent, reason = run(Script(turns=[ScriptTurn(content=leaked), DONE]), sandbox, mode, tmp_path)
    assert reason == "final_answer"
    written = (sandbox.workspace / "a.txt").exists()
    if mode == "direct":  # the serving stack alone: the call is prose, the reply ends the run
        assert not written and agent.stats.tool_calls == 0 and agent.stats.turns == 1
    else:
        assert (sandbox.workspace / "a.txt").read_text() == "hello\n"
        assert agent.stats.repairs["text_tool_call"] == 1 and agent.stats.turns == 2


def test_cut_off_call_is_never_run_and_is_asked_again(sandbox: DockerSandbox, tmp_path: Path) -> None:
    # every first try comes back cut off at max_tokens; the same request asked again comes out whole
    injector = FaultInjector(rate=1.0, mix="mixed", seed=0, kinds=("truncated",))
    agent, reason = run(
        Script(turns=[ScriptTurn(tool_calls=[WRITE]), DONE]),
        sandbox,
        "corrected",
        tmp_path,
        injector=injector,
    )
    assert reason == "final_answer"
    assert (sandbox.workspace / "a.txt").read_text() == "hello\n"  # only the complete call ran
    assert agent.stats.repairs["truncated"] == 1 and agent.stats.reasks == 1
    assert agent.stats.tool_calls == 1 and agent.stats.tool_failed == 0
    requests = [e for e in read_trajectory(tmp_path / "corrected.jsonl") if e["event"] == "request"]
    assert requests[1]["params"]["max_tokens"] == 2 * requests[0]["params"]["max_tokens"]


def test_retry_budget_ends_a_run_that_keeps_failing(sandbox: DockerSandbox, tmp_path: Path) -> None:
    bad = ScriptTurn(tool_calls=[ScriptCall(name="frobnicate_everything", arguments={"x": 1})])
    agent, reason = run(Script(turns=[bad] * 12 + [DONE]), sandbox, "corrected", tmp_path, tool_retries=3)
    assert reason == "tool_retry_budget"
    assert agent.stats.tool_failed == 4  # three retries, then the fourth failure ends it
    feedback = [m.content or "" for m in agent.messages if m.role == "tool"]
    assert "read_file" in feedback[0] and "retries left" in feedback[0]  # names the valid tools
    direct, direct_reason = run(Script(turns=[bad] * 6 + [DONE]), sandbox, "direct", tmp_path)
    assert direct_reason == "final_answer" and direct.stats.tool_failed >= 6  # no budget in direct mode
