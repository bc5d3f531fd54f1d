"""Reading a folder the agent wrote, on the host, without following anything it planted there.

The workspace is a host folder the agent controls completely. A host process (root, here)
that walks it with ordinary path calls can be steered out of it: a symlink ``models.py ->
/etc/shadow`` is read as if it were source, a directory swapped for a symlink between
``listdir`` and ``open`` walks ``/root``, a FIFO named ``urls.py`` blocks the reader forever
and a sparse 100 GB file fills its memory. ``walk`` avoids all of these:

- every directory is opened relative to its parent's descriptor with ``O_NOFOLLOW |
  O_DIRECTORY`` and every file with ``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``-ed: what is
  read is what was listed, never a symlink's target (a symlink is reported as its target
  *text*);
- only regular files are read, each up to ``MAX_FILE_BYTES`` and all together up to
  ``MAX_TOTAL_BYTES``; FIFOs, sockets and devices are skipped, and so is anything deeper than
  ``MAX_DEPTH`` or past ``MAX_ENTRIES``;
- names git gives meaning to (``.git`` in any case, as a file, folder or link) are never
  reported, so a nested repository's config, hooks or ``gitdir:`` pointer are never seen.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 50 * 1024 * 1024  # bigger files are left out (a sparse file can claim any size)
MAX_TOTAL_BYTES = 512 * 1024 * 1024  # per walk: the host's memory is not the agent's to fill
MAX_DEPTH = 100
MAX_ENTRIES = 200_000
MAX_LEFT_OUT = 1000  # files named as left out, at most
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """One file or symlink: ``path`` relative to the root, '/'-separated, as bytes (any name)."""

    path: bytes
    mode: int  # git's: 0o100644, 0o100755 or 0o120000
    data: bytes  # the file's content, or the symlink's target (empty when ``sha`` is given)
    sha: str | None = None  # the blob's sha, when ``reuse`` knew the file unchanged and it was not read
    key: tuple[int, ...] | None = None  # a read file's ``stat_key`` as it was read

    @property
    def is_link(self) -> bool:
        return self.mode == 0o120000


def is_git_name(name: bytes) -> bool:
    """``.git`` and what a case-insensitive or NTFS-like filesystem would take for it."""
    return name.lower().rstrip(b". ") in (b".git", b"git~1")


def walk(
    root: Path,
    *,
    skip_dir: Callable[[bytes], bool] = lambda _name: False,
    want_file: Callable[[bytes], bool] = lambda _name: True,
    links: bool = True,
    reuse: Callable[[bytes, tuple[int, ...]], str | None] | None = None,
    left_out: dict[str, str] | None = None,
) -> Iterator[Entry]:
    """Every regular file (and, with ``links``, symlink) under ``root``, sorted by path.

    ``skip_dir`` and ``want_file`` see bare names; a file ``want_file`` refuses is not opened.
    Past ``MAX_TOTAL_BYTES`` in one walk, further files are left out. ``reuse(path, stat_key)``
    may name the blob sha of a file known unchanged: it is then not opened (its size still
    counts against the budget) and its entry carries that ``sha`` instead of ``data``.
    ``left_out`` gets each file left out for its size (path: why), the first ``MAX_LEFT_OUT``.
    """
    try:
        top = os.open(root, _OPEN_DIR)
    except OSError:
        return
    try:
        yield from _Walk(skip_dir, want_file, links, reuse, left_out).folder(top, b"", 0)
    finally:
        os.close(top)


class _Walk:
    """One walk's rules and what it has used of its budgets (entries seen, bytes read)."""

    def __init__(
        self,
        skip_dir: Callable[[bytes], bool],
        want_file: Callable[[bytes], bool],
        links: bool,
        reuse: Callable[[bytes, tuple[int, ...]], str | None] | None = None,
        left_out: dict[str, str] | None = None,
    ) -> None:
        self.skip_dir, self.want_file, self.links, self.reuse = skip_dir, want_file, links, reuse
        self.left_out = left_out if left_out is not None else {}
        self.entries = self.bytes = 0

    def folder(self, dir_fd: int, prefix: bytes, depth: int) -> Iterator[Entry]:
        try:
            names = sorted(os.fsencode(name) for name in os.listdir(dir_fd))
        except OSError:
            return
        for name in names:
            self.entries += 1
            if self.entries > MAX_ENTRIES or is_git_name(name):
                continue
            try:
                info = os.lstat(name, dir_fd=dir_fd)
            except OSError:
                continue
            path = prefix + name
            if stat.S_ISDIR(info.st_mode):
                if depth < MAX_DEPTH and not self.skip_dir(name):
                    yield from self._descend(dir_fd, name, path + b"/", depth)
            elif stat.S_ISLNK(info.st_mode):
                if self.links:
                    with contextlib.suppress(OSError):
                        yield Entry(path, 0o120000, os.fsencode(os.readlink(name, dir_fd=dir_fd)))
            elif stat.S_ISREG(info.st_mode) and self.want_file(name):
                entry = self._known(info, path) or self._read(dir_fd, name, path)
                if entry is not None:
                    yield entry

    def _known(self, info: os.stat_result, path: bytes) -> Entry | None:
        """The entry of a file ``reuse`` knows unchanged (not opened), or None: read it."""
        sha = self.reuse(path, stat_key(info)) if self.reuse else None
        if sha is None or info.st_size > min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.bytes):
            return None
        self.bytes += info.st_size
        return Entry(path, _git_mode(info), b"", sha=sha)

    def _descend(self, dir_fd: int, name: bytes, prefix: bytes, depth: int) -> Iterator[Entry]:
        try:
            child = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
        except OSError:  # swapped for a symlink or removed since it was listed
            return
        try:
            yield from self.folder(child, prefix, depth + 1)
        finally:
            os.close(child)

    def _read(self, dir_fd: int, name: bytes, path: bytes) -> Entry | None:
        try:
            fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
        except OSError:  # a symlink now (ELOOP), or gone
            return None
        try:
            info = os.fstat(fd)
            limit = min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.bytes)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > limit:
                if len(self.left_out) < MAX_LEFT_OUT:
                    self.left_out[os.fsdecode(path)] = why_left_out(info.st_size, self.bytes)
                return None
            chunks, size = [], 0
            while size <= limit and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
            if size > limit:  # grew while being read
                return None
        except OSError:
            return None
        finally:
            os.close(fd)
        self.bytes += size
        return Entry(path, _git_mode(info), b"".join(chunks), key=stat_key(info))


def stat_key(info: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's content may have: the kernel sets ``st_ctime`` on every
    write, ``utime`` and ``chmod``, and no process can set it back (``mtime`` it can)."""
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _git_mode(info: os.stat_result) -> int:
    return 0o100755 if info.st_mode & stat.S_IXUSR else 0o100644


def why_left_out(size: int, read: int) -> str:
    """Why a file of ``size`` bytes, met after ``read`` bytes, is not in the history."""
    if size > MAX_FILE_BYTES:
        return f"{size} bytes: over {MAX_FILE_BYTES >> 20} MB, the largest file the history keeps"
    return f"{size} bytes: past {MAX_TOTAL_BYTES >> 20} MB for the whole workspace ({read} bytes kept)"


def tar_entries(
    data: bytes,
    *,
    skip_dir: Callable[[bytes], bool] = lambda _name: False,
    want_file: Callable[[bytes], bool] = lambda _name: True,
    left_out: dict[str, str] | None = None,
) -> Iterator[Entry]:
    """``walk``'s entries, from a tar of the workspace read in memory (nothing is unpacked):
    the same rules (``.git`` names, skipped folders, size and count budgets), sorted by path."""
    left_out = left_out if left_out is not None else {}
    entries: list[Entry] = []
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            parts = [os.fsencode(part) for part in member.name.split("/") if part not in ("", ".")]
            if not parts or len(parts) > MAX_DEPTH or len(entries) >= MAX_ENTRIES:
                continue
            if any(is_git_name(p) for p in parts) or any(skip_dir(p) for p in parts[:-1]):
                continue
            path = b"/".join(parts)
            if member.issym():
                entries.append(Entry(path, 0o120000, os.fsencode(member.linkname)))
            elif member.isreg() and want_file(parts[-1]):
                if member.size > MAX_FILE_BYTES or total + member.size > MAX_TOTAL_BYTES:
                    if len(left_out) < MAX_LEFT_OUT:
                        left_out[os.fsdecode(path)] = why_left_out(member.size, total)
                    continue
                extracted = tar.extractfile(member)
                if extracted is not None:
                    total += member.size
                    mode = 0o100755 if member.mode & stat.S_IXUSR else 0o100644
                    entries.append(Entry(path, mode, extracted.read()))
    return iter(sorted(entries, key=lambda entry: entry.path))


def chown_tree(folder: Path, uid: int, gid: int) -> None:
    """Hand the folder to the agent's uid; ``fwalk`` with ``dir_fd`` never follows a symlink out."""
    if os.getuid() != 0:
        return
    os.lchown(folder, uid, gid)
    for _, dirnames, filenames, dir_fd in os.fwalk(folder):
        for name in [*dirnames, *filenames]:
            with contextlib.suppress(OSError):
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
