"""Real agents through the gateway, direct vs corrected on the same fault schedule.

    python bench/gateway_agents.py [--seeds 2] [--agents qwen-code,mini-swe-agent]

Each installed agent (``python -m agentrun.agents.install``) does the same small task (write
greet.py, run it into out.txt) in its own tools, through ``agentrun gateway`` in front of a
replay model whose every call leaks into the text (persistent: a re-ask leaks again), with
designed leaks and with real model outputs (``--fault-source real``), once per mode and seed.
Prints a Markdown table for BENCHMARKS.md ("Real agents through the gateway").
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentrun.agents import AgentEndpoint, get_agent  # noqa: E402
from agentrun.agents.host import run_on_host  # noqa: E402
from agentrun.gateway import GatewayConfig, start  # noqa: E402
from agentrun.replay import FaultInjector, ReplayServer, Script, ScriptCall, ScriptTurn  # noqa: E402

GREET = 'import sys\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n\n\nprint(greet(sys.argv[1]))\n'
INSTRUCTION = "Write greet.py: it prints 'Hello, NAME!' for the name given as its argument. Run it for Ada into out.txt."


def task_script() -> Script:
    write = ScriptCall(name="write_file", arguments={"path": "greet.py", "content": GREET})
    run = ScriptCall(name="run_shell", arguments={"command": "python3 greet.py Ada > out.txt"})
    return Script(
        turns=[
            ScriptTurn(content="I write greet.py.", tool_calls=[write]),
            ScriptTurn(content="Now I run it for Ada.", tool_calls=[run]),
            ScriptTurn(content="greet.py prints the greeting; out.txt has it."),
        ]
    )


def one(name: str, mode: str, source: str, seed: int) -> dict[str, Any]:
    adapter = get_agent(name)
    with tempfile.TemporaryDirectory(prefix="agentrun-bench-") as tmp:
        work, home, results = Path(tmp, "work"), Path(tmp, "home"), Path(tmp, "gw")
        work.mkdir()
        home.mkdir()
        injector = FaultInjector(
            1.0, "mixed", seed, kinds=("text_tool_call",), source=source, persistent=True
        )
        with contextlib.ExitStack() as stack:
            script = adapter.render(task_script(), str(work))
            server = stack.enter_context(
                ReplayServer(script, ttft=0.01, token_delay=0.001, fault_injector=injector)
            )
            config = GatewayConfig(upstream=server.base_url, port=0, mode=mode, results=results)  # type: ignore[arg-type]
            gw = stack.enter_context(start(config))
            run = run_on_host(
                adapter,
                INSTRUCTION,
                AgentEndpoint(gw.base_url, "replay"),
                workdir=work,
                home=home,
                timeout_s=300,
            )
        records = [json.loads(x) for x in (results / "requests.jsonl").read_text().splitlines()]
        out = work / "out.txt"
        return {
            "done": out.is_file()
            and out.read_text() == "Hello, Ada!\n"
            and (work / "greet.py").read_text() == GREET,
            "status": run.outcome.exit_status,
            "requests": len(records),
            "leaks": injector.injected["text_tool_call"],
            "repaired": sum(
                1 for r in records for x in r.get("repairs") or [] if x["kind"] == "text_tool_call"
            ),
            "wall": run.wall_s,
        }


def row(name: str, source: str, mode: str, runs: list[dict[str, Any]]) -> str:
    statuses = Counter(r["status"] for r in runs)
    return (
        f"| {name} {get_agent(name).version} | {source} | {mode} | {sum(r['done'] for r in runs)}/{len(runs)} | "
        f"{', '.join(f'{s} {n}' for s, n in statuses.items())} | {statistics.median(r['requests'] for r in runs):g} | "
        f"{sum(r['leaks'] for r in runs)} | {sum(r['repaired'] for r in runs)} | "
        f"{statistics.median(r['wall'] for r in runs):.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--agents", default="qwen-code,mini-swe-agent")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"Measured {dt.date.today()} by `python bench/gateway_agents.py --seeds {args.seeds}` on "
        f"{platform.machine()}, CPython {platform.python_version()}, load average {load[0]:.1f} at start."
    )
    print()
    print(
        "| client | leaks | mode | task done | agent's own ending | requests (median) | calls leaked | repaired | wall s (median) |"
    )
    print("|---|---|---|---:|---|---:|---:|---:|---:|")
    for name in args.agents.split(","):
        for source in ("designed", "real"):
            for mode in ("direct", "corrected"):
                runs = [one(name, mode, source, seed) for seed in range(1, args.seeds + 1)]
                print(row(name, source, mode, runs), flush=True)


if __name__ == "__main__":
    main()
