"""The workspace's git history, kept on the host beside the workspace, out of the agent's reach.

::

    <root>/git        a bare repository: the initial commit, then one commit per turn that changed files
    <workspace>       the host folder bound to /workspace; git never sees it

Git never runs on the workspace. A work tree is full of things git *executes* or *follows*
when it finds them: a nested ``sub/.git/config`` with ``core.fsmonitor``, hooks, filter and
diff drivers named in ``.gitattributes``, ``.gitmodules``, a ``.git`` file pointing elsewhere
(reproduced: ``core.fsmonitor = touch /tmp/pwned`` ran as root on the host at the next
``git add -A``). So the host reads the workspace itself (``hostfs.walk``: no symlink
followed, no FIFO opened, ``.git`` entries never read) and hands the blobs to
``git fast-import`` on a bare repository, which only writes objects; diffs are tree to tree.
Every git command runs with an environment built from nothing and a fixed ``-c`` list
(``git`` below), so neither the host's git setup nor anything in the repository's data can
add a command, a hook or a pager.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from agentrun.errors import SandboxError
from agentrun.sandbox import hostfs

# Left out of every commit and so of diff(): caches and environments, not the agent's work.
EXCLUDED_DIRS = frozenset(
    {b"__pycache__", b".pytest_cache", b".mypy_cache", b".ruff_cache", b"node_modules", b".venv", b"venv"}
)
AUTHOR = b"agentrun <agentrun@localhost>"
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


def init_repo(git_dir: Path, workspace: Path) -> str:
    """Create the bare repository and commit the workspace as it is (empty or not); return that sha."""
    git(git_dir, "init", "--bare", "-q", "--template=", "--initial-branch=main", str(git_dir))
    # a resumed run reopens its history: the workspace may be exactly its last commit
    sha = commit_all(git_dir, workspace, "initial workspace", allow_empty=True) or head(git_dir)
    assert sha is not None
    return sha


def head(git_dir: Path) -> str | None:
    """The sha of the last commit, or None before the first."""
    try:
        return git(git_dir, "rev-parse", "--verify", "-q", "refs/heads/main").decode().strip() or None
    except SandboxError:
        return None


def commit_all(git_dir: Path, workspace: Path, message: str, *, allow_empty: bool = False) -> str | None:
    """Commit the host folder as it is now if it differs from the last commit; the new sha, or None."""
    entries = hostfs.walk(workspace, skip_dir=_excluded_dir, want_file=_wanted_file)
    return commit_entries(git_dir, entries, message, allow_empty=allow_empty)


def commit_tar(git_dir: Path, tar: bytes, message: str) -> str | None:
    """``commit_all`` for a workspace that is only a tar (``get_archive``: a remote engine)."""
    entries = hostfs.tar_entries(tar, skip_dir=_excluded_dir, want_file=_wanted_file)
    return commit_entries(git_dir, entries, message)


def init_repo_from_tar(git_dir: Path, tar: bytes) -> str:
    """``init_repo`` for a workspace that lives only in a remote engine (``sandbox/remote.py``)."""
    git(git_dir, "init", "--bare", "-q", "--template=", "--initial-branch=main", str(git_dir))
    entries = hostfs.tar_entries(tar, skip_dir=_excluded_dir, want_file=_wanted_file)
    sha = commit_entries(git_dir, entries, "initial workspace", allow_empty=True) or head(git_dir)
    assert sha is not None
    return sha


def commit_entries(
    git_dir: Path, entries: Iterable[hostfs.Entry], message: str, *, allow_empty: bool = False
) -> str | None:
    """Commit exactly ``entries`` if they differ from the last commit; the new sha, or None."""
    parent = head(git_dir)
    before = _tree_of(git_dir, parent) if parent else {}
    stored = {sha for _, sha in before.values()}
    after: dict[bytes, tuple[int, str]] = {}
    new_blobs: dict[str, bytes] = {}  # only blobs git does not have yet are kept in memory
    for entry in entries:
        sha = _blob_sha(entry.data)
        after[entry.path] = (entry.mode, sha)
        if sha not in stored:
            new_blobs.setdefault(sha, entry.data)
    if after == before and not (allow_empty and parent is None):
        return None
    stream = _fast_import_stream(new_blobs, after, parent, message)
    git(git_dir, "fast-import", "--quiet", "--done", stdin=stream)
    return head(git_dir)


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


def _blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _fast_import_stream(
    new_blobs: dict[str, bytes], tree: dict[bytes, tuple[int, str]], parent: str | None, message: str
) -> bytes:
    """One ``git fast-import`` commit holding exactly ``tree``; ``new_blobs`` go inline, the rest by sha."""
    out = bytearray()
    marks: dict[str, int] = {}
    for sha, data in new_blobs.items():
        marks[sha] = len(marks) + 1
        out += b"blob\nmark :%d\ndata %d\n%b\n" % (marks[sha], len(data), data)
    text = message.encode("utf-8", errors="replace")
    out += b"commit refs/heads/main\ncommitter %b %d +0000\n" % (AUTHOR, int(time.time()))
    out += b"data %d\n%b\n" % (len(text), text)
    if parent:
        out += b"from %b\n" % parent.encode()
    out += b"deleteall\n"
    for path, (mode, sha) in sorted(tree.items()):
        ref = b":%d" % marks[sha] if sha in marks else sha.encode()
        out += b"M %o %b %b\n" % (mode, ref, _quote(path))
    out += b"\ndone\n"
    return bytes(out)


def _quote(path: bytes) -> bytes:
    """A path as fast-import reads it: C-style quoted when it holds a quote, backslash or control byte."""
    if not any(byte < 0x20 or byte in b'"\\' for byte in path):
        return path
    escaped = bytearray(b'"')
    for byte in path:
        if byte in b'"\\':
            escaped += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            escaped += b"\\%03o" % byte
        else:
            escaped.append(byte)
    return bytes(escaped + b'"')
