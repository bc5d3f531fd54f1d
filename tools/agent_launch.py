"""Start an installed agent inside the sandbox, its one way out the gateway's socket. Stdlib only.

    python3 -I agent_launch.py SPEC.json

The container has no network (``network_mode: none``: only its own loopback). The gateway
listens on a Unix socket on the host, bind-mounted in; this relays ``127.0.0.1:PORT`` (the
base URL the agent is given) to that socket, byte for byte, so the agent speaks plain HTTP to
its endpoint and can reach nothing else. Then it writes the agent's files under its home, runs
it in its working directory with its environment, its stdout and stderr to files under
``logs`` (the host reads them), copies the files the host reads its ending from next to them,
and exits with the agent's exit code. The relay's threads end with this process.

The spec (JSON): ``argv``, ``env``, ``files`` (home-relative path -> text), ``home``,
``workdir``, ``socket``, ``port``, ``logs``, ``collect`` (home-relative paths), ``timeout_s``
(the agent is stopped past it: exit code 124). A file ``STOP_FILE`` in ``logs`` (the host
writes it, say when a token budget is spent) stops it too: exit code 125, the file's text
said in its stderr. Stopping is SIGTERM to the agent's session, then after ``GRACE_S``
SIGKILL to everything below this process (a child subreaper: ``leftovers.py``), so whatever
the agent started, daemons included, is gone when this exits, however the agent ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves this folder out
import leftovers

CHUNK = 65536
STOP_FILE = "stop"
GRACE_S = 3.0
POLL_S = 0.25
TIMED_OUT, STOPPED, NOT_STARTED = 124, 125, 127


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                s.shutdown(how)


def _serve(listener: socket.socket, path: str) -> None:
    """Each accepted connection relayed to the Unix socket at ``path``, both ways."""
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def relay(path: str, port: int) -> socket.socket:
    """Listen on 127.0.0.1:``port`` (bound before this returns) and relay to ``path``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    return listener


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the agent's session (its chance to write what it has), then SIGKILL."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(GRACE_S)
    leftovers.stop_descendants()
    with contextlib.suppress(ProcessLookupError):
        proc.kill()  # stop_descendants took it too; a bounded wait, not an open one
    proc.wait(10)


def run_agent(spec: dict[str, Any], logs: Path, out: BinaryIO, err: BinaryIO) -> int:
    """The agent to its end, its deadline or the host's stop; its exit code (or 124, 125, 127)."""
    try:
        proc = subprocess.Popen(
            spec["argv"],
            cwd=spec["workdir"],
            env={**os.environ, **spec["env"]},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own session: a terminal's signals and ours reach it alone
        )
    except OSError as exc:  # the agent's program is missing: said in its stderr
        err.write(f"agent_launch: cannot start {spec['argv'][0]}: {exc}\n".encode())
        return NOT_STARTED
    deadline = time.monotonic() + float(spec["timeout_s"])
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(POLL_S)
        if (logs / STOP_FILE).is_file():
            reason = (logs / STOP_FILE).read_text(errors="replace").strip()
            _stop(proc)
            err.write(f"agent_launch: stopped by the host: {reason}\n".encode())
            return STOPPED
        if time.monotonic() > deadline:  # the run's wall-time limit
            _stop(proc)
            err.write(f"agent_launch: stopped after {spec['timeout_s']} s\n".encode())
            return TIMED_OUT


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    leftovers.become_subreaper()
    relay(spec["socket"], int(spec["port"]))
    home, logs = Path(spec["home"]), Path(spec["logs"])
    logs.mkdir(parents=True, exist_ok=True)
    for rel, text in spec["files"].items():
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    with open(logs / "stdout.txt", "wb") as out, open(logs / "stderr.txt", "wb") as err:
        code = run_agent(spec, logs, out, err)
        leftovers.stop_descendants()  # what the agent left running when it exited
    for rel in spec["collect"]:
        if (home / rel).is_file():
            shutil.copyfile(home / rel, logs / Path(rel).name)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
