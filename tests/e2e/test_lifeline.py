"""A CLI killed outright takes every process it started with it (``agentrun.lifeline``).

Each command is started as a script's background job starts it (SIGINT ignored, so a Ctrl-C
does not stop it), then SIGKILLed: no handler, no ``atexit``, no ``finally`` runs. Within a
bound every process it had started must be gone and its stdout must reach EOF; before the
lifeline, the load's replay model and its resource tracker served on as orphans holding the
stdout (a test reading it hung for 12 minutes), and llama-server outlived ``local-model serve``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agentrun_testsupport import spawn_cli

import agentrun.localmodel as lm

GONE_WITHIN = 15.0  # s: an orphan that serves on is gone never; the lifeline takes well under 1 s


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
    return "?"


def _kill_and_check(proc: subprocess.Popen[str], expect_at_least: int) -> None:
    """SIGKILL the CLI alone; its stdout reaches EOF and its descendants end, both in bounds."""
    started = descendants(proc.pid)
    assert len(started) >= expect_at_least, {p: _command(p) for p in started}
    os.kill(proc.pid, signal.SIGKILL)
    try:
        try:
            proc.communicate(timeout=GONE_WITHIN)  # EOF on stdout and stderr, then the exit
        except subprocess.TimeoutExpired:
            left = {p: _command(p) for p in started if alive(p)}
            pytest.fail(f"stdout still open {GONE_WITHIN} s after the SIGKILL, held by {left}")
        deadline = time.monotonic() + GONE_WITHIN
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {p: _command(p) for p in started if alive(p)}
        assert not left, f"outlived the CLI by {GONE_WITHIN} s: {left}"
    finally:  # a failure must not leave the orphans it found
        for pid in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=GONE_WITHIN)


def _wait_for(check: Callable[[], bool], proc: subprocess.Popen[str], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not check():
        proc.kill()
        _out, err = proc.communicate(timeout=30)
        pytest.fail(f"{what} not within {timeout} s (exit {proc.returncode}): {err[-2000:]}")


def test_a_killed_load_leaves_no_replay_model_and_closes_its_stdout(tmp_path: Path) -> None:
    args = ["load", "--replay", "todo-cli", "--concurrency", "2", "--sessions", "4"]
    proc = spawn_cli(*args, "--replay-token-delay", "0.01", "--results", str(tmp_path), sigint_ignored=True)

    def serving() -> bool:  # a span written: the embedded model answered a request
        return any(f.stat().st_size > 0 for f in tmp_path.glob("*/traces/*.spans.jsonl"))

    _wait_for(serving, proc, "a first request answered", 180)
    proc.send_signal(signal.SIGINT)  # ignored, as in a background job: the load runs on
    time.sleep(0.5)
    assert proc.poll() is None
    # the replay model (a spawn child) and multiprocessing's resource tracker
    _kill_and_check(proc, expect_at_least=2)


STAND_IN = r"""
import http.server, subprocess, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])  # a child of its own

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a):
        pass

http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def test_a_killed_local_model_serve_leaves_no_server(tmp_path: Path) -> None:
    """llama-server (a stand-in that starts a child of its own) ends with ``local-model serve``."""
    paths = lm.local_model_paths(tmp_path / "local-model")
    paths.model_file.parent.mkdir(parents=True)
    paths.model_file.write_bytes(b"gguf")
    lm.record_model(paths, sha256=lm.MODEL_SHA256)
    paths.server_binary.parent.mkdir(parents=True)
    paths.server_binary.write_text(f"#!{sys.executable}\n{STAND_IN}")
    paths.server_binary.chmod(0o755)
    lm.record_server(paths, version=["stand-in"])
    env = {**os.environ, "AGENTRUN_CACHE_DIR": str(tmp_path)}
    proc = spawn_cli("local-model", "serve", "--port", "0", env=env, sigint_ignored=True)
    logs = paths.logs_dir
    _wait_for(lambda: len(descendants(proc.pid)) >= 2 and any(logs.glob("*.log")), proc, "the server", 60)
    time.sleep(1.0)  # the stand-in's own child started
    _kill_and_check(proc, expect_at_least=2)
