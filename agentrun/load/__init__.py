"""``agentrun load``: a known, repeatable load of agent sessions on one server, measured.

Two ways to make the load:

* **live**: real agent sessions (tasks x seeds, each with its sandbox, tools and grading),
  at most C at once or arriving at a seeded Poisson rate, sharing one admission gate;
* **replay**: the requests of recorded runs sent again, in order, with the recorded tool
  and think time between them (scaled), the recorded assistant turns kept in the history,
  so every request body is byte-identical from run to run and from server to server.

Either way the server's ``/metrics`` is sampled on a clock, and the run's folder
(``results/load-<time>-<mode>-<hex>/``) holds:

``load.json`` (``schema: "agentrun.load/1"``, the contract ``agentrun.report.load`` reads)::

    schema, id, mode ("live" | "replay"), label, model, tasks
    started_at  epoch seconds; every start_s / t_s below counts from it
    duration_s  the whole load, wall time
    concurrency, rate, slo {ttft_s, ttfvt_s, tpot_s, e2e_s: limit (s)}
    created (ISO time), command (argv), target {base_url, model, label}
    plan       {sessions, concurrency, rate, duration_s, warmup, seed}
    workload   replay: {name, sessions: [recorded session ids]}; live: {tasks, agent_mode}
    time_scale replay only
    aggregates {
      ttft_s, ttfvt_s, itl_s, tpot_s, e2e_s   successful requests; itl_s pools every gap:
                 {n, mean, min, max, p50, p90, p99, q1, q3, iqr}
      window_s                       first measured send to last measured end
      requests   {total, ok, failed, error_rate, errors_by_kind, retries, retry_causes,
                  tokens: {prompt, cached, output, reasoning}}
      throughput {requests_per_s, output_tokens_per_s, prompt_tokens_per_s, total_tokens_per_s}
      goodput    {slo, requests, fraction, requests_per_s}
      prefix_cache_by_depth [{depth, requests, prompt_tokens, cached_tokens, hit_rate}]
      sessions   {total, failed, turns, wall_s, tool_s (distributions),
                  hidden_tests_passed, hidden_tests_total, stop_reasons}
    }
    sessions      [SessionRecord]  (agentrun.load.records)
    server_series [{t_s, <figure>: value, ...}]  one sample per /metrics scrape: gauges as
                  read, counters cumulative (figure names of agentrun.serving.prometheus)
    server     null, or {metrics_urls, interval_s,
                         windows: {samples, windows, peak_generation_tps,
                                   single_active_generation {n, median, mean, best, low, q1, q3},
                                   single_active_pooled_tps,
                                   nonzero_generation_mean_tps, peak_prompt_tps,
                                   draft_acceptance_by_window, peak_kv_usage_perc,
                                   peak_running, peak_waiting,
                                   totals: counter deltas over the load + derived rates}}
    admission  live with --kv-budget: {budget_tokens, peak_tokens, peak_sessions}
    interrupted true when Ctrl-C / SIGTERM ended the load: every figure is then of what
               finished (cut sessions have stop_reason "interrupted"; no session started after)
    requests   [RequestRecord], as in requests.jsonl

``requests.jsonl``: one ``RequestRecord`` per line (session, index, turn, depth, warmup,
start_s, started_at, ttft_s, ttfvt_s, itl_s [gaps], tpot_s, e2e_s, prompt/cached/output/
reasoning tokens, finish_reason, retries, retry_causes, error, error_detail). Every
aggregate can be recomputed from these records alone. Warm-up sessions are recorded but
left out of the aggregates.

``traces/<session>.spans.jsonl`` (replay; live sessions keep theirs in ``runs/<run>/``):
one OpenTelemetry trace per session. Server figure names are the stable ones of
``agentrun.serving.prometheus`` (vLLM, SGLang and llama.cpp series mapped to them).

::

    workload.py      recorded sessions from trajectories / ATIF / workload files; bodies
    atif_input.py    an ATIF trajectory as a recorded session
    plan.py          sessions, concurrency, Poisson arrivals, duration, warm-up
    client.py        asyncio streaming client with per-chunk clocks (replay mode)
    replay_run.py    replay sessions on one event loop
    live.py          live sessions through agentrun.runner.run_task
    embedded.py      the embedded replay model, started once per load
    server_series.py /metrics sampler and the seed's window statistics
    stats.py         percentiles, SLO goodput, prefix-cache reuse by depth
    records.py       RequestRecord, SessionRecord
    report.py        the folder, the closing summary, ``load compare``
    run.py           run_replay_load, run_live_load
"""

from agentrun.load.plan import LoadPlan
from agentrun.load.records import RequestRecord, SessionRecord
from agentrun.load.run import Measure, Target, run_live_load, run_replay_load
from agentrun.load.workload import Workload, load_workload

__all__ = [
    "LoadPlan",
    "Measure",
    "RequestRecord",
    "SessionRecord",
    "Target",
    "Workload",
    "load_workload",
    "run_live_load",
    "run_replay_load",
]
