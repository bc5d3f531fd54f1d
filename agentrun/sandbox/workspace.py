"""The workspace's git history, kept on the host beside the workspace, out of the agent's reach.

::

    <root>/git        a bare repository: the initial commit, then one commit per turn that changed files
    <workspace>       the host folder bound to /workspace; git never sees it

Git never runs on the workspace. A work tree is full of things git *executes* or *follows*
when it finds them: a nested ``sub/.git/config`` with ``core.fsmonitor``, hooks, filter and
diff drivers named in ``.gitattributes``, ``.gitmodules``, a ``.git`` file pointing elsewhere
(reproduced: ``core.fsmonitor = touch /tmp/pwned`` ran as root on the host at the next
``git add -A``). So the host reads the workspace itself (``hostfs.walk``: no symlink
followed, no FIFO opened, ``.git`` entries never read) and writes the objects of a bare
repository itself (``gitstore.py``); git only reads them (diffs are tree to tree, archives).
A turn's commit is incremental (``History``): only the files that changed since the last
turn are read, and only their objects written, with no git process at all.
Every git command runs with an environment built from nothing and a fixed ``-c`` list
(``git`` below), so neither the host's git setup nor anything in the repository's data can
add a command, a hook or a pager.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from agentrun.errors import SandboxError
from agentrun.sandbox import gitstore, hostfs

# Left out of every commit and so of diff(): caches and environments, not the agent's work.
EXCLUDED_DIRS = frozenset(
    {b"__pycache__", b".pytest_cache", b".mypy_cache", b".ruff_cache", b"node_modules", b".venv", b"venv"}
)
AUTHOR = b"agentrun <agentrun@localhost>"
RACY_NS = 200_000_000  # a file changed this recently is read again at the next commit
# Belt and braces: the repository is bare and only our own plumbing runs, but none of git's
# command-running settings may ever come from anywhere but this list.
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.attributesFile=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "diff.external=",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
    "protocol.allow=never",
    "commit.gpgsign=false",
    "gc.auto=0",
    "maintenance.auto=false",
)


def git(git_dir: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run one git command on the bare repository; its stdout, or ``SandboxError``."""
    argv = ["git", "--no-pager", f"--git-dir={git_dir}"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir),  # no ~/.gitconfig of the host user
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    done = subprocess.run([*argv, *args], input=stdin, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        problem = done.stderr.decode(errors="replace").strip()[-500:]
        raise SandboxError(f"git {args[0]} failed in {git_dir}: {problem}")
    return done.stdout


def init_repo(git_dir: Path, workspace: Path, history: History | None = None) -> str:
    """Create the bare repository and commit the workspace as it is (empty or not); return that sha."""
    git(git_dir, "init", "--bare", "-q", "--template=", "--initial-branch=main", str(git_dir))
    history = history or History(git_dir)
    # a resumed run reopens its history: the workspace may be exactly its last commit
    sha = history.commit_folder(workspace, "initial workspace", allow_empty=True) or head(git_dir)
    assert sha is not None
    return sha


def head(git_dir: Path) -> str | None:
    """The sha of the last commit, or None before the first."""
    return gitstore.read_ref(git_dir)


def commit_all(git_dir: Path, workspace: Path, message: str, *, allow_empty: bool = False) -> str | None:
    """Commit the host folder as it is now if it differs from the last commit; the new sha, or None."""
    return History(git_dir).commit_folder(workspace, message, allow_empty=allow_empty)


def commit_tar(
    git_dir: Path, tar: bytes, message: str, *, left_out: dict[str, str] | None = None
) -> str | None:
    """``commit_all`` for a workspace that is only a tar (``get_archive``: a remote engine);
    ``left_out`` gets the files too large to keep."""
    entries = hostfs.tar_entries(tar, skip_dir=_excluded_dir, want_file=_wanted_file, left_out=left_out)
    return History(git_dir).commit_entries(entries, message)


def init_repo_from_tar(git_dir: Path, tar: bytes) -> str:
    """``init_repo`` for a workspace that lives only in a remote engine (``sandbox/remote.py``)."""
    git(git_dir, "init", "--bare", "-q", "--template=", "--initial-branch=main", str(git_dir))
    entries = hostfs.tar_entries(tar, skip_dir=_excluded_dir, want_file=_wanted_file)
    sha = History(git_dir).commit_entries(entries, "initial workspace", allow_empty=True) or head(git_dir)
    assert sha is not None
    return sha


def commit_entries(
    git_dir: Path, entries: Iterable[hostfs.Entry], message: str, *, allow_empty: bool = False
) -> str | None:
    """Commit exactly ``entries`` if they differ from the last commit; the new sha, or None."""
    return History(git_dir).commit_entries(entries, message, allow_empty=allow_empty)


class History:
    """The repository's last commit as the host last wrote it, kept between turns: a turn's
    commit reads only the files that changed and writes only their objects (``gitstore``).

    What is kept: the branch's sha, its flat tree and, per file, the stat key it was read
    with. A file whose ``hostfs.stat_key`` is the same as when it was read is not read again;
    one written so recently that a later write could leave the key as it is (timestamps move
    in clock ticks) is never trusted, so it is read at the next commit. When the branch moved
    under it (another writer, a resumed run), the tree is read back from git first.
    """

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.head: str | None = None
        self.tree: dict[bytes, tuple[int, str]] = {}
        self._keys: dict[bytes, tuple[tuple[int, ...], str]] = {}  # path -> (stat key, blob sha)
        self._trees: set[str] = set()  # tree objects known stored
        self._blobs: set[str] = set()  # the blobs of ``tree`` (stored)

    def commit_folder(
        self,
        workspace: Path,
        message: str,
        *,
        allow_empty: bool = False,
        left_out: dict[str, str] | None = None,
    ) -> str | None:
        """Commit the host folder as it is now if it differs from the last commit; the new sha, or
        None. ``left_out`` gets the files too large to keep (``hostfs.walk``)."""
        self._sync()
        entries = hostfs.walk(
            workspace, skip_dir=_excluded_dir, want_file=_wanted_file, reuse=self._reuse, left_out=left_out
        )
        return self.commit_entries(entries, message, allow_empty=allow_empty, synced=True)

    def commit_entries(
        self,
        entries: Iterable[hostfs.Entry],
        message: str,
        *,
        allow_empty: bool = False,
        synced: bool = False,
    ) -> str | None:
        """Commit exactly ``entries`` if they differ from the last commit; the new sha, or None."""
        if not synced:
            self._sync()
        trusted_before = time.time_ns() - RACY_NS
        after: dict[bytes, tuple[int, str]] = {}
        keys: dict[bytes, tuple[tuple[int, ...], str]] = {}
        for entry in entries:
            sha = entry.sha or gitstore.object_sha(b"blob", entry.data)
            if sha not in self._blobs:  # the last commit's blobs are stored: no lookup for them
                gitstore.write_object(self.git_dir, b"blob", entry.data, sha)
            after[entry.path] = (entry.mode, sha)
            key = entry.key if entry.sha is None else self._keys.get(entry.path, (None, ""))[0]
            if key is not None and key[5] < trusted_before:  # st_ctime_ns
                keys[entry.path] = (key, sha)
        self._keys = keys
        if after == self.tree and not (allow_empty and self.head is None):
            return None
        root = gitstore.write_trees(self.git_dir, after, self._trees)
        data = gitstore.commit_data(root, self.head, AUTHOR, int(time.time()), message)
        sha = gitstore.write_object(self.git_dir, b"commit", data)
        gitstore.set_ref(self.git_dir, sha)
        self.head, self.tree = sha, after
        self._blobs = {blob for _mode, blob in after.values()}
        return sha

    def _reuse(self, path: bytes, key: tuple[int, ...]) -> str | None:
        known = self._keys.get(path)
        return known[1] if known is not None and known[0] == key else None

    def _sync(self) -> None:
        """Read the last commit's tree back from git when the branch is not where we left it."""
        current = gitstore.read_ref(self.git_dir)
        if current != self.head:
            self.head, self.tree = current, _tree_of(self.git_dir, current) if current else {}
            self._keys, self._blobs = {}, {blob for _mode, blob in self.tree.values()}


def _excluded_dir(name: bytes) -> bool:
    return name in EXCLUDED_DIRS or name.endswith(b".egg-info")


def _wanted_file(name: bytes) -> bool:
    return not name.endswith(b".pyc")


def diff_since(git_dir: Path, commit: str) -> str:
    """The binary patch from ``commit`` to the last commit (trees only; no work tree is read)."""
    return git(
        git_dir, "diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", commit, "refs/heads/main"
    ).decode("utf-8", errors="replace")


def archive(git_dir: Path, commit: str = "refs/heads/main") -> bytes:
    """A tar of ``commit``'s files (``git archive``): a workspace to restore or to grade."""
    return git(git_dir, "archive", "--format=tar", commit)


def _tree_of(git_dir: Path, commit: str) -> dict[bytes, tuple[int, str]]:
    listing = git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    tree = {}
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, _, sha = meta.split(b" ")
            tree[path] = (int(mode, 8), sha.decode())
    return tree
