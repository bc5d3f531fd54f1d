"""``tools/agent_launch.py`` on this machine (no container): how an agent's end is kept.

The launcher is what runs the agent in the sandbox; here it runs a shell as the "agent", on
loopback with a port of its own, so its endings can be seen without Docker: a crash keeps its
output and exit code, the wall time and the host's stop file end it (124, 125), and nothing it
started is left running, whatever it did to get away (a background job, ``setsid``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[3] / "tools" / "agent_launch.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spec(tmp_path: Path, command: str, timeout_s: float = 60) -> Path:
    path = tmp_path / "spec.json"
    body = {
        "argv": ["bash", "-c", command],
        "env": {},
        "files": {"note.txt": "a file the agent reads\n"},
        "home": str(tmp_path / "home"),
        "workdir": str(tmp_path),
        "socket": str(tmp_path / "no-gateway.sock"),
        "port": free_port(),
        "logs": str(tmp_path / "logs"),
        "collect": ["note.txt"],
        "timeout_s": timeout_s,
    }
    path.write_text(json.dumps(body))
    return path


def launch(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-I", str(LAUNCHER), str(path)])


def alive_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (zombies are gone already)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(pid))
    return found


def test_a_crash_keeps_its_output_and_its_exit_code(tmp_path: Path) -> None:
    done = launch(spec(tmp_path, "echo partial work; echo 'it broke' >&2; exit 3"))
    assert done.wait(60) == 3
    logs = tmp_path / "logs"
    assert (logs / "stdout.txt").read_text() == "partial work\n"
    assert (logs / "stderr.txt").read_text() == "it broke\n"
    assert (logs / "note.txt").read_text() == "a file the agent reads\n"  # collected from its home


def test_a_missing_program_is_said_in_its_stderr(tmp_path: Path) -> None:
    path = spec(tmp_path, "")
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "argv": ["/nonexistent/agent"]}))
    assert launch(path).wait(60) == 127
    assert "cannot start /nonexistent/agent" in (tmp_path / "logs" / "stderr.txt").read_text()


def test_a_hung_agent_is_stopped_at_its_wall_time_with_all_it_started(tmp_path: Path) -> None:
    marker = f"agentrun-hang-{uuid.uuid4().hex}"  # each sleep named by it (``exec -a``)
    command = (
        f"echo started; (exec -a {marker}-bg sleep 300) & "  # a background job
        f"setsid bash -c 'exec -a {marker}-setsid sleep 300' & "  # one in a session of its own
        f"exec -a {marker} sleep 300"
    )
    done = launch(spec(tmp_path, command, timeout_s=2))
    assert done.wait(60) == 124
    assert alive_with(marker) == []
    assert (tmp_path / "logs" / "stdout.txt").read_text() == "started\n"
    assert "stopped after 2" in (tmp_path / "logs" / "stderr.txt").read_text()


def test_the_host_stop_file_ends_the_agent_and_its_daemons(tmp_path: Path) -> None:
    marker = f"agentrun-stop-{uuid.uuid4().hex}"
    command = f"echo going; setsid -f bash -c 'exec -a {marker}-daemon sleep 300'; exec -a {marker} sleep 300"
    done = launch(spec(tmp_path, command))
    logs = tmp_path / "logs"
    deadline = time.monotonic() + 60
    while len(alive_with(marker)) < 2:  # the agent and its daemon are up
        assert time.monotonic() < deadline and done.poll() is None, "the agent did not start"
        time.sleep(0.05)
    (logs / "stop").write_text("max_tokens: 120 tokens spent, the budget is 100\n")
    assert done.wait(60) == 125
    assert "stopped by the host: max_tokens: 120 tokens spent" in (logs / "stderr.txt").read_text()
    assert alive_with(marker) == []


@pytest.mark.parametrize("command", ["exit 0", "echo done"])
def test_an_agent_that_ends_leaves_nothing_behind(tmp_path: Path, command: str) -> None:
    marker = f"agentrun-left-{uuid.uuid4().hex}"
    done = launch(spec(tmp_path, f"setsid -f bash -c 'exec -a {marker} sleep 300'; {command}"))
    assert done.wait(60) == 0
    assert alive_with(marker) == []
