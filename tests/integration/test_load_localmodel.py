"""A short replay load on the real local model: llama-server's own /metrics series recorded, and
its prefix cache reused by every request that extends the previous one. Runs where the local
model is prepared (as tests/integration/test_localmodel.py); AGENTRUN_LOCAL_MODEL_TESTS=1
prepares it first."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentrun import localmodel
from agentrun.load.plan import LoadPlan
from agentrun.load.run import Measure, Target, run_replay_load
from agentrun.load.server_series import windows
from agentrun.load.workload import RecordedRequest, RecordedSession, Workload

pytestmark = pytest.mark.slow

SYSTEM = "You are a terse assistant. Answer in at most five words."


def _workload() -> Workload:
    """Four requests, each the previous prompt plus one recorded exchange; the last one long
    enough (64 tokens, seconds on this CPU) to give sampling windows inside one reply."""
    turns = ["Name a colour.", "Name a fruit.", "Name a planet.", "Count from one to forty in words."]
    replies = ["Blue.", "Apple.", "Mars."]
    requests = []
    for k, question in enumerate(turns):
        new = [{"role": "system", "content": SYSTEM}] if k == 0 else []
        if k > 0:
            new.append({"role": "assistant", "content": replies[k - 1]})
        new.append({"role": "user", "content": question})
        budget = 64 if k == 3 else 8
        requests.append(RecordedRequest(turn=k + 1, new_messages=new, max_tokens=budget, temperature=0.0))
    return Workload(name="three questions", sessions=[RecordedSession(id="q3", requests=requests)])


@pytest.fixture(scope="module")
def prepared() -> None:
    if not localmodel.is_prepared():
        if os.environ.get("AGENTRUN_LOCAL_MODEL_TESTS") != "1":
            pytest.skip(
                "the local model is not prepared (run `agentrun local-model prepare`, "
                "or set AGENTRUN_LOCAL_MODEL_TESTS=1 to prepare it here)"
            )
        localmodel.prepare()


def test_replay_load_records_llama_server_metrics_and_prefix_reuse(prepared: None, tmp_path: Path) -> None:
    plan = LoadPlan.make(
        sessions=1, concurrency=1, rate=None, duration_s=None, warmup=0, seed=0, default_sessions=1
    )
    measure = Measure(results_dir=tmp_path, sample_interval_s=0.5, traces=False)
    path, _ = run_replay_load(_workload(), plan, Target(model="local"), measure, time_scale=0)
    document = json.loads(path.read_text())
    requests = document["requests"]
    assert [r["error"] for r in requests] == [None, None, None, None], requests
    assert document["label"].startswith("local model")
    # llama.cpp reports the reuse per request: later prompts start with the earlier one
    assert all(r["cached_tokens"] and r["cached_tokens"] > 0 for r in requests[1:])
    assert all(r["ttft_s"] is not None and r["output_tokens"] >= 1 for r in requests)
    # ... and on its own /metrics, mapped to the same figure names as vLLM's
    series = document["server_series"]
    assert len(series) >= 2
    first, last = series[0], series[-1]
    assert {"prompt_tokens", "generation_tokens", "prefix_cache_hits", "num_requests_running"} <= set(last)
    assert last["generation_tokens"] - first["generation_tokens"] == sum(r["output_tokens"] for r in requests)
    assert last["prefix_cache_hits"] - first["prefix_cache_hits"] >= sum(
        r["cached_tokens"] for r in requests[1:]
    )
    totals = document["server"]["windows"]["totals"]
    assert 0 < totals["prefix_cache_hit_rate"] < 1
    # the windows' generation, read as llama.cpp decodes (its token counter moves only when a
    # reply ends): over the long reply's decode the windows carry the rate the client saw, and no
    # window holds the reply in one lump. Judged on the windows' tokens over that interval, not
    # on the median or peak of per-window rates: at load 20 the model decoded 0.8 tok/s, under
    # one token per 0.5 s window, so the median window was 0 and the peak 3 tokens in one window
    # (7x the mean rate) though every token was counted as it was decoded
    long = requests[-1]
    decode_from, decode_to = long["start_s"] + long["ttft_s"], long["start_s"] + long["e2e_s"]
    rows = windows(series)
    timed = [r for r in rows if r["generation_tps"] is not None]
    inside = [r for r in timed if decode_from <= r["t_s"] - r["length_s"] and r["t_s"] <= decode_to]
    inside_s = sum(r["length_s"] for r in inside)
    assert inside_s > 0.25 * (decode_to - decode_from), (inside, decode_from, decode_to)
    server_tps = sum(r["generation_tps"] * r["length_s"] for r in inside) / inside_s
    client_tps = 1 / long["tpot_s"]
    assert 0.5 * client_tps < server_tps < 2 * client_tps, (server_tps, client_tps, inside)
    lump = max(r["generation_tps"] * r["length_s"] for r in timed)
    assert lump < long["output_tokens"] / 2, (lump, long["output_tokens"], rows)
    reuse = {row["depth"]: row["hit_rate"] for row in document["aggregates"]["prefix_cache_by_depth"]}
    assert reuse[0] < reuse[2] and reuse[2] > 0.5
