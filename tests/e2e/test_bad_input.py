"""Bad input to every command, through the real ``agentrun`` console script.

Each case must end with exit code 2 and exactly one line on stderr, ``error: ...`` naming what
to fix (no typer box, no traceback), and leave nothing behind that looks like a result: the
results folder it was given stays empty (no run folder, no result.json, no compare.json).

The cases run concurrently once per module (each is a separate process of ~1 s), then one
test per case checks its outcome.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

AGENTRUN = Path(sys.executable).with_name("agentrun")  # the console script of this environment


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]  # "{name}" is replaced by the world's paths and URLs (see ``world``)
    needle: str  # the message must say this (case-insensitive)
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)


def c(id: str, args: str, needle: str, stdin: bytes = b"", **env: str) -> Case:
    return Case(id, tuple(args.split()), needle, stdin, env)


DEEP_LINE = b"[" * 100_000 + b"\n"
CASES = [
    # -- the top level and click's own usage errors
    c("unknown-command", "bogus", "no such command 'bogus'"),
    c("unknown-option", "task todo-cli --bogus --results {results}", "no such option: --bogus"),
    c("missing-argument", "task --results {results}", "missing argument"),
    c("option-needs-value", "task todo-cli --results {results} --seed", "requires an argument"),
    c("not-an-integer", "task todo-cli --seed abc --results {results}", "--seed"),
    # -- task
    c("task-unknown", "task no-such-task --results {results}", "unknown task"),
    c("task-folder-not-a-task", "task {dir} --results {results}", "task"),
    c(
        "task-step-no-instruction",
        "task {steps_missing} --results {results}",
        "missing steps/extend/instruction.md",
    ),
    c("task-steps-strict", "task {steps_strict} --agent oracle --results {results}", "harbor profile only"),
    c("task-mode", "task todo-cli --mode fixed --results {results}", "'fixed' is not one of"),
    c("task-agent", "task todo-cli --agent robot --results {results}", "--agent"),
    c("task-faults-above-1", "task todo-cli --faults 1.5 --results {results}", "--faults"),
    c("task-faults-negative", "task todo-cli --faults -1 --results {results}", "--faults"),
    c("task-faults-nan", "task todo-cli --faults nan --results {results}", "--faults"),
    c("task-fault-mix", "task todo-cli --fault-mix bogus --results {results}", "'bogus' is not one of"),
    c("task-max-turns-0", "task todo-cli --max-turns 0 --results {results}", "--max-turns"),
    c("task-max-turns-negative", "task todo-cli --max-turns -1 --results {results}", "--max-turns"),
    c("task-max-wall-0", "task todo-cli --max-wall 0 --results {results}", "--max-wall"),
    c("task-max-wall-nan", "task todo-cli --max-wall nan --results {results}", "--max-wall"),
    c("compare-max-wall-negative", "compare todo-cli --max-wall -5 --results {results}", "--max-wall"),
    c("task-temperature", "task todo-cli --temperature 7 --results {results}", "--temperature"),
    c("task-replay-ttft-negative", "task todo-cli --replay-ttft -1 --results {results}", "--replay-ttft"),
    c("task-replay-ttft-inf", "task todo-cli --replay-ttft inf --results {results}", "finite"),
    c(
        "task-token-delay",
        "task todo-cli --replay-token-delay -0.5 --results {results}",
        "--replay-token-delay",
    ),
    c("task-results-is-a-file", "task todo-cli --results {file}", "is a file"),
    c("task-results-under-a-file", "task todo-cli --results {file}/sub", "is a file"),
    c("task-results-read-only", "task todo-cli --results {readonly}/results", "cannot write"),
    c(
        "task-base-url-no-model",
        "task todo-cli --base-url http://127.0.0.1:9/v1 --results {results}",
        "--model",
    ),
    c(
        "task-base-url-not-url",
        "task todo-cli --base-url localhost --model m --results {results}",
        "http(s) URL",
    ),
    c(
        "task-base-url-bad-port",
        "task todo-cli --base-url http://h:99999/v1 --model m --results {results}",
        "URL",
    ),
    c(
        "task-metrics-not-url",
        "task todo-cli --server-metrics metrics --results {results}",
        "--server-metrics",
    ),
    c(
        "task-otlp-protocol",
        "task todo-cli --otlp-protocol carrier-pigeon --results {results}",
        "--otlp-protocol",
    ),
    c(
        "task-docker-not-running",
        "task todo-cli --results {results}",
        "docker",
        DOCKER_HOST="unix:///nonexistent/docker.sock",
    ),
    c(
        "task-html-page",
        "task todo-cli --base-url {wrong}/html/v1 --model m --results {results}",
        "not an OpenAI-compatible API",
    ),
    c(
        "task-http-401",
        "task todo-cli --base-url {wrong}/401/v1 --model m --results {results}",
        "check --api-key",
    ),
    c(
        "task-http-403",
        "task todo-cli --base-url {wrong}/403/v1 --model m --results {results}",
        "check --api-key",
    ),
    c(
        "task-http-404",
        "task todo-cli --base-url {wrong}/404/v1 --model m --results {results}",
        "check --base-url",
    ),
    c(
        "task-unreachable",
        "task todo-cli --base-url http://127.0.0.1:{dead_port}/v1 --model m --results {results}",
        "cannot reach",
    ),
    c(
        "task-otlp-endpoint-not-url",
        "task todo-cli --otlp-endpoint notaurl --results {results}",
        "--otlp-endpoint",
    ),
    c(
        "task-faults-with-base-url",
        "task todo-cli --faults 0.5 --base-url {wrong}/html/v1 --model m --results {results}",
        "replay model only",
    ),
    c("task-image-map", "task todo-cli --image-map nope --results {results}", "is not FROM=TO"),
    c(
        "task-image-map-file",
        "task todo-cli --image-map-file {tmp}/missing.txt --results {results}",
        "missing.txt",
    ),
    # -- run (many tasks)
    c("run-no-folder", "run {tmp}/missing --results {results}", "no such folder"),
    c("run-not-a-task-folder", "run {dir} --results {results}", "neither a task"),
    c("run-agent", "run {dir} --agent robot --results {results}", "--agent"),
    c("run-concurrency-0", "run {dir} --concurrency 0 --results {results}", "--concurrency"),
    c("run-image-map", "run {dir} --image-map nope --results {results}", "is not FROM=TO"),
    # -- resume
    c("resume-not-a-run", "resume {dir}", "not a run folder"),
    c("resume-missing", "resume {tmp}/no-such-run", "not a run folder"),
    c("resume-no-argument", "resume", "missing argument"),
    # -- tasks
    c("tasks-extra-argument", "tasks extra", "unexpected extra argument"),
    # -- compare
    c("compare-unknown-task", "compare no-such-task --results {results}", "unknown task"),
    c("compare-kv-budget-negative", "compare todo-cli --kv-budget -5 --results {results}", "--kv-budget"),
    c("compare-kv-budget-0", "compare todo-cli --kv-budget 0 --results {results}", "--kv-budget"),
    c("compare-trials-0", "compare todo-cli --trials 0 --results {results}", "--trials"),
    c("compare-concurrency-0", "compare todo-cli --concurrency 0 --results {results}", "--concurrency"),
    c("compare-faults", "compare todo-cli --faults 2 --results {results}", "--faults"),
    c(
        "compare-faults-with-base-url",
        "compare todo-cli --faults 0.2 --base-url {wrong}/html/v1 --model m --results {results}",
        "replay model only",
    ),
    c("compare-results-is-a-file", "compare todo-cli --results {file}", "is a file"),
    c("compare-max-turns-0", "compare todo-cli --max-turns 0 --results {results}", "--max-turns"),
    c(
        "compare-html-page",
        "compare todo-cli --trials 1 --base-url {wrong}/html/v1 --model m --results {results}",
        "not an OpenAI-compatible API",
    ),
    # -- replay serve / script
    c("replay-port-too-big", "replay serve --task todo-cli --port 99999", "--port"),
    c("replay-port-negative", "replay serve --task todo-cli --port -1", "--port"),
    c("replay-port-busy", "replay serve --task todo-cli --port {busy_port}", "cannot listen"),
    c("replay-host-bad", "replay serve --task todo-cli --host 999.1.1.1 --port 0", "cannot listen"),
    c("replay-no-task-no-script", "replay serve", "exactly one of"),
    c("replay-script-missing", "replay serve --script {tmp}/missing.json", "does not exist"),
    c("replay-script-not-json", "replay serve --script {file}", "not a replay script"),
    c("replay-script-binary", "replay serve --script {binary}", "not a replay script"),
    c("replay-faults", "replay serve --task todo-cli --faults 1.5", "--faults"),
    c("replay-fault-mix", "replay serve --task todo-cli --faults 0.5 --fault-mix bogus", "--fault-mix"),
    c("replay-ttft-negative", "replay serve --task todo-cli --ttft -1", "--ttft"),
    c("replay-kv-gpu-negative", "replay serve --task todo-cli --kv-gpu-tokens -1", "--kv-gpu-tokens"),
    c("replay-kv-log-is-dir", "replay serve --task todo-cli --kv-log {dir}", "is a folder"),
    c("replay-script-output-is-dir", "replay script todo-cli -o {dir}", "is a folder"),
    c("replay-script-output-no-parent", "replay script todo-cli -o {tmp}/no/such/s.json", "does not exist"),
    c("replay-script-unknown-task", "replay script no-such-task", "unknown task"),
    # -- repair
    c("repair-deeply-nested-line", "repair --tools {tools}", "could not be read", stdin=DEEP_LINE),
    c("repair-binary-stdin", "repair --tools {tools}", "could not be read", stdin=b"\xff\xfe\x00\x81\n"),
    c("repair-not-json-line", "repair --tools {tools}", "could not be read", stdin=b"hello\n"),
    c("repair-tools-missing", "repair --tools {tmp}/none.json", "cannot read tools file"),
    c("repair-tools-not-json", "repair --tools {file}", "not valid JSON"),
    c("repair-tools-empty", "repair --tools {empty_array}", "non-empty JSON array"),
    c("repair-mode", "repair --tools {tools} --mode fixing", "--mode"),
    c("repair-no-tools", "repair", "missing option '--tools'"),
    # -- logstats
    c("logstats-binary", "logstats {binary}", "binary data"),
    c("logstats-missing", "logstats {tmp}/none.log", "does not exist"),
    c("logstats-folder", "logstats {dir}", "not a file"),
    c("logstats-empty", "logstats {empty_log}", "is empty"),
    c("logstats-not-vllm", "logstats {file}", "no vLLM message"),
    # -- capacity
    c(
        "capacity-offload-negative",
        "capacity --gpu-kv-tokens 1000 --max-model-len 100 --kv-memory-gib 8 --cpu-offload-gib -3",
        "--cpu-offload-gib",
    ),
    c(
        "capacity-kv-memory-negative",
        "capacity --gpu-kv-tokens 1000 --max-model-len 100 --kv-memory-gib -8",
        "--kv-memory-gib",
    ),
    c("capacity-gpu-tokens-0", "capacity --gpu-kv-tokens 0 --max-model-len 100", "--gpu-kv-tokens"),
    c(
        "capacity-max-model-len-negative",
        "capacity --gpu-kv-tokens 10 --max-model-len -100",
        "--max-model-len",
    ),
    c(
        "capacity-max-num-seqs-0",
        "capacity --gpu-kv-tokens 10 --max-model-len 10 --max-num-seqs 0",
        "--max-num-seqs",
    ),
    c(
        "capacity-offload-without-memory",
        "capacity --gpu-kv-tokens 10 --max-model-len 10 --cpu-offload-gib 4",
        "--kv-memory-gib",
    ),
    c("capacity-missing-option", "capacity --gpu-kv-tokens 10", "missing option"),
    # -- kv-replay
    c("kv-replay-url", "kv-replay --base-url nowhere --model m", "--base-url"),
    c(
        "kv-replay-requests-0",
        "kv-replay --base-url http://127.0.0.1:9/v1 --model m --requests 0",
        "--requests",
    ),
    c(
        "kv-replay-prefix",
        "kv-replay --base-url http://127.0.0.1:9/v1 --model m --target-tokens 10 --shared-prefix-tokens 20",
        "--shared-prefix-tokens",
    ),
    c(
        "kv-replay-unreachable",
        "kv-replay --base-url http://127.0.0.1:{dead_port}/v1 --model m",
        "cannot reach",
    ),
    c(
        "kv-replay-html-page",
        "kv-replay --base-url {wrong}/html/v1 --model m",
        "not an OpenAI-compatible API",
    ),
    # -- report
    c("report-missing", "report {tmp}/no-such-run", "no such file"),
    c("report-not-results", "report {dir}", "not a results folder"),
    c("report-no-argument", "report", "missing argument"),
    # -- chaos-proxy
    c("chaos-proxy-port", "chaos-proxy --upstream http://127.0.0.1:9/v1 --port 99999", "port"),
    c("chaos-proxy-upstream", "chaos-proxy --upstream nowhere --port 0", "--upstream"),
    c("chaos-proxy-rate", "chaos-proxy --upstream http://127.0.0.1:9/v1 --port 0 --rate 3", "rate"),
    c(
        "chaos-proxy-schedule",
        "chaos-proxy --upstream http://127.0.0.1:9/v1 --port 0 --schedule bogus",
        "unknown fault",
    ),
    # -- load
    c("load-sessions-0", "load todo-cli --sessions 0 --results {results}", "--sessions"),
    c("load-rate-negative", "load todo-cli --rate -1 --results {results}", "--rate"),
    c("load-slo", "load todo-cli --slo fast --results {results}", "--slo"),
    c("load-unknown-task", "load no-such-task --results {results}", "unknown task"),
    c("load-results-is-a-file", "load todo-cli --results {file}", "is a file"),
    c("load-replay-missing", "load --replay {tmp}/nothing --results {results}", "no recording"),
    c(
        "load-base-url",
        "load --replay todo-cli --base-url notaurl --model m --results {results}",
        "http(s) URL",
    ),
    c(
        "load-otlp-endpoint-not-url",
        "load todo-cli --otlp-endpoint ftp://collector:4317 --results {results}",
        "--otlp-endpoint",
    ),
    c(
        "load-server-metrics",
        "load todo-cli --server-metrics ftp://x --results {results}",
        "--server-metrics",
    ),
    c("load-replay-ttft-inf", "load --replay todo-cli --replay-ttft inf --results {results}", "finite"),
    c(
        "load-token-delay-neg",
        "load todo-cli --replay-token-delay -1 --results {results}",
        "--replay-token-delay",
    ),
    c(
        "load-dead-server",
        "load --replay todo-cli --base-url http://127.0.0.1:9/v1 --model m --results {results}",
        "cannot reach",
    ),
    # -- sandbox
    c("sandbox-build-unknown-task", "sandbox build no-such-task", "unknown task"),
    c("sandbox-prune-extra", "sandbox prune now", "unexpected extra argument"),
    c("sandbox-prune-no-docker", "sandbox prune", "docker", DOCKER_HOST="unix:///nonexistent/docker.sock"),
    c("sandbox-prune-host-address", "sandbox prune --docker-host box1:2375", "not a docker engine address"),
    c("sandbox-prune-dead-host", "sandbox prune --docker-host tcp://127.0.0.1:9", "tcp://127.0.0.1:9"),
    c("sandbox-unknown-subcommand", "sandbox rebuild", "no such command"),
    # -- local-model
    c("local-model-port", "local-model serve --port 70000", "--port"),
    c("local-model-ctx", "local-model serve --ctx 0", "--ctx"),
    c("local-model-threads", "local-model serve --threads 0", "--threads"),
    c("local-model-jobs", "local-model prepare --jobs -2", "--jobs"),
]


class _WrongServer(http.server.BaseHTTPRequestHandler):
    """Where an OpenAI-compatible API was expected: ``/html/...`` a web server's welcome page,
    ``/401/...`` (403, 404) a server refusing every request with that status."""

    def _page(self) -> None:
        kind = self.path.split("/")[1]
        if kind == "html":
            status, kind_type = 200, "text/html"
            body = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
        else:
            status, kind_type = int(kind), "application/json"
            body = json.dumps({"error": {"message": "no such thing here"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _page

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("bad-input")
    (tmp / "notes.txt").write_text("just some text\n")
    (tmp / "blob.bin").write_bytes(bytes(range(256)) * 64)
    (tmp / "folder").mkdir()
    (tmp / "empty.json").write_text("[]")
    (tmp / "vllm.log").write_text("")
    readonly = tmp / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    tools = Path(__file__).resolve().parents[1] / "fixtures" / "repair" / "tools.json"
    steps = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks" / "multi-step"
    shutil.copytree(steps, tmp / "steps-missing")
    (tmp / "steps-missing" / "steps" / "extend" / "instruction.md").unlink()
    shutil.copytree(steps, tmp / "steps-strict")
    with (tmp / "steps-strict" / "task.toml").open("a") as toml:
        toml.write('\n[metadata.agentrun]\nprofile = "strict"\n')
    html = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WrongServer)
    threading.Thread(target=html.serve_forever, daemon=True).start()
    busy = socket.socket()  # listening: replay serve cannot take this port
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    with socket.socket() as dead:  # bound and closed again: nothing answers there
        dead.bind(("127.0.0.1", 0))
        dead_port = dead.getsockname()[1]
    try:
        yield {
            "tmp": str(tmp),
            "file": str(tmp / "notes.txt"),
            "binary": str(tmp / "blob.bin"),
            "dir": str(tmp / "folder"),
            "empty_array": str(tmp / "empty.json"),
            "empty_log": str(tmp / "vllm.log"),
            # root passes every permission check, so as root take a place the kernel refuses
            "readonly": "/sys" if os.geteuid() == 0 else str(readonly),
            "tools": str(tools),
            "steps_missing": str(tmp / "steps-missing"),
            "steps_strict": str(tmp / "steps-strict"),
            "wrong": f"http://127.0.0.1:{html.server_address[1]}",
            "busy_port": str(busy.getsockname()[1]),
            "dead_port": str(dead_port),
        }
    finally:
        html.shutdown()
        busy.close()
        readonly.chmod(0o755)


def _run(case: Case, world: dict[str, str]) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    results = Path(world["tmp"]) / "results" / case.id
    values = {**world, "results": str(results)}
    argv = [str(AGENTRUN), *(a.format(**values) for a in case.args)]
    proc = subprocess.run(
        argv, input=case.stdin, capture_output=True, timeout=120, env={**os.environ, **case.env}
    )
    return proc, results


@pytest.fixture(scope="module")
def outcomes(world: dict[str, str]) -> dict[str, tuple[subprocess.CompletedProcess[bytes], Path]]:
    assert AGENTRUN.exists(), f"no console script at {AGENTRUN}: pip install -e ."
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip((k.id for k in CASES), pool.map(lambda k: _run(k, world), CASES), strict=True))
    return done


def test_the_table_is_broad() -> None:
    commands = {
        k.args[0] if k.args[0] not in ("replay", "sandbox", "local-model") else " ".join(k.args[:2])
        for k in CASES
    }
    assert len(CASES) >= 40 and len({k.id for k in CASES}) == len(CASES)
    for command in (
        "task",
        "tasks",
        "resume",
        "compare",
        "replay serve",
        "replay script",
        "repair",
        "logstats",
        "capacity",
        "kv-replay",
        "sandbox build",
        "sandbox prune",
        "local-model serve",
        "report",
        "chaos-proxy",
        "load",
    ):
        assert command in commands, command


def test_the_readme_gives_the_number_of_cases() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    stated = re.search(r"tries \*\*(\d+) bad\s+inputs", readme)
    assert stated is not None and int(stated.group(1)) == len(CASES), (stated, len(CASES))


@pytest.mark.parametrize("case", CASES, ids=[k.id for k in CASES])
def test_bad_input_is_one_line_and_exit_2(
    case: Case, outcomes: dict[str, tuple[subprocess.CompletedProcess[bytes], Path]]
) -> None:
    proc, results = outcomes[case.id]
    stderr = proc.stderr.decode(errors="replace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, (proc.returncode, stderr[-3000:])
    assert len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in stderr and "╭" not in stderr
    assert case.needle.lower() in lines[0].lower(), (case.needle, lines[0])
    assert not results.exists() or not any(results.iterdir()), sorted(results.rglob("*"))
    if case.args[0] == "repair":  # one output record per input line, each saying what was wrong
        records = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        assert all("error" in r for r in records)
