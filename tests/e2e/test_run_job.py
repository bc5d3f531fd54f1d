"""``agentrun run --job``: a job killed with SIGKILL mid-trial resumes with only the trials that
had no result, and an image build killed from outside is retried and counted as infra."""

from __future__ import annotations

import json
import secrets
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import run_cli, spawn_cli, stop

pytestmark = pytest.mark.docker

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"
IMAGE_MAP = ["--image-map-file", str(PROBES / "image-map.txt")]


def _ledger(job: Path) -> dict[str, Any] | None:
    try:
        return json.loads((job / "job.json").read_text())
    except (OSError, ValueError):
        return None


def _mid_trial(job: Path) -> str | None:
    """A trial whose run folder exists while two others have their result, or None."""
    ledger = _ledger(job)
    if ledger is None:
        return None
    done = [t for t in ledger["trials"] if t["status"] == "done"]
    running = [t["id"] for t in ledger["trials"] if t["status"] == "pending" and (job / t["id"]).is_dir()]
    return running[0] if len(done) >= 2 and running else None


def _containers(docker_client: Any, ids: set[str]) -> list[str]:
    found = docker_client.api.containers(all=True, filters={"label": "agentrun=1"})
    return [c["Id"] for c in found if c["Labels"].get("agentrun.run_id") in ids]


def test_job_killed_midway_resumes_with_only_the_missing_trials(docker_client: Any, tmp_path: Path) -> None:
    job = tmp_path / "job"
    args = [
        "run",
        str(PROBES / "solve-only"),
        "--agent",
        "oracle",
        "--trials",
        "4",
        "--job",
        str(job),
        *IMAGE_MAP,
    ]
    with (tmp_path / "first.out").open("w") as out:
        proc = spawn_cli(*args, stdout=out, stderr=out)
        try:
            deadline, killed_in = time.monotonic() + 240, None
            while time.monotonic() < deadline and proc.poll() is None and killed_in is None:
                killed_in = _mid_trial(job)
                time.sleep(0.1)
            assert killed_in, (
                f"never caught mid-trial (exit {proc.poll()}): {(tmp_path / 'first.out').read_text()}"
            )
        finally:
            stop(proc)  # SIGKILL to the CLI's process group
    assert proc.returncode == -9
    before = _ledger(job)
    assert before is not None
    finished = {t["id"]: t for t in before["trials"] if t["status"] == "done"}
    started = {i: json.loads((job / i / "result.json").read_text())["started_at"] for i in finished}
    ids = {t["id"] for t in before["trials"]}

    again = run_cli(*args, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert not _containers(docker_client, ids)  # the killed CLI's sandbox was pruned at the start
    todo = 4 - len(finished)
    assert f"{todo} of 4 trials to run" in again.stderr
    ran = {line.split(":")[0] for line in again.stderr.splitlines() if line.startswith("solve-only__t")}
    assert ran == ids - set(finished), again.stderr  # only the trials without a result ran
    after = _ledger(job)
    assert after is not None and after["summary"]["finished"] == 4 and after["summary"]["mean"] == 1.0
    for i, at in started.items():  # the finished trials are as they were
        assert json.loads((job / i / "result.json").read_text())["started_at"] == at
    trials = {t["id"]: t for t in after["trials"]}
    assert [a["cause"] for a in trials[killed_in]["attempts"]] == ["interrupted", "ok"]
    assert (job / f"{killed_in}.attempt-1").is_dir()  # what the killed attempt left is kept
    assert "4 of 4 trials" in again.stdout

    table = run_cli(*args, timeout=120)  # a finished job prints its table again, runs nothing
    assert table.returncode == 0 and "0 of 4 trials to run" in table.stderr
    assert "4 of 4 trials" in table.stdout and "solve-only__t" not in table.stderr


def _kill_build(docker_client: Any, marker: str, killed: list[str], stop_at: float) -> None:
    """Kill the build container of the RUN step that prints ``marker``, once."""
    while time.monotonic() < stop_at and not killed:
        for c in docker_client.api.containers(filters={"status": "running"}):
            if marker in (c.get("Command") or ""):
                docker_client.api.kill(c["Id"])
                killed.append(c["Id"])
                return
        time.sleep(0.1)


def test_an_image_build_killed_from_outside_is_retried_as_infra(docker_client: Any, tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "slow-build"
    shutil.copytree(PROBES / "solve-only", task)
    marker = f"agentrun-kill-{secrets.token_hex(4)}"  # a new image: nothing of it is cached
    (task / "environment" / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nWORKDIR /app\nRUN echo {marker} && sleep 4\n"
    )
    killed: list[str] = []
    watcher = threading.Thread(
        target=_kill_build, args=(docker_client, marker, killed, time.monotonic() + 240), daemon=True
    )
    watcher.start()
    job = tmp_path / "job"
    proc = run_cli("run", str(task), "--agent", "oracle", "--job", str(job), *IMAGE_MAP, timeout=300)
    watcher.join(5)
    assert killed, "the build was never caught running"
    assert proc.returncode == 0, proc.stderr[-3000:]
    ledger = _ledger(job)
    assert ledger is not None
    (trial,) = ledger["trials"]
    assert trial["status"] == "done" and trial["cause"] == "ok" and trial["reward"] == 1.0
    first, second = trial["attempts"]
    assert first["cause"] == "infra" and "137" in first["detail"], first
    assert second["cause"] == "ok"
    assert ledger["summary"]["infra_retries"] == 1
    assert ledger["summary"]["failures"] == {"task": 0, "timeout": 0, "infra": 0}
    assert "infra retries 1" in proc.stderr
