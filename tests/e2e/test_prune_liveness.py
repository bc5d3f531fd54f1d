"""``sandbox prune`` and the next run's start remove only the containers of dead runs.

A label says a container is agentrun's, not whether its run still lives: every container
names its owner process, and cleanup removes it only when that process is gone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

AGENTRUN = Path(sys.executable).with_name("agentrun")


def _spawn(results: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(AGENTRUN), "task", "todo-cli", "--results", str(results), "--no-report", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _running_container(client: Any, proc: subprocess.Popen[str], timeout: float = 180) -> str:
    """The id of the run's own container once it runs (not the short-lived copy container)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate(timeout=60)
        for c in client.api.containers(
            filters={"label": [f"agentrun.owner.pid={proc.pid}", "agentrun.run_id"]}
        ):
            if c["State"] == "running" and not c["Names"][0].startswith("/agentrun-copy-"):
                return str(c["Id"])
        time.sleep(0.1)
    raise AssertionError("the run's container never ran")


def _exists(client: Any, container_id: str) -> bool:
    return any(c["Id"] == container_id for c in client.api.containers(all=True))


def _killed_run(client: Any, results: Path) -> str:
    """A run SIGKILLed mid-task: its container is left running, owned by a dead process."""
    proc = _spawn(results, "--replay-ttft", "2")
    container = _running_container(client, proc)
    proc.kill()
    proc.wait(30)
    assert _exists(client, container)
    return container


@pytest.mark.docker
@pytest.mark.slow
def test_prune_during_a_live_run_removes_only_the_dead_runs_container(
    tmp_path: Path, todo_image: str, docker_client: Any
) -> None:
    live = _spawn(tmp_path / "live", "--replay-ttft", "1.5")  # slow turns: it is mid-task throughout
    live_container = _running_container(docker_client, live)
    dead_container = _killed_run(docker_client, tmp_path / "dead")

    pruned = subprocess.run([str(AGENTRUN), "sandbox", "prune"], capture_output=True, text=True, timeout=120)
    assert pruned.returncode == 0, pruned.stderr
    assert not _exists(docker_client, dead_container)
    assert _exists(docker_client, live_container) and live.poll() is None

    _out, err = live.communicate(timeout=900)
    assert live.returncode == 0, err[-3000:]
    [result_file] = (tmp_path / "live").glob("*/result.json")
    result = json.loads(result_file.read_text())
    assert result["stop_reason"] == "final_answer" and result["error"] is None
    assert result["hidden_tests"]["passed"] == result["hidden_tests"]["total"] > 0
    assert "Traceback" not in err


@pytest.mark.docker
@pytest.mark.slow
def test_the_next_run_removes_what_a_killed_run_left(
    tmp_path: Path, todo_image: str, docker_client: Any
) -> None:
    dead_container = _killed_run(docker_client, tmp_path / "dead")
    assert not list((tmp_path / "dead").glob("*/result.json"))  # SIGKILL: no result written
    nxt = subprocess.run(
        [
            str(AGENTRUN),
            "task",
            "todo-cli",
            "--agent",
            "oracle",
            "--results",
            str(tmp_path / "next"),
            "--no-report",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    # gone: this run's start removed it (or any other agentrun started meanwhile on this engine)
    assert not _exists(docker_client, dead_container)
