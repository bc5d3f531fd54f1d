"""Where a ``read_file`` call's time goes, on both sides of the channel, by sampling (py-spy).

    python bench/profile_channel.py --py-spy /path/to/py-spy [--seconds 15] [--tool read_file]

Starts one DockerSandbox, then calls the tool over the channel in a loop while two py-spy
recorders sample (``--nonblocking``, 997 Hz, idle frames left out): this process (the host side)
and the tool runtime in the container (found by its host pid; py-spy reads a container's
process from the host as root). Prints, per side, the microseconds per call spent in each
function (inclusive, from the sample counts), the busiest first. py-spy is not a dependency of
agentrun: install it anywhere (``pip install --target /tmp/pyspy py-spy``) and pass its path.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.images import ensure_sandbox_base

RATE = 997


def runtime_pid(sandbox: DockerSandbox) -> int:
    """The host pid of the tool runtime (``runtime.py``) in the sandbox's container."""
    listing = sandbox.container.top(ps_args="-eo pid,args")
    for pid, args in listing["Processes"]:
        if "runtime.py" in args:
            return int(pid)
    raise SystemExit("no tool runtime found in the container")


def inclusive(raw: Path, calls: int, top: int) -> list[str]:
    """``us/call function (file:line)`` rows from py-spy's collapsed stacks, busiest first."""
    per_frame: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        for frame in set(stack.split(";")):
            per_frame[frame] += int(count)
    us = 1e6 / RATE / max(calls, 1)
    rows = [f"{total * us:8.1f} us/call  (all samples, {total})"]
    rows += [f"{n * us:8.1f} us/call  {frame}" for frame, n in per_frame.most_common(top)]
    return rows


def _record(py_spy: str, pid: int, output: Path, seconds: float) -> subprocess.Popen[bytes]:
    argv = [py_spy, "record", "--pid", str(pid), "--rate", str(RATE), "--nonblocking", "--format", "raw"]
    argv += ["--duration", str(int(seconds)), "--output", str(output)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--py-spy", required=True, help="the py-spy executable")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--tool", default="read_file", choices=["read_file", "ping", "run_shell"])
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    image = ensure_sandbox_base(on_log=lambda line: print(f"  {line}", file=sys.stderr))
    out = Path(tempfile.mkdtemp(prefix="agentrun-profile-"))
    with DockerSandbox.start(image, run_id="bench-profile") as sb:
        sb.call(
            ParsedCall(id="w", name="write_file", arguments={"path": "hello.txt", "content": "hello\n" * 8})
        )
        call = {
            "read_file": lambda: sb.call(
                ParsedCall(id="r", name="read_file", arguments={"path": "hello.txt"})
            ),
            "run_shell": lambda: sb.call(
                ParsedCall(id="s", name="run_shell", arguments={"command": "echo hi"})
            ),
            "ping": sb.ping,
        }[args.tool]
        for _ in range(200):
            call()
        sides = {"host": os.getpid(), "runtime": runtime_pid(sb)}
        recorders = [
            _record(args.py_spy, pid, out / f"{side}.txt", args.seconds) for side, pid in sides.items()
        ]
        time.sleep(1.0)  # both attached
        calls, deadline = 0, time.monotonic() + args.seconds - 2
        started = time.perf_counter()
        while time.monotonic() < deadline:
            call()
            calls += 1
        elapsed = time.perf_counter() - started
        for recorder in recorders:
            recorder.wait(timeout=args.seconds + 30)
    print(f"{args.tool}: {calls} calls, {elapsed / calls * 1e6:.1f} us per call (under the profilers)")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for side in sides:
        print(f"\n--- {side} (samples while the loop ran and ~1 s either side, per loop call) ---")
        print("\n".join(inclusive(out / f"{side}.txt", calls, args.top)))
    print(f"\nraw collapsed stacks: {out}")


if __name__ == "__main__":
    main()
