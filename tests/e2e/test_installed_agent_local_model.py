"""Each installed agent on greet-cli with the local model (issue 22): a real agent, a real model.

Qwen2.5-Coder-1.5B on llama-server on this CPU (``agentrun local-model prepare``; CI prepares it
first), every request of the agent through the gateway in corrected mode. On two shared cores
a real agent's opening prompt (thousands of tokens of system prompt and tool schemas) takes
minutes to read, so each agent gets ``MAX_WALL_S`` and may well end there: the test asserts
that it ran to a stop reason with its figures recorded (result.json's requests = the gateway's
lines = its spans; each answered request's tokens and TTFT), not that it solved the task.
Budget: about the agent's wall time + 25 s per agent (the local model's start, the sandbox,
grading), under 5 minutes for the three: Qwen Code's opening request, 14.8K tokens, is refused
at once by the model's 8K context; opencode's, ~7.4K tokens, takes ~170 s to read here (150 s
read 55% of it), so it gets 45 s (``WALL_S``): it ends at its wall time either way, its request
recorded unanswered. The agents' image layers on greet-cli are built by ``.ci/agents-setup.sh``
(or the first run), not here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentrun_testsupport import load_result, only_run, read_jsonl, run_cli

from agentrun import localmodel
from agentrun.agents import AGENTS

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)]

MAX_WALL_S = 150
# CI time: an agent whose opening request cannot be read within MAX_WALL_S here gets less
WALL_S = {"opencode": 45}
STOP_REASONS = {"final_answer", "agent_stopped", "agent_crashed", "max_wall_time", "max_tokens"}


@pytest.fixture(scope="module")
def prepared() -> None:
    if not localmodel.is_prepared():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but the local model is not prepared: scripts/test.sh should have prepared it"
            )
        pytest.skip("the local model is not prepared: run `agentrun local-model prepare`")


@pytest.mark.parametrize("agent", sorted(AGENTS))  # every installed agent, one entry each
def test_greet_cli_with_an_installed_agent_on_the_local_model(
    agent: str, prepared: None, docker_client: object, tmp_path: Path
) -> None:
    done = run_cli(
        "task", "greet-cli", "--agent", agent, "--model", "local", "--max-wall", str(WALL_S.get(agent, MAX_WALL_S)),
        "--results", str(tmp_path), "--no-report", timeout=900,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]  # 1: tests failed
    run_dir = only_run(tmp_path)
    result = load_result(run_dir)
    rows = read_jsonl(run_dir / "gateway" / "requests.jsonl")
    spans = read_jsonl(run_dir / "gateway" / "spans.jsonl")
    answered = [r for r in rows if r["status"] == 200 and not r["cancelled"]]
    print(
        f"\n{agent}: {result['stop_reason']}, {result['requests']} requests ({len(answered)} answered), "
        f"hidden {result['hidden_tests']['passed']}/{result['hidden_tests']['total']}, "
        f"prompt tokens {result['usage']['prompt_tokens']}, TTFT {result['timings']['ttft_median_s']}, "
        f"agent wall {result['timings']['agent_wall_s']} s; {result['error']}"
    )
    assert result["stop_reason"] in STOP_REASONS, result["error"]
    assert result["requests"] == len(rows) == len(spans) >= 1
    assert result["hidden_tests"]["total"] == 12  # graded, whatever the agent did
    assert "qwen2.5-coder-1.5b" in result["model"] + result["model_label"]
    for row in answered:  # each answered request's figures
        timings = row["timings"]  # an unstreamed reply: the TTFT the gateway saw of the model's
        assert row["usage"]["prompt_tokens"] > 0, row
        assert timings.get("ttft_s", timings.get("upstream_ttft_s")) is not None, row
    if answered:
        assert result["usage"]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in answered)
        assert result["timings"]["ttft_median_s"] is not None
    for row in rows:  # a request the agent never got an answer to says why
        assert row in answered or row["error"], row
    assert (run_dir / "agent" / "stdout.txt").is_file()
