"""DockerSandbox against the real engine: the channel, the locks, git, and cleanup."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.errors import DockerUnavailable, SandboxError
from agentrun.messages import ParsedCall
from agentrun.sandbox import Sandbox
from agentrun.sandbox.docker import DockerSandbox, prune
from agentrun.sandbox.images import build_image, ensure_sandbox_base

pytestmark = pytest.mark.docker

TEST_IMAGE = "agentrun-test-sandbox:latest"


@pytest.fixture(scope="session")
def image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small image FROM the sandbox base, with a starter file in /workspace."""
    base = ensure_sandbox_base(client=docker_client)
    context = tmp_path_factory.mktemp("image")
    (context / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo 'print(\"starter\")' > /workspace/starter.py\n"
    )
    build_image(docker_client, context, TEST_IMAGE, {"BASE_IMAGE": base}, {}, None)
    return TEST_IMAGE


@pytest.fixture(scope="module")
def sandbox(image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(image, run_id="test-sandbox", pids_limit=96, labels={"purpose": "test"}) as sb:
        yield sb


def shell(sb: DockerSandbox, command: str, timeout: float = 30) -> Any:
    return sb.call(ParsedCall(id="c", name="run_shell", arguments={"command": command, "timeout": timeout}))


def test_is_a_sandbox(sandbox: DockerSandbox) -> None:
    checked: Sandbox = sandbox
    assert checked is sandbox


def test_channel_round_trip(sandbox: DockerSandbox) -> None:
    written = sandbox.call(
        ParsedCall(id="w1", name="write_file", arguments={"path": "pkg/mod.py", "content": "x = 1\n"})
    )
    assert written.ok and written.call_id == "w1" and written.name == "write_file"
    assert sandbox.call(
        ParsedCall(
            id="e1", name="edit_file", arguments={"path": "pkg/mod.py", "old": "x = 1", "new": "x = 2"}
        )
    ).ok
    read = sandbox.call(ParsedCall(id="r1", name="read_file", arguments={"path": "/workspace/pkg/mod.py"}))
    assert read.output == "x = 2\n" and read.error is None and read.duration_s > 0
    assert "pkg/mod.py" in sandbox.call(ParsedCall(id="l1", name="list_files", arguments={})).output
    assert (
        sandbox.call(ParsedCall(id="s1", name="search", arguments={"pattern": "x ="})).output
        == "pkg/mod.py:1: x = 2"
    )
    assert sandbox.call(ParsedCall(id="u1", name="no_such_tool", arguments={})).error == "unknown_tool"
    assert sandbox.call(ParsedCall(id="v1", name="read_file", arguments={"path": 3})).error == "validation"
    # the ping goes over the channel the calls used, not a new exec: judged on the channel kept,
    # not on a 0.5 s stopwatch, which a loaded machine's engine can miss on a healthy channel
    channel = sandbox._channel
    assert channel is not None and sandbox.ping() > 0 and sandbox._channel is channel


def test_the_channel_goes_past_dockerd_and_leaves_nothing_to_connect_to(sandbox: DockerSandbox) -> None:
    """This engine's sandbox talks to its runtime over the host's socket (``channel.py``); the
    socket's name is gone once the runtime is connected, and no command sees where it was."""
    assert sandbox._channel is not None and sandbox._channel._wire is not None
    result = shell(sandbox, 'ls -A /run/agentrun; echo "[${AGENTRUN_CHANNEL_SOCKET-unset}]"')
    assert result.output == "[unset]\n[exit code: 0]", result.output
    assert shell(sandbox, "kill -9 $PPID").error == "runtime"  # a new runtime, a new socket
    assert sandbox._channel is not None and sandbox._channel._wire is not None
    assert shell(sandbox, "ls -A /run/agentrun; echo ok").output == "ok\n[exit code: 0]"


def test_image_workspace_is_copied_in(sandbox: DockerSandbox) -> None:
    assert (
        sandbox.call(ParsedCall(id="r", name="read_file", arguments={"path": "starter.py"})).output
        == 'print("starter")\n'
    )
    assert (sandbox.workspace / "starter.py").is_file()


def test_runs_as_non_root_in_workspace(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "id -u; pwd; python3 --version")
    assert result.exit_code == 0
    uid, cwd, _ = result.output.splitlines()[:3]
    assert uid == "1000" and cwd == "/workspace"


def test_paths_outside_workspace_are_refused(sandbox: DockerSandbox) -> None:
    assert (
        sandbox.call(ParsedCall(id="a", name="read_file", arguments={"path": "/etc/passwd"})).error == "path"
    )
    assert (
        sandbox.call(
            ParsedCall(id="b", name="write_file", arguments={"path": "../etc/evil", "content": "x"})
        ).error
        == "path"
    )
    assert shell(sandbox, "ln -sf /etc/passwd escape.txt").exit_code == 0
    refused = sandbox.call(ParsedCall(id="c", name="read_file", arguments={"path": "escape.txt"}))
    assert refused.error == "path" and "symlink" in refused.output


def test_no_network(sandbox: DockerSandbox) -> None:
    code = "import socket; socket.create_connection(('1.1.1.1', 80), timeout=3); print('CONNECTED')"
    result = shell(sandbox, f'python3 -c "{code}"')
    assert result.exit_code != 0 and "CONNECTED" not in result.output
    assert "unreachable" in result.output.lower()


def test_root_filesystem_is_read_only(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "touch /evil || touch /usr/evil; echo written > /tmp/ok && cat /tmp/ok")
    assert "Read-only file system" in result.output and "written" in result.output
    assert shell(sandbox, "touch /tests/x").exit_code != 0


def test_fork_bomb_is_contained(sandbox: DockerSandbox) -> None:
    started = time.monotonic()
    result = shell(sandbox, ":(){ :|:& };:", timeout=10)
    assert time.monotonic() - started < 30
    assert result.error in (None, "timeout")
    after = shell(sandbox, "echo alive")
    assert after.output == "alive\n[exit code: 0]"


def test_unbounded_output_is_capped(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "yes abcdefgh | head -c 20000000; echo; echo END")
    assert result.truncated and result.exit_code == 0
    assert result.output.startswith("abcdefgh") and result.output.endswith("END\n[exit code: 0]")
    assert "bytes of output cut" in result.output and len(result.output) < 40_000


def test_shell_timeout(sandbox: DockerSandbox) -> None:
    started = time.monotonic()
    result = shell(sandbox, "echo begun; sleep 60", timeout=1)
    assert result.error == "timeout" and "begun" in result.output
    assert time.monotonic() - started < 10


def test_git_commit_only_when_changed(sandbox: DockerSandbox) -> None:
    sandbox.commit("settle")
    assert sandbox.commit("nothing changed") is None
    sandbox.call(
        ParsedCall(id="w", name="write_file", arguments={"path": "notes/new.txt", "content": "hello\n"})
    )
    sha = sandbox.commit("turn")
    assert sha and len(sha) == 40 and sandbox.commit("again") is None
    assert sandbox.head() == sha
    patch = sandbox.diff()
    assert "+++ b/notes/new.txt" in patch and "+hello" in patch
    assert "starter.py" not in patch  # part of the initial commit
    assert not (sandbox.workspace / ".git").exists()


def test_exec_put_dir_and_read_file(sandbox: DockerSandbox, tmp_path: Path) -> None:
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "test_x.py").write_text("def test_x():\n    assert sum([1, 2]) == 3\n")
    sandbox.put_dir(tmp_path / "hidden", "/tests")
    result = sandbox.exec(
        "python -m pytest -q -p no:cacheprovider /tests --junitxml=/logs/junit.xml", timeout=120
    )
    assert result.exit_code == 0 and "1 passed" in result.output and not result.timed_out
    assert b"<testsuite" in sandbox.read_file("/logs/junit.xml")
    slow = sandbox.exec("sleep 30", timeout=1)
    assert slow.timed_out and slow.duration_s < 10
    sandbox.put_dir(tmp_path / "hidden", "/tmp/copied")
    assert sandbox.read_file("/tmp/copied/test_x.py").startswith(b"def test_x")
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("/workspace/missing.txt")


def test_labels(sandbox: DockerSandbox) -> None:
    labels = sandbox.container.labels
    assert labels["agentrun"] == "1" and labels["agentrun.run_id"] == "test-sandbox"
    assert labels["purpose"] == "test"


def test_runtime_killed_mid_call_is_restarted(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "kill -9 $PPID; sleep 5")
    assert result.error == "runtime" and "died" in result.output
    assert shell(sandbox, "echo back").output == "back\n[exit code: 0]"


def test_dead_container_raises_sandbox_error(image: str, docker_client: Any) -> None:
    sb = DockerSandbox.start(image, run_id="test-dead")
    try:
        sb.container.kill()
        with pytest.raises(SandboxError, match="cannot be reopened"):
            shell(sb, "echo hi")
    finally:
        sb.close()


def test_close_removes_container_and_is_idempotent(image: str, docker_client: Any) -> None:
    sb = DockerSandbox.start(image, run_id="test-close")
    name, root = sb.container.name, sb.root
    sb.close()
    sb.close()
    assert not docker_client.containers.list(all=True, filters={"name": name})
    assert not root.exists()
    with pytest.raises(SandboxError):
        sb.call(ParsedCall(id="x", name="read_file", arguments={"path": "a"}))


def test_prune_removes_leftovers(image: str, docker_client: Any) -> None:
    run_id = f"prune-test-{time.time_ns()}"  # the engine is shared: prune only our own leftovers
    labels = {"agentrun": "1", "agentrun.run_id": run_id}
    leftovers = [docker_client.containers.create(image, ["sleep", "60"], labels=labels) for _ in range(2)]
    leftovers[0].start()
    assert prune(docker_client, run_id=run_id) == 2
    for leftover in leftovers:
        assert not docker_client.containers.list(all=True, filters={"id": leftover.id})


def test_missing_image_names_the_build_command() -> None:
    with pytest.raises(DockerUnavailable, match="agentrun sandbox build"):
        DockerSandbox.start("agentrun-no-such-image:nope", run_id="x")


def test_a_runtime_that_cannot_start_is_one_sandbox_error_with_its_stderr(
    image: str, docker_client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The tool runtime exits before it connects: the start fails as the sandbox's error (a run's
    error line, a job's infra retry), naming what the runtime said, and leaves no container. A
    live load once died with a ChannelClosed traceback here (CI, 2026-12-07)."""
    import agentrun.sandbox.docker as docker_backend

    said = "import sys; sys.stderr.write('runtime: cannot start here\\n'); sys.exit(3)"
    monkeypatch.setattr(docker_backend, "RUNTIME_CMD", ["python3", "-c", said])
    with pytest.raises(SandboxError, match=r"the tool runtime did not start: .*cannot start here"):
        DockerSandbox.start(image, run_id="test-runtime-cannot-start", root=tmp_path / "run")
    left = docker_client.containers.list(
        all=True, filters={"label": "agentrun.run_id=test-runtime-cannot-start"}
    )
    assert left == []
