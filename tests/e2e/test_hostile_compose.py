"""The task author is the attacker: a downloaded task whose compose sidecar asks for the host's
/etc, the Docker socket, the host's network and processes, privileged mode and SYS_ADMIN (some
through a YAML anchor and a ${VAR} default) is refused, one line per setting, before anything
is built or started; with --allow-task-privileges it runs as written, and result.json says so."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import load_result, only_run, run_cli

pytestmark = pytest.mark.docker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
IMAGE_MAP = str(FIXTURES / "harbor_tasks" / "image-map.txt")
KEY = "sk-hostile-compose-test-0123456789"


def _task(tmp_path: Path) -> Path:
    task = tmp_path / "hostile-sidecar"
    shutil.copytree(FIXTURES / "hostile_tasks" / "compose-sidecar", task)
    return task


def _run(task: Path, results: Path, *extra: str) -> Any:
    args = ("task", str(task), "--agent", "oracle", "--results", str(results), "--no-report")
    return run_cli(*args, "--image-map-file", IMAGE_MAP, *extra, env={"OPENAI_API_KEY": KEY}, timeout=600)


def test_a_hostile_sidecar_is_refused_one_line_per_setting_before_anything_starts(
    tmp_path: Path, docker_client: Any
) -> None:
    task, results = _task(tmp_path), tmp_path / "results"
    proc = _run(task, results)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and "Docker is not running" not in proc.stderr
    refused = [ln.removeprefix("error: refused: compose service 'side': ") for ln in lines[:-1]]
    assert all(ln.startswith("error: refused: compose service 'side': ") for ln in lines[:-1]), lines
    assert [r.split(" ")[0] for r in refused] == [
        "privileged:",
        "volumes:",  # /etc
        "volumes:",  # the socket
        "volumes:",  # out/, writable
        "network_mode:",  # through the anchor
        "pid:",
        "cap_add:",  # through ${EXTRA_CAP:-SYS_ADMIN}
    ]
    assert "/etc" in refused[1] and "docker.sock" in refused[2] and "SYS_ADMIN" in refused[6]
    assert "network_mode: host" in refused[4] and "pid: host" in refused[5]
    assert lines[-1] == (
        "error: task hostile-sidecar: 7 compose setting(s) refused; --allow-task-privileges runs them as written"
    )
    # nothing was built, started or written: no run folder, the sidecar never wrote out/
    assert not results.exists() and not (task / "environment" / "out").exists()


def _privileged_works(docker_client: Any) -> bool:
    """Whether this engine can start a privileged container (one inside a container often cannot)."""
    from docker.errors import APIError

    try:
        docker_client.containers.run("agentrun-sandbox:base", "true", privileged=True, remove=True)
    except APIError:
        return False
    return True


def test_with_allow_task_privileges_it_runs_as_written_and_result_json_says_so(
    tmp_path: Path, docker_client: Any
) -> None:
    task, results = _task(tmp_path), tmp_path / "results"
    compose = task / "environment" / "docker-compose.yaml"
    if not _privileged_works(docker_client):  # the rest of the attack still runs
        compose.write_text(compose.read_text().replace("    privileged: true\n", ""))
    proc = _run(task, results, "--allow-task-privileges")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = " ".join((proc.stdout + proc.stderr).split())  # the console wraps its lines
    assert "--allow-task-privileges: the task's compose services run as written" in said
    assert "--allow-task-privileges: allowed compose service 'side': cap_add: SYS_ADMIN" in said
    result = load_result(only_run(results))
    assert result["allow_task_privileges"] is True and result["reward"] == 1
    allowed = result["task_privileges"]
    assert any("/var/run/docker.sock" in a for a in allowed) and any(
        "network_mode: host" in a for a in allowed
    )
    assert any("cap_add: SYS_ADMIN" in a for a in allowed) and all(
        a.startswith("compose service 'side'") for a in allowed
    )
    out = task / "environment" / "out"  # what the sidecar got, written from inside it
    assert (out / "hostname").read_text() == Path("/etc/hostname").read_text()
    assert (out / "socket").read_text().strip() == "/var/run/docker.sock"
    effective = int((out / "caps").read_text().split()[1], 16)
    assert effective >> 21 & 1  # CAP_SYS_ADMIN
    assert KEY not in (out / "env").read_text()  # Compose never sees the user's environment


@pytest.mark.parametrize(
    ("section", "line", "says"),
    [
        ("agent", "timeout_sec = 1e308", "field 'agent.timeout_sec' = 1e+308: Input should be less than"),
        ("environment", "build_timeout_sec = 1e308", "field 'environment.build_timeout_sec' = 1e+308"),
        ("agent", "timeout_sec = nan", "field 'agent.timeout_sec' = nan: Input should be a finite number"),
        ("environment", "cpus = 1000", "field 'environment.cpus' = 1000: Input should be less than"),
        ("environment", "cpus = 64", "task.toml environment.cpus = 64 is more than this Docker engine's"),
    ],
)
def test_an_absurd_task_toml_value_is_one_line_about_it(
    tmp_path: Path, docker_client: Any, section: str, line: str, says: str
) -> None:
    if "64" in line and docker_client.info()["NCPU"] >= 64:
        pytest.skip("this engine has 64 CPUs")
    task = tmp_path / "absurd"
    shutil.copytree(FIXTURES / "harbor_tasks" / "solve-only", task)
    toml = (task / "task.toml").read_text()
    key = line.split(" ")[0]
    kept = [ln for ln in toml.splitlines() if not ln.startswith(f"{key} =")]
    (task / "task.toml").write_text("\n".join(kept).replace(f"[{section}]", f"[{section}]\n{line}") + "\n")
    proc = _run(task, tmp_path / "results")
    assert proc.returncode == 2, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and says in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "Docker is not running" not in proc.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


@pytest.mark.parametrize(
    "command", [("compare", "--trials", "1", "--no-report"), ("run", "--agent", "oracle")]
)
def test_compare_and_run_refuse_it_too_and_leave_nothing(
    tmp_path: Path, docker_client: Any, command: tuple[str, ...]
) -> None:
    task, results = _task(tmp_path), tmp_path / "results"
    proc = run_cli(command[0], str(task), *command[1:], "--results", str(results), timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 8 and errors[0] == "error: refused: compose service 'side': privileged: true"
    assert not results.exists() and not (task / "environment" / "out").exists()
