"""The per-turn commit is incremental (``workspace.History``) and still records exactly the folder:
git itself (``fsck --strict``, ``ls-tree``, ``show``) reads back what the host wrote."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from agentrun.sandbox import gitstore, hostfs, workspace


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, check=True, text=True, timeout=30
    ).stdout


def _files_at(git_dir: Path, commit: str = "refs/heads/main") -> dict[str, str]:
    names = _git(git_dir, "ls-tree", "-r", "--name-only", commit).split("\n")
    return {name: _git(git_dir, "show", f"{commit}:{name}") for name in names if name}


def _age(path: Path, seconds: float = 5.0) -> None:
    """Let the file's last change lie in the past, as a file of an earlier turn does."""
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, workspace.History]:
    monkeypatch.setattr(workspace, "RACY_NS", 0)  # every file read is trusted from the next commit on
    ws, git_dir = tmp_path / "ws", tmp_path / "git"
    (ws / "pkg" / "deep").mkdir(parents=True)
    (ws / "app.py").write_text("print('hi')\n")
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "deep" / "x.txt").write_text("x\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    os.symlink("app.py", ws / "link")
    history = workspace.History(git_dir)
    workspace.init_repo(git_dir, ws, history)
    return ws, git_dir, history


def test_commits_are_what_git_reads_back_and_fsck_accepts(repo: tuple[Path, Path, workspace.History]) -> None:
    ws, git_dir, history = repo
    (ws / "pkg" / "deep" / "x.txt").write_text("changed\n")
    (ws / "new.txt").write_text("new\n")
    (ws / "app.py").unlink()
    sha = history.commit_folder(ws, "turn 1")
    assert sha and _git(git_dir, "rev-parse", "refs/heads/main").strip() == sha
    assert _files_at(git_dir) == {
        "link": "app.py",
        "new.txt": "new\n",
        "pkg/__init__.py": "",
        "pkg/deep/x.txt": "changed\n",
        "run.sh": "#!/bin/sh\n",
    }
    assert "100755 blob" in _git(git_dir, "ls-tree", "HEAD", "run.sh")
    assert "120000 blob" in _git(git_dir, "ls-tree", "HEAD", "link")
    assert _git(git_dir, "log", "--format=%s", "HEAD") == "turn 1\ninitial workspace\n"
    subprocess.run(
        ["git", f"--git-dir={git_dir}", "fsck", "--strict"], check=True, capture_output=True, timeout=60
    )
    assert history.commit_folder(ws, "turn 2") is None  # nothing changed: no commit


def test_unchanged_files_are_not_read_again(
    repo: tuple[Path, Path, workspace.History], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, _git_dir, history = repo
    for path in ws.rglob("*"):
        if path.is_file() and not path.is_symlink():
            _age(path)
    history.commit_folder(ws, "aged")  # the aged stat keys are now known
    read: list[bytes] = []
    original = hostfs._Walk._read

    def spy(self: hostfs._Walk, dir_fd: int, name: bytes, path: bytes) -> hostfs.Entry | None:
        read.append(path)
        return original(self, dir_fd, name, path)

    monkeypatch.setattr(hostfs._Walk, "_read", spy)
    (ws / "pkg" / "deep" / "x.txt").write_text("turn 3\n")
    assert history.commit_folder(ws, "turn 3")
    assert read == [b"pkg/deep/x.txt"]


def test_a_change_that_restores_size_and_mtime_is_still_committed(
    repo: tuple[Path, Path, workspace.History],
) -> None:
    """An agent (or a tool) that writes a file and sets its mtime back: the ctime still moved."""
    ws, git_dir, history = repo
    target = ws / "app.py"
    _age(target)
    history.commit_folder(ws, "aged")
    before = target.stat()
    target.write_text("print('HI')\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_mtime_ns == before.st_mtime_ns and target.stat().st_size == before.st_size
    assert history.commit_folder(ws, "sneaky")
    assert _files_at(git_dir)["app.py"] == "print('HI')\n"


def test_a_file_written_within_the_racy_margin_is_read_again(tmp_path: Path) -> None:
    """With the real margin, a file just written is never trusted from its stat key."""
    ws, git_dir = tmp_path / "ws", tmp_path / "git"
    ws.mkdir()
    (ws / "f").write_text("a")
    history = workspace.History(git_dir)
    workspace.init_repo(git_dir, ws, history)
    assert history._keys == {}  # written just now: not trusted
    (ws / "f").write_text("b")
    assert history.commit_folder(ws, "t") and _files_at(git_dir)["f"] == "b"


def test_a_branch_moved_by_another_writer_is_read_back(repo: tuple[Path, Path, workspace.History]) -> None:
    ws, git_dir, history = repo
    (ws / "other.txt").write_text("from another writer\n")
    assert workspace.commit_all(git_dir, ws, "elsewhere")  # a History of its own
    (ws / "new.txt").write_text("mine\n")
    sha = history.commit_folder(ws, "turn")
    assert sha and _git(git_dir, "log", "--format=%s", "-2", sha) == "turn\nelsewhere\n"
    assert _files_at(git_dir)["other.txt"] == "from another writer\n"


def test_a_reopened_history_continues_the_branch(repo: tuple[Path, Path, workspace.History]) -> None:
    ws, git_dir, history = repo
    first = gitstore.read_ref(git_dir)
    (ws / "app.py").write_text("v2\n")
    again = workspace.History(git_dir)
    sha = again.commit_folder(ws, "resumed")
    assert sha and _git(git_dir, "rev-parse", f"{sha}^").strip() == first
    assert history.commit_folder(ws, "nothing new") is None  # it sees the moved branch, and no change
