"""Escape attempts against every host-side operation on the agent's workspace, with the real
engine: the agent plants each attack through its tools (``sandbox.call``), then the host does
what a run does (commit per turn, diff, history archive, artifact measure, workspace archive,
verifier). Nothing may run on the host and nothing outside the run folder may be read.

Each git attack ends with a control: plain ``git`` on the same folder does run the planted
command, so the plant is live and the test could fail.
"""

from __future__ import annotations

import io
import secrets
import subprocess
import tarfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.artifacts import measure_django
from agentrun.messages import ParsedCall
from agentrun.sandbox import workspace
from agentrun.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def host_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("host")


@pytest.fixture(scope="module")
def sandbox(todo_image: str, host_dir: Path) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(todo_image, run_id="test-escapes", root=host_dir / "run", pids_limit=128) as sb:
        yield sb


def shell(sb: DockerSandbox, command: str, timeout: float = 30) -> Any:
    result = sb.call(ParsedCall(id="c", name="run_shell", arguments={"command": command, "timeout": timeout}))
    assert result.error is None, result.output
    return result


def write(sb: DockerSandbox, path: str, content: str) -> None:
    result = sb.call(ParsedCall(id="w", name="write_file", arguments={"path": path, "content": content}))
    assert result.ok, result.output


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """``fn()``, which must return within ``seconds`` (a FIFO read would block forever)."""
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"{fn} did not return within {seconds}s"
    return out[0]


def host_operations(sb: DockerSandbox) -> bytes:
    """Everything a run does to the workspace on the host; all of it as bytes, to search."""
    found = [
        (sb.commit(f"turn {secrets.token_hex(2)}") or "").encode(),
        within(60, sb.diff).encode(),
        within(60, lambda: workspace.archive(sb.git_dir)),
        repr(within(60, lambda: measure_django(sb.workspace))).encode(),
        within(60, sb.workspace_archive),
    ]
    return b"\n".join(found)


def _config(marker: Path) -> str:
    """Every git setting we know that runs a command, each one touching ``marker``."""
    cmd = f"touch {marker}"
    return (
        f"[core]\n\tfsmonitor = {cmd}\n\tpager = {cmd}\n\tsshCommand = {cmd}\n\tgitProxy = {cmd}\n"
        f"\thooksPath = hooks\n\tuntrackedCache = true\n"
        f'[diff]\n\texternal = {cmd}\n[diff "evil"]\n\ttextconv = {cmd}\n\tcommand = {cmd}\n'
        f'[filter "evil"]\n\tclean = {cmd}\n\tsmudge = {cmd}\n\tprocess = {cmd}\n\trequired = true\n'
        f"[pager]\n\tdiff = {cmd}\n\tstatus = {cmd}\n[credential]\n\thelper = !{cmd}\n"
        f"[submodule]\n\trecurse = true\n[status]\n\tsubmoduleSummary = true\n"
        f"[uploadpack]\n\tpackObjectsHook = {cmd}\n"
    )


def _plant_repo(sb: DockerSandbox, folder: str, marker: Path) -> None:
    """A real repository at ``folder`` whose config, hooks and attributes all run ``touch marker``."""
    shell(sb, f"git init -q {folder} && cd {folder} && git config user.email a@b && git config user.name a")
    config = sb.call(ParsedCall(id="r", name="read_file", arguments={"path": f"{folder}/.git/config"})).output
    write(sb, f"{folder}/.git/config", config + _config(marker))
    hook = f"#!/bin/sh\ntouch {marker}\n"
    for name in ("pre-commit", "post-commit", "post-checkout", "post-index-change", "fsmonitor-watchman"):
        write(sb, f"{folder}/.git/hooks/{name}", hook)
        write(sb, f"{folder}/hooks/{name}", hook)
    shell(sb, f"chmod +x {folder}/.git/hooks/* {folder}/hooks/*")
    write(sb, f"{folder}/.gitattributes", "* filter=evil diff=evil merge=evil\n")
    write(sb, f"{folder}/code.py", "print('agent code')\n")


def _plain_git(args: list[str]) -> None:
    """Host git as a careless tool would run it (files are uid 1000's: ownership check off)."""
    subprocess.run(["git", "-c", "safe.directory=*", *args], capture_output=True, timeout=60, check=False)


def _assert_refused_then_live(sb: DockerSandbox, marker: Path, control: list[str]) -> None:
    host_operations(sb)
    assert not marker.exists(), "a command planted by the agent ran on the host"
    _plain_git(control)
    assert marker.exists(), "control: plain git did not run the plant, so the test proves nothing"
    marker.unlink()


def test_nested_repository_config_hooks_and_attributes(sandbox: DockerSandbox, host_dir: Path) -> None:
    marker = host_dir / "pwned-nested"
    _plant_repo(sandbox, "nested", marker)
    _assert_refused_then_live(sandbox, marker, ["-C", str(sandbox.workspace / "nested"), "status"])


def test_repository_at_the_workspace_root(sandbox: DockerSandbox, host_dir: Path) -> None:
    marker = host_dir / "pwned-root"
    _plant_repo(sandbox, ".", marker)
    write(sandbox, ".gitattributes", "* filter=evil diff=evil\n")
    _assert_refused_then_live(sandbox, marker, ["-C", str(sandbox.workspace), "add", "-A"])
    shell(sandbox, "rm -rf .git .gitattributes hooks")


def test_dot_git_file_and_symlink_pointing_elsewhere(sandbox: DockerSandbox, host_dir: Path) -> None:
    marker = host_dir / "pwned-gitfile"
    _plant_repo(sandbox, "elsewhere", marker)
    write(sandbox, "byfile/.git", "gitdir: ../elsewhere/.git\n")
    write(sandbox, "byfile/x.py", "x = 1\n")
    shell(sandbox, "mkdir -p bylink && ln -s ../elsewhere/.git bylink/.git && echo y > bylink/y.py")
    host_operations(sandbox)
    assert not marker.exists()
    for folder in ("byfile", "bylink"):
        _plain_git(["-C", str(sandbox.workspace / folder), "status"])
        assert marker.exists(), folder
        marker.unlink()


def test_gitmodules_and_include_path(sandbox: DockerSandbox, host_dir: Path) -> None:
    marker = host_dir / "pwned-modules"
    write(sandbox, "inc.cfg", _config(marker))
    shell(sandbox, "git init -q withinclude && git -C withinclude config include.path ../../inc.cfg")
    write(
        sandbox,
        ".gitmodules",
        f'[submodule "m"]\n\tpath = withinclude\n\turl = ext::sh -c touch% {marker}\n\tupdate = !touch {marker}\n',
    )
    _assert_refused_then_live(sandbox, marker, ["-C", str(sandbox.workspace / "withinclude"), "status"])


def test_links_fifos_and_huge_files_are_not_followed(sandbox: DockerSandbox, host_dir: Path) -> None:
    secret_value = f"HOST-SECRET-{secrets.token_hex(8)}"
    secret = host_dir / "secret.txt"
    secret.write_text(secret_value)
    shell(
        sandbox,
        f"ln -s {secret} leak.py && ln -s {secret} models.py && ln -s /etc/shadow shadow.py "
        f"&& ln -s {host_dir} hostdir && ln -s / hostroot && mkdir -p pkg && ln -s {host_dir} pkg/models "
        "&& mkfifo urls.py && mkfifo pkg/admin.py && truncate -s 100G services.py",
    )
    bounded = sandbox.workspace_archive()  # the sparse file: the stream let go, the history graded
    assert "services.py" in sandbox.left_out_of_grading and "/workspace" in sandbox.left_out_of_grading
    with tarfile.open(fileobj=io.BytesIO(bounded)) as tar:
        names = tar.getnames()
    assert "services.py" not in names and "leak.py" in names, names
    shell(sandbox, "rm services.py")
    seen = host_operations(sandbox)
    assert secret_value.encode() not in seen and b"root:" not in seen
    assert str(secret).encode() in seen  # the links are recorded as links
    with sandbox.open_verifier(sandbox.workspace_archive()) as verifier:
        inside = verifier.exec("cat leak.py; ls hostdir/ | head -3; cat /workspace/code.py", timeout=30)
    assert secret_value not in inside.output and "agent code" in inside.output


def test_history_is_complete_and_outside_the_agents_reach(sandbox: DockerSandbox) -> None:
    write(sandbox, "notes/plan.md", "the plan\n")
    sha = sandbox.commit("turn")
    assert sha and sandbox.head() == sha and "+the plan" in sandbox.diff()
    listing = shell(sandbox, "ls -a /; ls -a /workspace").output
    assert "git" not in listing.split() and not (sandbox.workspace / ".git").exists()
