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
(the agent is killed past it: exit code 124).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

CHUNK = 65536


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


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    relay(spec["socket"], int(spec["port"]))
    home, logs = Path(spec["home"]), Path(spec["logs"])
    logs.mkdir(parents=True, exist_ok=True)
    for rel, text in spec["files"].items():
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    env = {**os.environ, **spec["env"]}
    with open(logs / "stdout.txt", "wb") as out, open(logs / "stderr.txt", "wb") as err:
        try:
            code = subprocess.call(
                spec["argv"],
                cwd=spec["workdir"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=float(spec["timeout_s"]),
            )
        except subprocess.TimeoutExpired:  # killed: the run's wall-time limit
            err.write(f"agent_launch: killed after {spec['timeout_s']} s\n".encode())
            code = 124
        except OSError as exc:  # the agent's program is missing: said in its stderr
            err.write(f"agent_launch: cannot start {spec['argv'][0]}: {exc}\n".encode())
            code = 127
    for rel in spec["collect"]:
        if (home / rel).is_file():
            shutil.copyfile(home / rel, logs / Path(rel).name)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
