"""The host-side guards, without Docker: argument bounds, the link-safe walk, the git history
on a hostile folder, and the judging of hidden-test reports."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentrun import grading
from agentrun.artifacts import measure_django
from agentrun.sandbox import hostfs, workspace
from agentrun.sandbox.arguments import MAX_DEPTH, bound_arguments
from agentrun.tasks import load_task
from agentrun.toolset import ArgumentError


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("timeout", [float("inf"), float("-inf"), float("nan"), -1, 0, "5", None, True, [1]])
def test_bad_shell_timeouts_are_tool_errors(timeout: object) -> None:
    with pytest.raises(ArgumentError) as caught:
        bound_arguments("run_shell", {"command": "ls", "timeout": timeout}, shell_timeout_max=300)
    assert caught.value.kind == "validation" and "run_shell" in str(caught.value)


def test_shell_timeout_is_clamped_and_defaulted() -> None:
    for huge in (1e308, 10**6):
        bounded = bound_arguments("run_shell", {"command": "ls", "timeout": huge}, shell_timeout_max=300)
        assert bounded["timeout"] == 300
    assert bound_arguments("run_shell", {"command": "ls"}, shell_timeout_max=300)["timeout"] == 120
    assert bound_arguments("read_file", {"path": "a"}, shell_timeout_max=300) == {"path": "a"}


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": _nested(50_000)},
        {"path": {"a": _nested(MAX_DEPTH)}},
        {"content": "x" * (17 * 1024 * 1024)},
        {"path": "a", "n": 10**5000},
        {"path": "a", "n": [float("nan")]},
    ],
    ids=["nested-50000", "nested-just-too-deep", "huge-string", "huge-int", "nan-in-list"],
)
def test_hostile_shapes_are_tool_errors(arguments: dict[str, object]) -> None:
    with pytest.raises(ArgumentError):
        bound_arguments("write_file", arguments, shell_timeout_max=300)


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.one_of(st.text(max_size=20), st.integers(), st.floats(), st.booleans(), st.none()),
        max_size=6,
    )
)
def test_flat_arguments_are_judged_as_the_general_walk_judges_them(arguments: dict[str, object]) -> None:
    """The one-pass check of flat arguments refuses exactly what the general walk refuses."""
    from agentrun.sandbox import arguments as module

    assert (module._flat_problem(arguments) is None) == (module._nested_problem(arguments) is None)


def test_walk_reads_no_link_fifo_or_huge_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET")
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "models.py").write_text("x = 1\n")
    (ws / "stolen.py").symlink_to(secret)
    (ws / "outside").symlink_to(tmp_path)
    os.mkfifo(ws / "urls.py")
    with open(ws / "big.py", "wb") as fh:
        fh.truncate(hostfs.MAX_FILE_BYTES + 1)
    (ws / "sub" / ".git").mkdir(parents=True)
    (ws / "sub" / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/x\n")
    (ws / ".GIT").write_text("gitdir: /root")
    entries = {e.path: e for e in hostfs.walk(ws)}
    assert set(entries) == {b"pkg/models.py", b"stolen.py", b"outside"}
    assert entries[b"stolen.py"].is_link and entries[b"stolen.py"].data == str(secret).encode()


def test_history_of_a_hostile_workspace_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    ws, git_dir = tmp_path / "ws", tmp_path / "git"
    ws.mkdir()
    first = workspace.init_repo(git_dir, ws)
    nested = ws / "sub"
    subprocess.run(["git", "init", "-q", str(nested)], check=True, timeout=60)
    config = nested / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = touch {marker}\n")
    (ws / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text(
        f'[filter "evil"]\n\tclean = touch {marker}\n[diff "evil"]\n\ttextconv = touch {marker}\n'
    )
    (nested / "code.py").write_text("print('nested')\n")
    (ws / 'odd "name"\n.txt').write_text("odd\n")
    sha = workspace.commit_all(git_dir, ws, "turn 1")
    assert sha and workspace.commit_all(git_dir, ws, "turn 2") is None
    patch = workspace.diff_since(git_dir, first)
    assert "+print('nested')" in patch and "+odd" in patch and ".git/config" not in patch
    assert b"sub/code.py" in workspace.archive(git_dir)
    assert not marker.exists()
    # control: the same folder does run the planted command under plain git
    subprocess.run(["git", "-C", str(nested), "status"], capture_output=True, check=False, timeout=60)
    assert marker.exists()


def test_artifact_measure_survives_hostile_sources(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text("from django.db import models\nclass A(models.Model):\n    pass\n")
    (tmp_path / "services.py").write_text("x = " + "a." * 20_000 + "b\n")
    os.mkfifo(tmp_path / "urls.py")
    (tmp_path / "admin.py").symlink_to("/etc/shadow")
    done: list[dict[str, int]] = []
    worker = threading.Thread(target=lambda: done.append(measure_django(tmp_path)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert done and done[0]["models"] == 1 and done[0]["python_files"] == 2


JUNIT_CASE = '<testcase classname="t" name="c{}"/>'


def _junit(passed: int, failed: int = 0, collection: int = 0) -> bytes:
    cases = [JUNIT_CASE.format(i) for i in range(passed)]
    cases += [f'<testcase name="f{i}"><failure message="x"/></testcase>' for i in range(failed)]
    cases += [
        f'<testcase classname="" name="m{i}"><error message="collection failure"/></testcase>'
        for i in range(collection)
    ]
    return f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>".encode()


@pytest.mark.parametrize(
    ("junit", "reward", "expected", "tally", "verdict"),
    [
        (_junit(16), 1.0, 16, (16, 0, 16), "graded"),
        (_junit(10, 6), 0.0, 16, (10, 6, 16), "graded"),
        (_junit(17), 1.0, 16, (0, 16, 16), "invalid"),  # an extra case
        (_junit(15), 1.0, 16, (0, 16, 16), "invalid"),  # one missing
        (_junit(16), 0.0, 16, (0, 16, 16), "invalid"),  # reward.txt disagrees
        (_junit(8, 0, 1), None, 16, (8, 8, 16), "graded"),  # a module did not import
        (_junit(16, 0, 1), None, 16, (0, 16, 16), "invalid"),
        (_junit(0, 0, 1), 0.0, 16, (0, 16, 16), "graded"),  # nothing importable: all failed
        (None, None, 16, (0, 16, 16), "graded"),
        (b"<testsuites", None, 16, (0, 16, 16), "graded"),
        (_junit(3), None, None, (3, 0, 3), "graded"),
    ],
)
def test_judge(
    junit: bytes | None,
    reward: float | None,
    expected: int | None,
    tally: tuple[int, int, int],
    verdict: str,
) -> None:
    judged, got_verdict, reason = grading.judge(junit, reward, expected)
    assert (judged.passed, judged.failed, judged.total) == tally
    assert got_verdict == verdict and (reason is None) == (verdict == "graded")


def test_every_task_knows_its_hidden_test_count() -> None:
    for name in ("todo-cli", "greet-cli", "django-reservations"):
        assert grading.expected_count(load_task(name))


def test_walk_reads_at_most_its_total_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostfs, "MAX_TOTAL_BYTES", 10)
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("12345678")
    assert [e.path for e in hostfs.walk(tmp_path)] == [b"a.txt"]


def test_history_from_a_tar_matches_the_history_from_the_folder(tmp_path: Path) -> None:
    """A remote engine's workspace arrives as a tar (``get_archive``): same commit, no unpacking."""
    ws = tmp_path / "ws"
    (ws / "pkg" / "__pycache__").mkdir(parents=True)
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / "pkg" / "__pycache__" / "mod.pyc").write_bytes(b"\0")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "link").symlink_to("/etc/shadow")
    (ws / "sub" / ".git").mkdir(parents=True)
    (ws / "sub" / ".git" / "config").write_text("[core]\n\tfsmonitor = true\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(ws, arcname=".")
    from_folder, from_tar = tmp_path / "a", tmp_path / "b"
    workspace.init_repo(from_folder, ws)
    (tmp_path / "empty").mkdir()
    workspace.init_repo(from_tar, tmp_path / "empty")
    assert workspace.commit_tar(from_tar, buffer.getvalue(), "turn")
    trees = [
        workspace.git(repo, "rev-parse", "refs/heads/main^{tree}").strip() for repo in (from_folder, from_tar)
    ]
    assert trees[0] == trees[1]
    listing = workspace.git(from_tar, "ls-tree", "-r", "--name-only", "refs/heads/main").decode().split()
    assert listing == ["link", "pkg/mod.py", "run.sh"]
