"""``agentrun.lifeline``: what a process starts ends with it, however it ends.

Each test starts a real parent process that starts children through the lifeline, SIGKILLs
the parent (no handler, no ``atexit`` runs) and checks the children are gone within a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentrun_testsupport import first_line, spawn, stop

from agentrun import lifeline

BOUND = 10.0  # s; an orphan that lives on is never gone, the lifeline takes well under 1 s

PARENT = r"""
import json, multiprocessing, os, subprocess, sys, threading, time
from agentrun import lifeline

def serve(end, up):
    lifeline.hold(end)
    up.send("up")
    time.sleep(300)

if __name__ == "__main__":
    what = sys.argv[1]
    pids = []
    if what == "command":  # a command that starts a child of its own
        proc = lifeline.popen(["sh", "-c", "sleep 300 & echo $!; sleep 300"], stdout=subprocess.PIPE, text=True)
        pids += [proc.pid, int(proc.stdout.readline())]
    elif what == "from-a-thread":  # started by a thread that ends at once (PDEATHSIG would fire)
        box = []
        worker = threading.Thread(target=lambda: box.append(lifeline.popen(["sleep", "300"])))
        worker.start(); worker.join(10)
        time.sleep(1.0)
        assert box[0].poll() is None, "the command died with the thread that started it"
        pids.append(box[0].pid)
    elif what == "multiprocessing":
        ctx = multiprocessing.get_context("spawn")
        end, (here, there) = lifeline.child_end(), ctx.Pipe(duplex=False)
        child = ctx.Process(target=serve, args=(end, there), daemon=True)
        child.start(); end.close(); there.close()
        assert here.poll(60) and here.recv() == "up"
        pids.append(child.pid)
    elif what == "after-a-fork":  # a forked child that outlives us must not keep the command alive
        lifeline.popen(["true"]).wait(10)  # the lifeline exists before the fork
        forked = os.fork()
        if forked == 0:  # off the test's stdout: only the lifeline is under test here
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1); os.dup2(null, 2)
            time.sleep(300); os._exit(0)
        pids.append(lifeline.popen(["sleep", "300"]).pid)
        print(json.dumps({"pids": pids, "forked": forked}), flush=True)
        time.sleep(300)
    print(json.dumps({"pids": pids}), flush=True)
    time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pids: list[int]) -> list[int]:
    """The pids still alive after ``BOUND`` seconds (empty when all ended)."""
    deadline = time.monotonic() + BOUND
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _parent(what: str, tmp_path: Path) -> tuple[subprocess.Popen[str], dict[str, list[int] | int]]:
    script = tmp_path / "parent.py"  # a file: a spawn child imports its target from it
    script.write_text(PARENT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = spawn([sys.executable, str(script), what], env=env)
    try:
        return proc, json.loads(first_line(proc, timeout=60))
    except BaseException:
        stop(proc)
        raise


@pytest.mark.parametrize("what", ["command", "from-a-thread", "multiprocessing", "after-a-fork"])
def test_children_end_when_their_parent_is_killed(what: str, tmp_path: Path) -> None:
    proc, started = _parent(what, tmp_path)
    pids = started["pids"]
    assert isinstance(pids, list) and pids and all(_alive(p) for p in pids)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=BOUND)  # stdout reaches EOF: nothing of it holds the pipe
        assert not _gone(pids), f"{what}: outlived their parent"
        if "forked" in started:
            assert _alive(int(started["forked"]))  # the fork lives on; the command did not wait for it
    finally:
        for pid in [*pids, started.get("forked")]:
            with contextlib.suppress(ProcessLookupError, TypeError):
                os.kill(pid, signal.SIGKILL)  # type: ignore[arg-type]


def test_exit_codes_and_signals_read_as_the_commands_own() -> None:
    assert lifeline.run(["sh", "-c", "exit 3"], timeout=30).returncode == 3
    done = lifeline.run(["sh", "-c", "echo out; echo err >&2"], timeout=30, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "out\n", "err\n")
    assert lifeline.run(["cat"], timeout=30, input=b"in", capture_output=True).stdout == b"in"
    proc = lifeline.popen(["sleep", "300"])
    time.sleep(0.3)
    proc.terminate()  # to the keeper, passed on to the command
    assert proc.wait(BOUND) == -signal.SIGTERM
    with pytest.raises(FileNotFoundError):
        lifeline.popen(["agentrun-no-such-program"])


def test_what_a_command_leaves_behind_ends_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg"
    assert lifeline.run(["sh", "-c", f"sleep 300 & echo $! > {pid_file}"], timeout=30).returncode == 0
    assert not _gone([int(pid_file.read_text())])


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg"
    with pytest.raises(subprocess.TimeoutExpired):
        lifeline.run(["sh", "-c", f"sleep 300 & echo $! > {pid_file}; sleep 300"], timeout=1.0)
    assert not _gone([int(pid_file.read_text())])
