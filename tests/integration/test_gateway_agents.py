"""Agents no one here wrote, through the gateway: Qwen Code (npm) and mini-swe-agent (PyPI), each
doing a small coding task with its own tools, on a replay model whose every call leaks into the
text (designed leaks, and real model outputs with ``--fault-source real``).

The agents are installed once, pinned, outside the checkout (``.ci/agents-setup.sh``). The fault
schedule is persistent: a re-ask gets the same leak (mini-swe-agent re-asks on its own after a
reply without a call). Direct mode fails the task on it; corrected mode finishes it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from agentrun.agents import AgentEndpoint, get_agent
from agentrun.agents.host import installed_prefix, run_on_host
from agentrun.gateway import GatewayConfig, start
from agentrun.replay import FaultInjector, ReplayServer, Script, ScriptCall, ScriptTurn

pytestmark = pytest.mark.slow

GREET = 'import sys\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n\n\nprint(greet(sys.argv[1]))\n'
INSTRUCTION = "Write greet.py: it prints 'Hello, NAME!' for the name given as its argument. Run it for Ada into out.txt."


def task_script() -> Script:
    """The task in agentrun's tools; each adapter writes it in its agent's own."""
    write = ScriptCall(name="write_file", arguments={"path": "greet.py", "content": GREET})
    run = ScriptCall(name="run_shell", arguments={"command": "python3 greet.py Ada > out.txt"})
    return Script(
        turns=[
            ScriptTurn(content="I write greet.py.", tool_calls=[write]),
            ScriptTurn(content="Now I run it for Ada.", tool_calls=[run]),
            ScriptTurn(content="greet.py prints the greeting; out.txt has it."),
        ]
    )


def installed(name: str) -> Path:
    prefix = installed_prefix(get_agent(name))
    if not (prefix / ".installed").is_file():
        message = f"{name} is not installed ({prefix}); run .ci/agents-setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return prefix


def run_case(name: str, mode: str, source: str, tmp: Path) -> dict[str, object]:
    adapter = get_agent(name)
    work, home, results = tmp / "work", tmp / "home", tmp / "gateway"
    work.mkdir(parents=True)
    home.mkdir()
    script = adapter.render(task_script(), str(work))
    injector = FaultInjector(
        rate=1.0, seed=7, kinds=("text_tool_call",), mix="mixed", source=source, persistent=True
    )
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(
            ReplayServer(script, ttft=0.01, token_delay=0.001, fault_injector=injector)
        )
        gw = stack.enter_context(
            start(GatewayConfig(upstream=server.base_url, port=0, mode=mode, results=results))
        )  # type: ignore[arg-type]
        endpoint = AgentEndpoint(base_url=gw.base_url, model="replay")
        run = run_on_host(
            adapter, INSTRUCTION, endpoint, workdir=work, home=home, timeout_s=240, prefix=installed(name)
        )
    records = [json.loads(line) for line in (results / "requests.jsonl").read_text().splitlines()]
    out = work / "out.txt"
    return {
        "done": (work / "greet.py").is_file() and out.is_file() and out.read_text() == "Hello, Ada!\n",
        "written": (work / "greet.py").read_text() if (work / "greet.py").is_file() else None,
        "submitted": run.outcome.submitted,
        "status": run.outcome.exit_status,
        "requests": len(records),
        "leaks": injector.injected["text_tool_call"],
        "repaired": sum(1 for r in records for x in r.get("repairs") or [] if x["kind"] == "text_tool_call"),
        "log": (run.returncode, run.stderr[-1500:]),
    }


@pytest.mark.parametrize("source", ["designed", "real"])
@pytest.mark.parametrize("name", ["qwen-code", "mini-swe-agent"])
def test_agent_finishes_in_corrected_mode_where_direct_fails(name: str, source: str, tmp_path: Path) -> None:
    installed(name)
    direct = run_case(name, "direct", source, tmp_path / "direct")
    corrected = run_case(name, "corrected", source, tmp_path / "corrected")
    # direct: the first reply's call is prose to the agent; nothing is written or run
    assert direct["done"] is False and direct["written"] is None, direct
    assert direct["leaks"] >= 1 and direct["repaired"] == 0, direct
    # corrected: every leaked call reached the agent as a call, and the task is done
    assert corrected["done"] is True and corrected["written"] == GREET, corrected
    assert corrected["submitted"] is True, corrected
    assert corrected["leaks"] >= 2 and corrected["repaired"] == corrected["leaks"], corrected
    if name == "mini-swe-agent":  # it gave up after three replies without a call
        assert direct["status"] == "RepeatedFormatError" and direct["submitted"] is False, direct
