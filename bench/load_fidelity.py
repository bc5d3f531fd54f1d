"""How much does `agentrun load` distort what it measures? Known server delays vs measured ones.

The replay server runs in its own process (``agentrun replay serve``) with a known TTFT and a
known delay between tokens: token k of every reply leaves at ``ttft + k * token_delay`` after
the request was read, on a deadline schedule. At 1, 8, 32 and 64 concurrent sessions the
shipped ``todo-cli`` recording is replayed (replay mode, recorded think time, sessions
arriving over the first ~10 s), and every
measured TTFT and inter-token gap is compared with that truth; the client's CPU time per
request is read from ``getrusage`` around the sessions (the server's CPU is another process).

With ``--peer aiperf`` (installed in its own venv: ``--peer-bin``), AIPerf drives a
comparable multi-turn workload (the same number of sessions at the same concurrency, one
conversation of as many turns per session) against the same server, and its reported TTFT
and ITL are set against the same truth, from its per-request records: TTFT, and its
``inter_chunk_latency`` list (every gap between chunks, as agentrun's ``itl_s``). Its CPU is
the CPU of all its processes (``RUSAGE_CHILDREN``) over its requests.

With ``--server stamped`` the server is ``bench/stamped_server.py`` (one asyncio loop, the
same script and schedule) and every chunk carries the moment it was written: errors are then
taken against those write times (TTFT: first chunk's arrival minus its write; ITL: the change
of that delay from one chunk to the next), which leaves out whatever the server itself was
late by (shown as "server late": write time minus due time, p99).

    python bench/load_fidelity.py --levels 1,8,32,64 --peer aiperf --peer-bin /tmp/aiperfvenv/bin/aiperf
    python bench/load_fidelity.py --server stamped --peer aiperf --peer-bin /tmp/aiperfvenv/bin/aiperf
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import resource
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentrun import lifeline
from agentrun.load import client as client_module
from agentrun.load.plan import LoadPlan
from agentrun.load.progress import LoadProgress
from agentrun.load.replay_run import ReplayOptions, run_replay
from agentrun.load.stats import percentile
from agentrun.load.workload import PreparedSession, load_workload


def start_server(ttft: float, token_delay: float, stamped: bool = False) -> tuple[subprocess.Popen[str], str]:
    if stamped:
        cmd = [sys.executable, str(Path(__file__).with_name("stamped_server.py")), "--port", "0"]
    else:
        cmd = [sys.executable, "-m", "agentrun", "replay", "serve", "--task", "todo-cli", "--port", "0"]
        cmd += ["--kv-gpu-tokens", "0"]
    cmd += ["--ttft", str(ttft), "--token-delay", str(token_delay)]
    proc = lifeline.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stream = proc.stdout
    assert stream is not None
    if not select.select([stream], [], [], 60)[0]:  # the URL line, printed once it listens
        proc.kill()
        raise SystemExit(f"{cmd[2]} printed no URL within 60 s")
    return proc, stream.readline().strip()


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _errors(values: list[float], truth: float) -> dict[str, float]:
    errors = sorted(abs(v - truth) for v in values)
    return {"p50_ms": percentile(errors, 50) * 1000, "p99_ms": percentile(errors, 99) * 1000}


class Stamps:
    """Per output chunk of every request: client arrival - server write, and server write - due."""

    def __init__(self) -> None:
        self.delivery: list[list[float]] = []
        self.server_late: list[float] = []

    def add(self, lateness: list[float]) -> None:
        if lateness:
            self.delivery.append(lateness)

    def errors(self) -> dict[str, Any]:
        ttft = sorted(abs(r[0]) for r in self.delivery)
        itl = sorted(abs(b - a) for r in self.delivery for a, b in itertools.pairwise(r))
        late = sorted(self.server_late) or [0.0]
        return {
            "ttft_err": {"p50_ms": percentile(ttft, 50) * 1000, "p99_ms": percentile(ttft, 99) * 1000},
            "itl_err": {"p50_ms": percentile(itl, 50) * 1000, "p99_ms": percentile(itl, 99) * 1000},
            "server_late_p99_ms": percentile(late, 99) * 1000,
        }


def _watch_agentrun(stamps: Stamps) -> None:
    """Wrap the replay client's chunk handler to read each chunk's server stamps (bench only)."""
    original = client_module._feed
    current: dict[int, list[float]] = {}

    def feed(m: Any, chunk: dict[str, Any], now: float, last: list[float]) -> None:
        before = m.ttft_s
        original(m, chunk, now, last)
        if "t_sent" not in chunk:
            if chunk.get("usage"):
                stamps.add(current.pop(id(m), []))
            return
        if before is None:
            current[id(m)] = []
        current.setdefault(id(m), []).append(m.sent + now - chunk["t_sent"])
        stamps.server_late.append(chunk["t_sent"] - chunk["t_due"])

    client_module._feed = feed  # type: ignore[assignment]


def agentrun_level(
    base_url: str, sessions: int, ttft: float, token_delay: float, scale: float, stamped: bool = False
) -> dict[str, Any]:
    prepared = [PreparedSession(s, "replay") for s in load_workload(["todo-cli"]).sessions]
    # sessions arrive over about 10 s (seeded Poisson), then run side by side: a herd of 64
    # identical first requests in the same millisecond would measure the server's queue
    rate = sessions / 10.0 if sessions > 1 else None
    plan = LoadPlan.make(
        sessions=sessions,
        concurrency=sessions,
        rate=rate,
        duration_s=None,
        warmup=0,
        seed=0,
        default_sessions=1,
    )
    options = ReplayOptions(base_url, "replay", time_scale=scale)
    stamps = Stamps()
    if stamped:
        _watch_agentrun(stamps)
    cpu0, wall0 = _cpu_s(), time.perf_counter()
    records, _ = run_replay(prepared, plan, options, LoadProgress(plan.sessions), time.perf_counter())
    cpu, wall = _cpu_s() - cpu0, time.perf_counter() - wall0
    ok = [r for r in records if r.ok]
    gaps = [g for r in ok for g in r.itl_s]
    ttfts = sorted(r.ttft_s for r in ok if r.ttft_s is not None)
    return {
        "tool": "agentrun load --replay",
        "sessions": sessions,
        "requests": len(records),
        "failed": len(records) - len(ok),
        "ttft_p50_ms": percentile(ttfts, 50) * 1000,
        "ttft_p99_ms": percentile(ttfts, 99) * 1000,
        "ttft_err": _errors(ttfts, ttft),
        "itl_err": _errors(gaps, token_delay),
        "cpu_ms_per_request": cpu / max(1, len(records)) * 1000,
        "wall_s": wall,
        **(stamps.errors() if stamped else {}),
    }


def aiperf_stamps(folder: Path) -> dict[str, Any]:
    """The same delivery errors from AIPerf's raw export (its ``perf_ns`` per response)."""
    stamps = Stamps()
    for line in (folder / "profile_export_raw.jsonl").read_text().splitlines():
        lateness = []
        for response in json.loads(line).get("responses") or ():
            for packet in response.get("packets") or ():
                value = packet.get("value") or ""
                if '"t_sent"' in value:
                    chunk = json.loads(value)
                    lateness.append(response["perf_ns"] / 1e9 - chunk["t_sent"])
                    stamps.server_late.append(chunk["t_sent"] - chunk["t_due"])
        stamps.add(lateness)
    return stamps.errors()


_TOKENIZER = """
import json, os, sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
snap = os.path.join(sys.argv[1], "hub", "models--local--wordlevel", "snapshots", "0")
os.makedirs(snap, exist_ok=True)
os.makedirs(os.path.join(sys.argv[1], "hub", "models--local--wordlevel", "refs"), exist_ok=True)
open(os.path.join(sys.argv[1], "hub", "models--local--wordlevel", "refs", "main"), "w").write("0")
tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.train_from_iterator(open(sys.argv[2]).read().split(), trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
tok.save(os.path.join(snap, "tokenizer.json"))
config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "model_max_length": 10**6}
json.dump(config, open(os.path.join(snap, "tokenizer_config.json"), "w"))
"""


def aiperf_dataset(out: Path, sessions: int) -> Path:
    """The recording as AIPerf multi-turn conversations: each turn's new user/tool text and its
    recorded delay (AIPerf keeps its own live replies in the history)."""
    session = load_workload(["todo-cli"]).sessions[0]
    turns = [
        {
            "text": "\n".join(m.get("content") or "" for m in r.new_messages if m["role"] != "assistant")
            or "go on",
            "delay": int(r.delay_s * 1000),
        }
        for r in session.requests
    ]
    path = out / f"aiperf-{sessions}.jsonl"
    path.write_text(
        "".join(json.dumps({"session_id": f"s{i}", "turns": turns}) + "\n" for i in range(sessions))
    )
    return path


def aiperf_level(
    peer_bin: str,
    base_url: str,
    sessions: int,
    turns: int,
    ttft: float,
    token_delay: float,
    out: Path,
    stamped: bool = False,
) -> dict[str, Any]:
    """AIPerf on the same conversations at the same concurrency, its per-record timings vs the truth.

    AIPerf needs a Hugging Face tokenizer even with server token counts; with no network a
    word-level one is trained on the dataset and put in a private HF cache (offline mode).
    """
    folder, dataset = out / f"aiperf-{sessions}", aiperf_dataset(out, sessions)
    peer_python = str(Path(peer_bin).parent / "python")
    subprocess.run([peer_python, "-c", _TOKENIZER, str(out / "hf"), str(dataset)], check=True, timeout=600)
    cmd = [
        peer_bin, "profile", "--model", "replay", "--tokenizer", "local/wordlevel",
        "--url", base_url.removesuffix("/v1"), "--endpoint-type", "chat", "--streaming",
        "--concurrency", str(sessions), "--request-count", str(sessions * turns),
        "--custom-dataset-type", "multi_turn", "--input-file", str(dataset), "--use-server-token-count",
        "--output-artifact-dir", str(folder), "--ui-type", "none",
    ]  # fmt: skip
    if sessions > 1:
        cmd += ["--concurrency-ramp-duration", "10"]
    if stamped:
        cmd += ["--export-level", "raw"]
    env = {**__import__("os").environ, "HF_HOME": str(out / "hf"), "HF_HUB_OFFLINE": "1"}
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    records_file = folder / "profile_export.jsonl"
    if proc.returncode != 0 or not records_file.exists():
        return {"tool": "aiperf", "sessions": sessions, "error": (proc.stderr or proc.stdout)[-800:]}
    rows = [json.loads(line)["metrics"] for line in records_file.read_text().splitlines() if line.strip()]
    ttfts = sorted(r["time_to_first_token"]["value"] / 1000 for r in rows if "time_to_first_token" in r)
    gaps = [g / 1000 for r in rows for g in (r.get("inter_chunk_latency") or {}).get("value") or ()]
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    return {
        "tool": "aiperf 0.13.0 (multi_turn)",
        "sessions": sessions,
        "requests": len(rows),
        "failed": sum(1 for r in rows if "time_to_first_token" not in r),
        "ttft_p50_ms": percentile(ttfts, 50) * 1000,
        "ttft_p99_ms": percentile(ttfts, 99) * 1000,
        "ttft_err": _errors(ttfts, ttft),
        "itl_err": _errors(gaps, token_delay),
        "cpu_ms_per_request": cpu / max(1, len(rows)) * 1000,
        "wall_s": wall,
        **(aiperf_stamps(folder) if stamped else {}),
    }


def table(rows: list[dict[str, Any]]) -> str:
    head = "| tool | sessions | requests | TTFT p50 / p99 ms | TTFT err p50 / p99 ms | ITL err p50 / p99 ms | client CPU ms/request | server late p99 ms |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['tool']} | {r['sessions']} | failed: {r['error'][:80]!r} | | | | | |")
            continue
        lines.append(
            f"| {r['tool']} | {r['sessions']} | {r['requests']} | {r['ttft_p50_ms']:.2f} / {r['ttft_p99_ms']:.2f} | "
            f"{r['ttft_err']['p50_ms']:.2f} / {r['ttft_err']['p99_ms']:.2f} | "
            f"{r['itl_err']['p50_ms']:.3f} / {r['itl_err']['p99_ms']:.3f} | {r['cpu_ms_per_request']:.2f} | "
            + (f"{r['server_late_p99_ms']:.2f} |" if "server_late_p99_ms" in r else "- |")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,8,32,64")
    parser.add_argument("--ttft", type=float, default=0.05)
    parser.add_argument("--token-delay", type=float, default=0.01)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--peer", choices=["none", "aiperf"], default="none")
    parser.add_argument("--peer-bin", default="aiperf")
    parser.add_argument("--out", type=Path, default=Path("results/bench-load-fidelity"))
    parser.add_argument(
        "--server",
        choices=["replay", "stamped"],
        default="replay",
        help="replay: errors against the replay model's schedule; stamped: against each chunk's write time",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stamped = args.server == "stamped"
    server, base_url = start_server(args.ttft, args.token_delay, stamped)
    rows = []
    try:
        turns = len(load_workload(["todo-cli"]).sessions[0].requests)
        for level in (int(x) for x in args.levels.split(",")):
            rows.append(
                agentrun_level(base_url, level, args.ttft, args.token_delay, args.time_scale, stamped)
            )
            print(table(rows[-1:]), flush=True)
            if args.peer == "aiperf":
                rows.append(
                    aiperf_level(
                        args.peer_bin, base_url, level, turns, args.ttft, args.token_delay, args.out, stamped
                    )
                )
                print(table(rows[-1:]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    machine = (
        f"{platform.processor() or platform.machine()}, {len(__import__('os').sched_getaffinity(0))} CPUs"
    )
    print(
        f"\n{time.strftime('%Y-%m-%d')} {machine}, Python {platform.python_version()}, load {__import__('os').getloadavg()}"
    )
    print(f"server truth: TTFT {args.ttft * 1000:g} ms, {args.token_delay * 1000:g} ms per token\n")
    print(table(rows))
    (args.out / "fidelity.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
