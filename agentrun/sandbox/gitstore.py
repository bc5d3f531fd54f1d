"""Git objects and the branch ref written by the host itself: a turn's commit without a git process.

::

    blobs, trees, commit ──zlib──► <git_dir>/objects/ab/cdef...   (loose objects, each written
                                                                  to a temporary file, then renamed)
    refs/heads/main ◄── "<sha>\\n" written over the old value in one pwrite

A ``git fast-import`` per turn cost 25-30 ms (its start-up and pack writing), a persistent one
8-16 ms per ``checkpoint``; writing the few new objects here costs well under a millisecond.
Every object is a complete file renamed into place and the ref moves last, so a host killed
mid-commit leaves the last commit as it was (at worst an unreferenced object). The format is
git's own loose-object format (``"<kind> <size>\\0" + data``, zlib-deflated, named by its
SHA-1); ``git fsck --strict`` accepts what is written here (``tests/unit/test_workspace_index.py``).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

REF = "refs/heads/main"
_DIR_MODE = 0o40000
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC


def object_sha(kind: bytes, data: bytes) -> str:
    """The SHA-1 git names an object by."""
    return hashlib.sha1(b"%b %d\0" % (kind, len(data)) + data, usedforsecurity=False).hexdigest()


def write_object(git_dir: Path, kind: bytes, data: bytes, sha: str | None = None) -> str:
    """Store one object (loose) unless it is there already; its sha."""
    sha = sha or object_sha(kind, data)
    folder = os.path.join(git_dir, "objects", sha[:2])
    path = os.path.join(folder, sha[2:])
    if os.path.exists(path):
        return sha
    temporary = os.path.join(folder, f"tmp_obj_{os.getpid()}_{sha[2:10]}")
    try:
        fd = os.open(temporary, _CREATE, 0o444)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(temporary, _CREATE, 0o444)
    try:
        os.write(fd, zlib.compress(b"%b %d\0" % (kind, len(data)) + data, 1))
    finally:
        os.close(fd)
    os.replace(temporary, path)
    return sha


def write_trees(git_dir: Path, tree: dict[bytes, tuple[int, str]], known: set[str]) -> str:
    """Store the tree objects of a flat ``{path: (mode, blob sha)}`` listing; the root tree's sha.

    ``known`` holds tree shas already stored (this call adds the ones it writes)."""
    folders: dict[bytes, dict[bytes, tuple[int, str]]] = {b"": {}}
    for path in tree:
        parts = path.split(b"/")
        for depth in range(1, len(parts)):
            folders.setdefault(b"/".join(parts[:depth]), {})
    for path, (mode, sha) in tree.items():
        parent, _, name = path.rpartition(b"/")
        folders[parent][name] = (mode, sha)
    for folder in sorted(folders, key=lambda f: f.count(b"/") if f else -1, reverse=True):
        data = _tree_data(folders[folder])
        sha = object_sha(b"tree", data)
        if sha not in known:
            write_object(git_dir, b"tree", data, sha)
            known.add(sha)
        if folder:
            parent, _, name = folder.rpartition(b"/")
            folders[parent][name] = (_DIR_MODE, sha)
    return sha


def _tree_data(entries: dict[bytes, tuple[int, str]]) -> bytes:
    """One tree object's body: entries in git's order (a folder sorts as if its name ended in '/')."""
    ordered = sorted(entries.items(), key=lambda item: item[0] + b"/" if item[1][0] == _DIR_MODE else item[0])
    return b"".join(b"%o %b\0%b" % (mode, name, bytes.fromhex(sha)) for name, (mode, sha) in ordered)


def commit_data(tree: str, parent: str | None, author: bytes, when: int, message: str) -> bytes:
    """A commit object's body, author and committer alike (as ``fast-import`` wrote them)."""
    lines = [b"tree " + tree.encode()]
    if parent:
        lines.append(b"parent " + parent.encode())
    lines += [b"author %b %d +0000" % (author, when), b"committer %b %d +0000" % (author, when)]
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8", errors="replace")


def read_ref(git_dir: Path) -> str | None:
    """The branch's sha (the loose ref, else ``packed-refs``), or None before the first commit."""
    try:
        value = (git_dir / REF).read_text().strip()
        return value or None
    except FileNotFoundError:
        pass
    try:
        packed = (git_dir / "packed-refs").read_text()
    except FileNotFoundError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == REF:
            return sha
    return None


def set_ref(git_dir: Path, sha: str) -> None:
    """Point the branch at ``sha``: its 41 bytes written over the old ones in one ``pwrite``.

    Not a rename over the old file: ext4 (``auto_da_alloc``) flushes the new file to disk
    before such a rename, which cost 2-3 ms a turn here, more than all the rest of the commit.
    A ref is always 41 bytes and one small write reaches the page cache whole, so a reader or
    a killed host never sees half of one."""
    ref = git_dir / REF
    ref.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(ref, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        data = (sha + "\n").encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
