"""Tool round trip over the sandbox channel vs a `docker exec` of the same work.

    python bench/channel_vs_exec.py [--n 500] [--n-exec 100] [--no-write]
    python bench/channel_vs_exec.py --check 60 [--repeat 3]     # the CI guard (scripts/test.sh)

Starts one DockerSandbox on agentrun-sandbox:base (built if missing), then times:

- ``call()`` over the open channel: ``read_file`` of a small file, ``run_shell("echo hi")``,
  and a bare protocol ``ping``;
- the same work as a one-off exec: docker SDK ``exec_run`` and the docker CLI.

Prints a table, the ratio to the peer (SDK ``exec_run`` of ``cat``, measured in the same run)
and the load average, and rewrites the "## Tool channel vs docker exec" section of
BENCHMARKS.md (only that section; the file's other sections are left as they are).

``--check RATIO`` is the guard against a slower channel: it measures only ``read_file`` over
the channel and the peer, ``--repeat`` times (a fresh sandbox each), takes the median of the
ratios and exits 1 when it is under RATIO. A ratio to a peer in the same run, not a time: the
shared machine's load slows both. ``AGENTRUN_RUNTIME_DELAY_MS`` (passed into the sandbox)
delays each of the runtime's replies: only to see the check fail.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker

from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.images import ensure_sandbox_base

SECTION = "## Tool channel vs docker exec"
BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def timed(fn: Callable[[], object], n: int, warmup: int = 5) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


READ = ("channel `call()`", "read_file hello.txt")
PEER = ("docker SDK `exec_run`", "`cat hello.txt`")
DELAY_ENV = "AGENTRUN_RUNTIME_DELAY_MS"


def measure(n: int, n_exec: int, *, only_ratio: bool = False) -> list[tuple[str, str, list[float]]]:
    image = ensure_sandbox_base(on_log=lambda line: print(f"  {line}", file=sys.stderr))
    rows: list[tuple[str, str, list[float]]] = []
    env = {DELAY_ENV: os.environ[DELAY_ENV]} if os.environ.get(DELAY_ENV) else None
    with DockerSandbox.start(image, run_id="bench-channel", env=env) as sb:
        sb.call(
            ParsedCall(
                id="w", name="write_file", arguments={"path": "hello.txt", "content": "hello world\n" * 4}
            )
        )
        cid = sb.container.id
        shell = {"command": "echo hi"}

        def channel_read() -> None:
            assert sb.call(ParsedCall(id="r", name="read_file", arguments={"path": "hello.txt"})).ok

        def channel_shell() -> None:
            assert sb.call(ParsedCall(id="s", name="run_shell", arguments=shell)).exit_code == 0

        def sdk(argv: list[str]) -> Callable[[], None]:
            return lambda: _check(sb.container.exec_run(argv, user=sb.user).exit_code)

        def cli(argv: list[str]) -> Callable[[], None]:
            cmd = ["docker", "exec", "-u", sb.user, "-w", "/workspace", cid, *argv]
            return lambda: _check(
                subprocess.run(cmd, capture_output=True, check=False, timeout=60).returncode
            )

        read_argv = ["cat", "/workspace/hello.txt"]
        shell_argv = ["bash", "-c", "echo hi"]
        plan: list[tuple[str, str, Callable[[], object], int]] = [
            ("channel `call()`", "read_file hello.txt", channel_read, n),
            ("channel `call()`", "run_shell `echo hi`", channel_shell, n),
            ("channel protocol ping", "(no tool)", sb.ping, n),
            ("docker SDK `exec_run`", "`cat hello.txt`", sdk(read_argv), n_exec),
            ("docker SDK `exec_run`", "`bash -c 'echo hi'`", sdk(shell_argv), n_exec),
            ("docker CLI `docker exec`", "`cat hello.txt`", cli(read_argv), n_exec),
            ("docker CLI `docker exec`", "`bash -c 'echo hi'`", cli(shell_argv), n_exec),
        ]
        if only_ratio:
            plan = [row for row in plan if row[:2] in (READ, PEER)]
        for transport, work, fn, count in plan:
            samples = timed(fn, count)
            median, p90 = summary(samples)
            print(f"{transport:28} {work:24} median {median:8.3f} ms  p90 {p90:8.3f} ms  n={count}")
            rows.append((transport, work, samples))
    return rows


def _check(code: int | None) -> None:
    if code != 0:
        raise RuntimeError(f"exit code {code}")


def render(rows: list[tuple[str, str, list[float]]]) -> str:
    stats = {(t, w): summary(s) for t, w, s in rows}
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    client = docker.from_env()
    engine = client.version()
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    lines = [
        SECTION,
        "",
        f"Measured {dt.date.today().isoformat()} by `python bench/channel_vs_exec.py` on {cpu}, "
        f"{_cpus()} CPUs (shared with other work), Linux {platform.release()}, Docker Engine "
        f"{engine.get('Version')} (API {engine.get('ApiVersion')}), docker SDK {docker.__version__}, "
        f"Python {platform.python_version()} on the host; sandbox image agentrun-sandbox:base "
        f"(Debian bookworm, python3 3.11). Load average when done: {load} (other people's builds and "
        "tests share the cores, which is why the exec rows sit above the reference's). Milliseconds "
        "per round trip, container already running.",
        "",
        "| transport | work | median ms | p90 ms | n |",
        "|---|---|---:|---:|---:|",
    ]
    for transport, work, samples in rows:
        median, p90 = stats[(transport, work)]
        lines.append(f"| {transport} | {work} | {median:.3f} | {p90:.3f} | {len(samples)} |")
    read_ratio = (
        stats[("docker SDK `exec_run`", "`cat hello.txt`")][0]
        / stats[("channel `call()`", "read_file hello.txt")][0]
    )
    shell_ratio = (
        stats[("docker SDK `exec_run`", "`bash -c 'echo hi'`")][0]
        / stats[("channel `call()`", "run_shell `echo hi`")][0]
    )
    cli_ratio = (
        stats[("docker CLI `docker exec`", "`cat hello.txt`")][0]
        / stats[("channel `call()`", "read_file hello.txt")][0]
    )
    lines += [
        "",
        f"**Ratio (median):** reading a file over the channel is **{read_ratio:.0f}x** faster than an SDK "
        f"`exec_run` of `cat` and **{cli_ratio:.0f}x** faster than `docker exec`; a shell command is "
        f"**{shell_ratio:.0f}x** faster than an SDK exec of the same `bash -c` (the channel's "
        "`run_shell` still forks bash, and waits for leftover background processes, so its floor "
        "is a few ms, not the ping's).",
        "",
        "The channel is one `python3 -I runtime.py` exec with stdin attached over the docker API "
        "socket (`exec_create(stdin=True)` + `exec_start(socket=True)`, frames demultiplexed in "
        "`agentrun/sandbox/channel.py`); a `call()` includes bounding the arguments, JSON encoding, "
        "the lock, a random wire id and checking each field of the reply; in the runtime, validating "
        "the arguments, ending what the call left (`tools/leftovers.py`) and the OOM-kill count. "
        'Where each part goes: "Where a read_file goes" below. A per-call exec pays dockerd -> containerd -> runc setup every '
        "time. See /work/shared/reference/peer-overhead-measured.md section 3 for the reference "
        "floor on this kind of machine (SDK socket 0.18 ms, SDK exec_run 53 ms, CLI exec 64 ms).",
        "",
    ]
    return "\n".join(lines)


def _cpus() -> int:
    return os.cpu_count() or 0


def write_section(text: str, path: Path = BENCHMARKS) -> None:
    """Replace our section in BENCHMARKS.md (or append it), leaving every other section alone."""
    current = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(current):
        updated = pattern.sub(lambda _: text + "\n", current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(updated.rstrip("\n") + "\n")


def ratio(rows: list[tuple[str, str, list[float]]]) -> float:
    """How many times faster ``read_file`` over the channel is than the peer, by median."""
    stats = {(t, w): summary(s)[0] for t, w, s in rows}
    return stats[PEER] / stats[READ]


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def check(minimum: float, repeat: int, n: int, n_exec: int) -> int:
    """The CI guard: the median of ``repeat`` ratios, each from a fresh sandbox; 1 when under ``minimum``."""
    ratios = []
    for attempt in range(repeat):
        ratios.append(ratio(measure(n, n_exec, only_ratio=True)))
        print(f"run {attempt + 1}: read_file over the channel is {ratios[-1]:.0f}x faster than the peer")
    median = statistics.median(ratios)
    delay = os.environ.get(DELAY_ENV)
    verdict = "ok" if median >= minimum else "FAILED"
    print(
        f"channel ratio check {verdict}: median {median:.0f}x of {[round(r) for r in ratios]} "
        f"(needs {minimum:g}x); load average {load_average()}"
        + (f"; runtime delayed {delay} ms" if delay else "")
    )
    return 0 if median >= minimum else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="channel iterations")
    parser.add_argument("--n-exec", type=int, default=100, help="docker exec iterations")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    parser.add_argument(
        "--check", type=float, metavar="RATIO", help="exit 1 if read_file is under RATIO x the peer"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of --check (median taken)")
    args = parser.parse_args()
    if args.check is not None:
        sys.exit(check(args.check, args.repeat, min(args.n, 300), min(args.n_exec, 30)))
    rows = measure(args.n, args.n_exec)
    print(f"ratio to the peer (same run): read_file {ratio(rows):.0f}x faster; load average {load_average()}")
    section = render(rows)
    print(section)
    if not args.no_write:
        write_section(section)
        print(f"wrote the section to {BENCHMARKS}")


if __name__ == "__main__":
    main()
