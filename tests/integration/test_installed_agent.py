"""An installed agent inside the sandbox, every request through the gateway (issue 22).

mini-swe-agent and Qwen Code (each installed on top of todo-cli's image, a cached layer) solve
todo-cli on the replay model, whose reference-solution steps are written in their own tools; the hidden
tests grade the workspace; the run's request figures are the gateway's. And a probe run the same
way (the same launcher, relay, socket and container) shows the agent's container reaches the
gateway and nothing else.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import run_cli

from agentrun.agents import AgentEndpoint, AgentOutcome, Launch
from agentrun.agents.sandboxed import GatewaySocket, run_in_sandbox
from agentrun.config import RunConfig
from agentrun.lines import read_jsonl
from agentrun.replay import ReplayServer, Script, ScriptTurn
from agentrun.runner import run_task
from agentrun.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.slow

PROBE = r"""
import json, socket, sys, urllib.request
targets = json.loads(sys.argv[1])
out = {}
try:
    with urllib.request.urlopen("http://127.0.0.1:8010/health", timeout=10) as r:
        out["gateway"] = r.status
except Exception as exc:
    out["gateway"] = repr(exc)
for host, port in targets:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        out[f"{host}:{port}"] = "connected"
    except OSError as exc:
        out[f"{host}:{port}"] = type(exc).__name__
    finally:
        s.close()
try:
    socket.getaddrinfo("pypi.org", 443)
    out["dns"] = "resolved"
except OSError as exc:
    out["dns"] = type(exc).__name__
with open("/proc/net/dev") as f:
    out["interfaces"] = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Probe:
    """An "agent" that only tries to reach things (an adapter needs no inheritance)."""

    targets: list[tuple[str, int]]
    name: str = "probe"
    version: str = "0"
    package: str = "none"
    result_files: tuple[str, ...] = ()

    def install_commands(self, prefix: str) -> list[str]:
        return []

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        argv = ["python3", f"{home}/probe.py", json.dumps(self.targets)]
        return Launch(argv=argv, env={}, files={"probe.py": PROBE}, home=home, workdir=workdir)

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        return AgentOutcome(submitted=True, exit_status="probed", final=stdout)

    def render(self, script: Script, workdir: str) -> Script:
        return script


def listener() -> tuple[socket.socket, int]:
    """A port open on every host address (what the agent must not reach)."""
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen(8)

    def serve() -> None:
        with contextlib.suppress(OSError):  # closed at the end of the test
            while True:
                s.accept()[0].close()

    threading.Thread(target=serve, daemon=True).start()
    return s, s.getsockname()[1]


def test_the_agent_container_reaches_the_gateway_and_nothing_else(
    todo_image: str, docker_client: Any, tmp_path: Path
) -> None:
    ipam = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    bridge = ipam.get("Gateway") or str(
        next(ipaddress.ip_network(ipam["Subnet"]).hosts())
    )  # the host, seen from a container
    open_port, port = listener()
    host_ip = socket.gethostbyname(socket.gethostname())
    with ReplayServer(Script(turns=[ScriptTurn(content="hi")]), ttft=0.0, token_delay=0.0) as server:
        upstream_port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        targets = [
            (bridge, port),
            (host_ip, port),
            ("127.0.0.1", upstream_port),
            (bridge, upstream_port),
            ("1.1.1.1", 443),
        ]
        gw_socket = GatewaySocket()
        try:
            with DockerSandbox.start(
                todo_image, run_id="probe", root=tmp_path / "box", mounts=gw_socket.mounts
            ) as box:
                done = run_in_sandbox(
                    Probe(targets),
                    instruction="",
                    upstream=server.base_url,
                    model="replay",
                    mode="direct",
                    sandbox=box,
                    socket=gw_socket,
                    run_dir=tmp_path / "run",
                    wall_s=60,
                )
        finally:
            gw_socket.close()
            open_port.close()
    seen = json.loads(done.outcome.final)
    assert seen["gateway"] == 200, seen  # the relay reaches the gateway's socket
    assert seen["interfaces"] == ["lo"], seen  # no network interface but loopback
    assert seen["dns"] == "gaierror", seen
    for host, p in targets:
        assert seen[f"{host}:{p}"] != "connected", (host, p, seen)


@pytest.mark.parametrize("agent", ["mini-swe-agent", "qwen-code"])
def test_an_installed_agent_solves_todo_cli_through_the_gateway(
    agent: str, todo_image: str, tmp_path: Path
) -> None:
    result = run_task(RunConfig(task="todo-cli", agent=agent, results_dir=tmp_path))
    run_dir = Path(result.results_path)
    assert result.stop_reason == "final_answer", (result.stop_reason, result.error)
    assert result.hidden_tests.total == 16 and result.hidden_tests.passed == 16, result.hidden_tests
    rows = read_jsonl(run_dir / "gateway" / "requests.jsonl")
    spans = read_jsonl(run_dir / "gateway" / "spans.jsonl")
    assert result.requests == len(rows) == len(spans) >= 5
    assert result.tool_calls.total == sum(len(r["reply"]["tool_calls"]) for r in rows)
    assert (run_dir / "agent" / "stdout.txt").is_file()
    if agent == "mini-swe-agent":
        trajectory = json.loads((run_dir / "agent" / "mini-trajectory.json").read_text())
        assert trajectory["info"]["exit_status"] == "Submitted"


def test_compare_with_an_installed_agent_prints_direct_vs_corrected(todo_image: str, tmp_path: Path) -> None:
    """The same fault schedule for both modes: corrected repairs what the gateway can, direct
    passes it on untouched (mini-swe-agent's own format-error retry then asks again)."""
    done = run_cli(
        "compare", "todo-cli", "--agent", "mini-swe-agent", "--trials", "1", "--faults", "0.5",
        "--results", str(tmp_path), "--no-report", timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "direct" in done.stdout and "corrected" in done.stdout
    compare = json.loads(next(tmp_path.glob("compare-*/compare.json")).read_text())
    direct, corrected = compare["modes"]["direct"], compare["modes"]["corrected"]
    assert {r["agent"] for r in compare["runs"]} == {"mini-swe-agent"}
    assert direct["repaired_total"] == {} and sum(corrected["repaired_total"].values()) > 0
    assert direct["tool_calls_median"] > 0 and corrected["tool_calls_median"] > 0
    assert corrected["fully_passed"] == 1


def test_a_dataset_run_with_an_installed_agent(todo_image: str, tmp_path: Path) -> None:
    """``agentrun run --agent NAME``: each trial is the same run as ``task --agent``, its
    requests through the gateway, graded by the task's hidden tests, in the job's ledger."""
    job = tmp_path / "job"
    done = run_cli(
        "run", str(Path(__file__).resolve().parents[2] / "tasks" / "todo-cli"), "--agent", "qwen-code",
        "--job", str(job), "--no-report", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ledger = json.loads((job / "job.json").read_text())
    assert ledger["spec"]["agent"] == "qwen-code"
    (trial,) = ledger["trials"]
    assert (trial["cause"], trial["stop_reason"], trial["reward"]) == ("ok", "final_answer", 1.0), trial
    run_dir = job / trial["run_dir"]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["agent"] == "qwen-code" and result["hidden_tests"]["passed"] == 16
    rows = read_jsonl(run_dir / "gateway" / "requests.jsonl")
    assert result["requests"] == len(rows) == len(read_jsonl(run_dir / "gateway" / "spans.jsonl")) >= 5


def test_a_live_load_of_an_installed_agent(todo_image: str, tmp_path: Path) -> None:
    """``agentrun load TASK --agent NAME``: two sessions of the agent at once on the embedded
    replay model (its steps in the agent's tools); the load's records are its gateways' lines."""
    done = run_cli(
        "load", "todo-cli", "--agent", "qwen-code", "--sessions", "2", "--concurrency", "2",
        "--results", str(tmp_path), "--no-report", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    load = json.loads(next(tmp_path.glob("load-*/load.json")).read_text())
    assert load["workload"]["agent"] == "qwen-code"
    sessions = load["sessions"]
    why = [(s["stop_reason"], _error(s["run_dir"])) for s in sessions]
    assert [(s["hidden_tests_passed"], s["hidden_tests_total"]) for s in sessions] == [(16, 16)] * 2, why
    for s in sessions:  # each session's records: one per request its gateway saw, with timings
        rows = read_jsonl(Path(s["run_dir"]) / "gateway" / "requests.jsonl")
        mine = [r for r in load["requests"] if r["session"] == s["session"]]
        assert len(mine) == len(rows) == s["requests"] >= 5
        assert all(r["ttft_s"] is not None and r["prompt_tokens"] > 0 for r in mine), mine
    assert {s["session"] for s in sessions} == {"s0000", "s0001"}


def _error(run_dir: str) -> str | None:
    """A session's error as its result.json says it (what a failed assertion shows)."""
    path = Path(run_dir) / "result.json"
    return json.loads(path.read_text()).get("error") if path.is_file() else "no result.json"
