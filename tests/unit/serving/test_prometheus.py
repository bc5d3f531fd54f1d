"""Prometheus scrape: vLLM names current and older, deltas, and a server without /metrics."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentrun.serving.prometheus import MetricsProbe, delta, metrics_url, parse_counters

CURRENT = """\
# HELP vllm:prefix_cache_queries Prefix cache queries
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 600000.0
vllm:prefix_cache_queries_total{engine="1",model_name="m"} 82044.0
vllm:prefix_cache_queries_created{engine="0",model_name="m"} 1.7e9
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 26624.0
# TYPE vllm:external_prefix_cache_hits counter
vllm:external_prefix_cache_hits_total{engine="0",model_name="m"} 0.0
# TYPE vllm:kv_offload_store_bytes counter
vllm:kv_offload_store_bytes_total{engine="0",model_name="m"} 13627722240.0
# TYPE vllm:kv_offload_total_bytes counter
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="GPU_to_CPU"} 13627722240.0
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="CPU_to_GPU"} 0.0
# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100.0
# TYPE vllm:spec_decode_num_draft_tokens counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 500.0
# TYPE vllm:spec_decode_num_accepted_tokens counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 490.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 1.0
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="17833"} 1.0
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens_total{engine="0",model_name="other"} 5.0
"""

OLDER = """\
# TYPE vllm:gpu_prefix_cache_queries counter
vllm:gpu_prefix_cache_queries_total{model_name="m"} 100.0
# TYPE vllm:gpu_prefix_cache_hits counter
vllm:gpu_prefix_cache_hits_total{model_name="m"} 95.0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
# TYPE vllm:kv_offload_total_bytes counter
vllm:kv_offload_total_bytes_total{model_name="m",transfer_type="CPU_to_GPU"} 1001721600.0
# TYPE vllm:kv_offload_total_time counter
vllm:kv_offload_total_time_total{model_name="m",transfer_type="CPU_to_GPU"} 0.3436592254638672
"""


def test_current_names_sum_over_engines_and_prefer_current_offload_series():
    c = parse_counters(CURRENT, model="m")
    assert c.get("prefix_cache_queries") == 682044
    assert c.get("prefix_cache_hits") == 26624
    assert c.get("kv_offload_store_bytes") == 13627722240  # not doubled by the deprecated series
    assert "prompt_tokens" not in c  # another model's series was filtered out
    assert c.gpu_kv_tokens == 17833 * 16


def test_older_names_map_to_the_same_figures():
    c = parse_counters(OLDER)
    assert (c.get("prefix_cache_queries"), c.get("prefix_cache_hits")) == (100, 95)
    assert c.get("kv_cache_usage_perc") == 0.25
    assert c.get("kv_offload_load_bytes") == 1001721600
    assert c.get("kv_offload_load_seconds") == pytest.approx(0.34366, rel=1e-4)


def test_delta_counters_gauges_reset_and_derived_rates():
    before = parse_counters(CURRENT, model="m")
    after_text = (
        CURRENT.replace("26624.0", "140032.0")
        .replace(
            'external_prefix_cache_hits_total{engine="0",model_name="m"} 0.0',
            'external_prefix_cache_hits_total{engine="0",model_name="m"} 113408.0',
        )
        .replace("600000.0", "713674.0")
        .replace(
            'vllm:num_requests_running{engine="0",model_name="m"} 1.0',
            'vllm:num_requests_running{engine="0",model_name="m"} 0.0',
        )
        .replace(
            'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100.0',
            'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 10.0',
        )
    )
    d = delta(before, parse_counters(after_text, model="m"))
    assert d["prefix_cache_queries"] == 113674
    assert d["prefix_cache_hits"] == 113408
    assert d["external_prefix_cache_hits"] == 113408
    assert d["num_requests_running"] == 0  # a gauge: the value after
    assert d["spec_decode_drafts"] == 10  # went backwards: the server restarted
    assert d["prefix_cache_hit_rate"] == pytest.approx(113408 / 113674)
    assert "spec_decode_acceptance_rate" not in d  # no drafted tokens in between


def test_metrics_url_from_base_url():
    assert metrics_url("http://h:8000/v1") == "http://h:8000/metrics"
    assert metrics_url("http://h:8000/") == "http://h:8000/metrics"
    assert metrics_url("http://h:9000/metrics") == "http://h:9000/metrics"


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/metrics" and self.server.has_metrics:  # type: ignore[attr-defined]
            body = CURRENT.encode()
            self.send_response(200)
        else:
            body = b'{"detail":"Not Found"}'
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.has_metrics = True  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_probe_reads_a_live_metrics_endpoint(server):
    probe = MetricsProbe(f"http://127.0.0.1:{server.server_port}/v1", model="m")
    snap = probe.snapshot()
    assert snap is not None and snap.get("prefix_cache_hits") == 26624 and probe.available


def test_probe_without_metrics_warns_once_and_returns_none(server, caplog):
    server.has_metrics = False
    probe = MetricsProbe(f"http://127.0.0.1:{server.server_port}")
    with caplog.at_level(logging.WARNING, logger="agentrun.serving"):
        assert probe.snapshot() is None
        assert probe.snapshot() is None
    assert len([r for r in caplog.records if "no server metrics" in r.message]) == 1
    assert not probe.available


def test_probe_of_a_closed_port_returns_none(caplog):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = srv.server_port
    srv.server_close()
    with caplog.at_level(logging.WARNING, logger="agentrun.serving"):
        assert MetricsProbe(f"http://127.0.0.1:{port}", timeout_s=2).snapshot() is None
    assert len(caplog.records) == 1
