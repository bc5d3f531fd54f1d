"""Serving measurement end to end: kv-replay against the replay server with the simulated
prefix cache over loopback HTTP, and the ``agentrun`` serving commands as a user runs them."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrun.cli import app
from agentrun.replay import ReplayServer, Script, ScriptTurn
from agentrun.replay.kvsim import KVCacheSimulator
from agentrun.serving import MetricsProbe
from agentrun.serving.kvreplay import VERDICT_CPU, VERDICT_GPU, KVReplayConfig, run_kv_replay
from agentrun.serving.logstats import logstats

SEED_LOG = Path(__file__).parents[1] / "fixtures" / "serving" / "seed_vllm.log"
AGENTRUN = [sys.executable, "-c", "from agentrun.cli import main; main()"]

# the replay tokenizer counts words and the spaces between them: ~1,200 tokens per prompt
TARGET, PREFIX, REQUESTS = 600, 100, 4


def _serve(sim: KVCacheSimulator) -> ReplayServer:
    return ReplayServer(Script(model_name="replay"), cache=sim, ttft=0.01, token_delay=0.001).start()


@pytest.fixture
def offload_server(tmp_path: Path) -> Iterator[tuple[ReplayServer, KVCacheSimulator]]:
    """CPU tier much larger than the GPU tier, GPU tier smaller than the sequence."""
    sim = KVCacheSimulator(
        gpu_tokens=2400, cpu_tokens=40_000, log_path=tmp_path / "vllm.log", log_interval_s=0
    )
    server = _serve(sim)
    yield server, sim
    server.stop()


def _config(server: ReplayServer) -> KVReplayConfig:
    return KVReplayConfig(
        base_url=server.base_url,
        model="replay",
        requests=REQUESTS,
        target_tokens=TARGET,
        shared_prefix_tokens=PREFIX,
        seed=0,
    )


def test_evicted_request_is_served_from_the_cpu_tier(offload_server):
    server, sim = offload_server
    record = run_kv_replay(_config(server))
    replay = record["replay"]
    assert record["verdict"] == VERDICT_CPU
    assert record["warnings"] == []
    assert replay["external_prefix_hits_delta"] > 0
    assert replay["cpu_to_gpu_bytes_delta"] == replay["external_prefix_hits_delta"] * sim.bytes_per_token
    assert replay["cpu_to_gpu_seconds_delta"] > 0
    assert replay["gpu_to_cpu_bytes_delta"] < replay["cpu_to_gpu_bytes_delta"]  # little new to store
    assert replay["cached_fraction"] > 0.95
    assert replay["visible_answer"] and replay["time_to_first_output_ms"] > 0
    assert replay["effective_prefill_tokens_per_second"] > 0
    seq = record["eviction_sequence"]
    assert seq["requests"] == REQUESTS and seq["failed_request_indices"] == []
    assert seq["gpu_to_cpu_bytes_after"] > 0 and seq["external_prefix_hits_after"] == 0
    assert record["cache"]["gpu_kv_cache_tokens"] == sim.gpu_tokens // 16 * 16

    # the simulator's log reads like a vLLM log
    sim.flush_log()
    stats = logstats(Path(sim._log.path))  # type: ignore[union-attr]
    assert stats.http_status == {"200": REQUESTS + 1}
    assert stats.kv_load.bytes == replay["cpu_to_gpu_bytes_delta"]


def test_request_still_in_gpu_cache_with_a_small_cpu_tier():
    sim = KVCacheSimulator(gpu_tokens=40_000, cpu_tokens=8_000)
    server = _serve(sim)
    try:
        record = run_kv_replay(_config(server))
    finally:
        server.stop()
    assert record["verdict"] == VERDICT_GPU
    assert record["replay"]["external_prefix_hits_delta"] == 0
    assert record["replay"]["gpu_prefix_hits_delta"] == record["replay"]["cached_prompt_tokens"]
    assert any("not larger than the GPU KV tier" in w for w in record["warnings"])
    assert any("fits in the GPU KV cache" in w for w in record["warnings"])


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTRUN, *args], capture_output=True, text=True, timeout=120)


def test_cli_kv_replay_json(offload_server):
    server, _ = offload_server
    proc = _run(
        "kv-replay",
        "--base-url",
        server.base_url,
        "--model",
        "replay",
        "--requests",
        str(REQUESTS),
        "--target-tokens",
        str(TARGET),
        "--shared-prefix-tokens",
        str(PREFIX),
        "--seed",
        "0",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["verdict"] == VERDICT_CPU
    assert record["schema"] == "agentrun.kv-offload-replay/v1"


def test_cli_logstats_and_capacity():
    runner = CliRunner()  # in-process: the same typer app, without a second interpreter start
    proc = runner.invoke(app, ["logstats", str(SEED_LOG), "--json"])
    assert proc.exit_code == 0, proc.output
    stats = json.loads(proc.stdout)
    assert round(stats["kv_store"]["weighted_gbps"], 2) == 52.53
    assert stats["http_status"] == {"200": 5}
    table = runner.invoke(app, ["logstats", str(SEED_LOG)], terminal_width=200)
    assert table.exit_code == 0 and "52.53 GB/s" in table.stdout and "285,336 tokens" in table.stdout

    proc = runner.invoke(app, ["capacity", "--gpu-kv-tokens", "285336", "--max-model-len", "262144"])
    assert proc.exit_code == 0 and "1.09x" in proc.stdout and "2 x 128K" in proc.stdout
    proc = runner.invoke(app, [
        "capacity", "--gpu-kv-tokens", "285336", "--max-model-len", "262144",
        "--kv-memory-gib", "17.18", "--cpu-offload-gib", "512", "--json",
    ])  # fmt: skip
    assert round(json.loads(proc.stdout)["cpu_tier"]["token_equivalents"] / 1e6, 1) == 8.5


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    proc = _run("logstats", str(tmp_path / "missing.log"))
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    assert "agentrun logstats --help" in proc.stderr  # the command's own name, however it was started

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    proc = _run("kv-replay", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "--requests", "1")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "cannot reach" in proc.stderr


def _running(probe: MetricsProbe) -> float:
    snap = probe.snapshot()
    assert snap is not None and "num_requests_running" in snap
    return snap.get("num_requests_running")


def _eventually_running(probe: MetricsProbe, want: float, timeout_s: float = 5.0) -> float:
    """The gauge once it equals ``want`` (the server calls on_finish just after its last write)."""
    deadline = time.monotonic() + timeout_s
    while (value := _running(probe)) != want and time.monotonic() < deadline:
        time.sleep(0.01)
    return value


def _open_stream(server: ReplayServer) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    body = {"model": "replay", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    assert b'"role": "assistant"' in resp.readline()  # the role chunk: the request is in flight
    return conn, resp


def test_running_gauge_follows_slow_requests_through_metrics():
    sim = KVCacheSimulator(gpu_tokens=40_000)
    words = " ".join(f"w{i}" for i in range(20))  # ~40 tokens: ~0.8 s at 20 ms a token
    script = Script(model_name="replay", turns=[ScriptTurn(content=words)] * 3)
    server = ReplayServer(script, cache=sim, ttft=0.1, token_delay=0.02).start()
    probe = MetricsProbe(server.base_url, model="replay")
    try:
        assert _running(probe) == 0

        # a stream read to the end
        conn, resp = _open_stream(server)
        assert _running(probe) == 1
        rest = resp.read()
        assert b"data: [DONE]" in rest
        conn.close()
        assert _eventually_running(probe, 0) == 0
        full = sim.counters.finished_generation_tokens
        assert full == sim.counters.generation_tokens > 1

        # a client that disconnects mid-stream
        conn, resp = _open_stream(server)
        assert _running(probe) == 1
        resp.close()
        conn.close()
        assert _eventually_running(probe, 0) == 0
        assert sim.counters.finished_requests == 2
        assert sim.counters.finished_generation_tokens - full < full  # only what was produced

        # a non-streamed request
        reply: dict[str, object] = {}

        def post() -> None:
            c = http.client.HTTPConnection(server.host, server.port, timeout=30)
            body = {"model": "replay", "messages": [{"role": "user", "content": "again"}]}
            c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
            reply.update(json.loads(c.getresponse().read()))
            c.close()

        worker = threading.Thread(target=post)
        worker.start()
        assert _eventually_running(probe, 1) == 1
        worker.join(timeout=30)
        assert reply["choices"][0]["message"]["content"] == words  # type: ignore[index]
        assert _eventually_running(probe, 0) == 0
        assert sim.counters.finished_requests == 3
    finally:
        server.stop()
