"""Clients no one here wrote, through the gateway: LiteLLM's Python client doing a small coding task.

LiteLLM runs in its own venv (``.ci/peers-setup.sh`` makes it once, outside the checkout), as a
subprocess script (``peers/litellm_loop.py``), offline (``LITELLM_LOCAL_MODEL_COST_MAP``).
Direct mode fails the task on the same fault schedule on which corrected mode finishes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from agentrun.gateway import GatewayConfig, start
from agentrun.paths import cache_dir
from agentrun.replay import FaultInjector, ReplayServer, Script, ScriptCall, ScriptTurn

LOOP = Path(__file__).parent / "peers" / "litellm_loop.py"


def litellm_python() -> Path:
    python = cache_dir() / "peers" / "litellm" / "bin" / "python"
    if not (python.parent.parent / ".installed").is_file():
        message = f"LiteLLM's venv is missing ({python.parent.parent}); run .ci/peers-setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return python


def script() -> Script:
    write = ScriptCall(name="write_file", arguments={"path": "hello.py", "content": "print('hello')\n"})
    run = ScriptCall(name="run_shell", arguments={"command": "python hello.py"})
    return Script(
        turns=[
            ScriptTurn(content="I write the file.", tool_calls=[write]),
            ScriptTurn(content="Now I run it.", tool_calls=[run]),
            ScriptTurn(content="It prints hello. Done."),
        ]
    )


def test_litellm_client_finishes_in_corrected_mode_where_direct_fails(tmp_path: Path) -> None:
    """Streamed and not, each mode on a fresh replay model with the same fault schedule."""
    python = litellm_python()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "NO_PROXY": "*",
    }
    cases = [(mode, stream) for mode in ("direct", "corrected") for stream in (False, True)]
    with contextlib.ExitStack() as stack:
        runs = []
        for mode, stream in cases:
            injector = FaultInjector(rate=1.0, seed=5, kinds=("text_tool_call",), mix="mixed")
            server = stack.enter_context(
                ReplayServer(script(), ttft=0.01, token_delay=0.001, fault_injector=injector)
            )
            config = GatewayConfig(
                upstream=server.base_url, port=0, mode=mode, results=tmp_path / f"{mode}-{stream}"
            )  # type: ignore[arg-type]
            gw = stack.enter_context(start(config))
            work = tmp_path / f"work-{mode}-{stream}"
            work.mkdir()
            runs.append({"base_url": gw.base_url, "work": str(work), "stream": stream})
        done = subprocess.run(
            [str(python), str(LOOP), json.dumps(runs)], env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    outcome = {
        case: (r["ran"], (Path(run["work"]) / "hello.py").is_file(), "hello" in "".join(r["outputs"]))
        for case, r, run in zip(cases, results, runs, strict=True)
    }
    for stream in (False, True):
        assert outcome[("direct", stream)] == ([], False, False)
        assert outcome[("corrected", stream)] == (["write_file", "run_shell"], True, True)
