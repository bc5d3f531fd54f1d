"""The workspace's quota with the real engine: a write past it is the tool error ``disk_full``
the model sees, and a run whose workspace went past what is kept still ends with its result,
its patch and the list of the files left out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import first_line, load_result, only_run, run_cli, spawn_cli, stop

from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.reaper import prune_dead

pytestmark = pytest.mark.docker

QUOTA_MB = 48


def limited() -> None:
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        pytest.skip("the local workspace quota is a loop-mounted ext4: it needs root and mkfs.ext4")


@pytest.fixture
def sandbox(todo_image: str, tmp_path: Path) -> Iterator[DockerSandbox]:
    limited()
    with DockerSandbox.start(
        todo_image, run_id="test-quota", root=tmp_path / "run", workspace=tmp_path / "ws", quota_mb=QUOTA_MB
    ) as sb:
        yield sb


def call(sb: DockerSandbox, name: str, **arguments: Any) -> Any:
    return sb.call(ParsedCall(id="q", name=name, arguments=arguments))


def mounted(path: Path) -> bool:
    found = subprocess.run(["findmnt", "-n", str(path)], capture_output=True, text=True, timeout=30)
    return bool(found.stdout.strip())


def test_writes_past_the_quota_are_a_disk_full_error(sandbox: DockerSandbox, tmp_path: Path) -> None:
    assert sandbox.quota_mb == QUOTA_MB and sandbox.quota_note is None
    assert mounted(tmp_path / "ws")
    filled = call(sandbox, "run_shell", command="dd if=/dev/zero of=fill bs=1M count=200")
    assert filled.error == "disk_full", filled.output
    assert f"the workspace is full (its quota is {QUOTA_MB} MB)" in filled.output
    written = call(sandbox, "write_file", path="more.txt", content="x" * (8 << 20))
    assert written.error == "disk_full" and "more.txt" in written.output, written.output
    assert call(sandbox, "run_shell", command="rm fill && echo kept > small.txt").error is None
    assert call(sandbox, "write_file", path="more.txt", content="x" * (8 << 20)).error is None
    sandbox.close()  # the files are copied out to a plain folder, and nothing stays mounted
    assert not mounted(tmp_path / "ws")
    assert (tmp_path / "ws" / "small.txt").read_text() == "kept\n"
    assert (tmp_path / "ws" / "more.txt").stat().st_size == 8 << 20


def test_a_killed_runs_mount_is_pruned_with_its_files_kept(todo_image: str, tmp_path: Path) -> None:
    """SIGKILL skips close: the next prune finds the mount by its owner file, the owner dead,
    and unmounts it with the files copied out, as close would have."""
    limited()
    ws = tmp_path / "ws"
    child = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from agentrun.messages import ParsedCall
        from agentrun.sandbox.docker import DockerSandbox
        sb = DockerSandbox.start({todo_image!r}, run_id="test-quota-killed", root=Path({str(tmp_path / "run")!r}),
                                 workspace=Path({str(ws)!r}), quota_mb=32)
        assert sb.call(ParsedCall(id="w", name="write_file", arguments={{"path": "kept.txt", "content": "done"}})).ok
        print("ready", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert first_line(proc, timeout=120) == "ready"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert mounted(ws)
    pruned = prune_dead()
    assert pruned.mounts == 1 and pruned.containers >= 1, pruned
    assert not mounted(ws) and (ws / "kept.txt").read_text() == "done"
    assert not (tmp_path / "run" / ".workspace.owner").exists()
    assert prune_dead().mounts == 0


PAST_THE_LIMITS = [  # inserted after the first turn of todo-cli's replay script
    {
        "tool_calls": [
            {"name": "run_shell", "arguments": {"command": "dd if=/dev/zero of=fill bs=1M count=400"}}
        ]
    },
    {
        "tool_calls": [
            {
                "name": "run_shell",
                "arguments": {
                    "command": "rm -f fill && head -c 60000000 /dev/urandom > big.bin && truncate -s 3G sparse.bin"
                },
            }
        ]
    },
]


@pytest.mark.slow
def test_a_run_past_the_quota_ends_with_a_result_a_patch_and_the_list(
    tmp_path: Path, todo_image: str
) -> None:
    """The agent fills the quota (a tool error it sees), then leaves a 60 MB file (too large for
    the history) and a 3 GB sparse one (too large for the grader's copy): the run is graded on
    the files the history keeps, and its folder holds result.json, workspace.patch and
    workspace.left_out.txt. Direct mode: the replay model plays a turn again after an error
    result, and corrected mode would call that a stuck loop."""
    limited()
    tasks = tmp_path / "tasks"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "todo-cli", tasks / "todo-cli")
    toml = tasks / "todo-cli" / "task.toml"
    toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\nstorage_mb = 200\n", 1))
    assert "storage_mb = 200" in toml.read_text()
    env = {"AGENTRUN_TASKS_DIR": str(tasks)}
    script = tmp_path / "script.json"
    assert run_cli("replay", "script", "todo-cli", "-o", str(script), timeout=120, env=env).returncode == 0
    data = json.loads(script.read_text())
    blank = {"content": None, "reasoning": None, "finish_reason": None, "usage_completion_tokens": None}
    data["turns"][1:1] = [{**blank, **turn} for turn in PAST_THE_LIMITS]
    script.write_text(json.dumps(data))
    server = spawn_cli("replay", "serve", "--script", str(script), "--port", "0", stderr=subprocess.DEVNULL)
    try:
        base_url = first_line(server)
        proc = run_cli(
            "task",
            "todo-cli",
            "--mode",
            "direct",
            "--base-url",
            base_url,
            "--model",
            "replay",
            "--results",
            str(tmp_path / "r"),
            timeout=900,
            env=env,
        )
    finally:
        stop(server)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(tmp_path / "r")
    result = load_result(run_dir)
    assert result["hidden_tests"]["passed"] == result["hidden_tests"]["total"] == 16, result
    events = [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().split("\n") if line]
    errors = [e["result"]["error"] for e in events if e["event"] == "tool_result"]
    assert "disk_full" in errors, errors
    patch = (run_dir / "workspace.patch").read_text()
    assert "todo.py" in patch and "big.bin" not in patch and "sparse.bin" not in patch
    left_out = (run_dir / "workspace.left_out.txt").read_text()
    assert "big.bin\t60000000 bytes: over 50 MB" in left_out, left_out
    assert "sparse.bin\t3221225472 bytes" in left_out and "graded without it" in left_out, left_out
    assert "workspace.left_out.txt" in proc.stdout + proc.stderr
