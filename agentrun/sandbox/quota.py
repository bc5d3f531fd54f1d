"""The workspace's quota: /workspace is a filesystem of its own size, so the agent's writes stop there.

::

    this machine's engine (root)          <root>/workspace  ext4 in a sparse image file, loop-mounted
                                          (the image unlinked once mounted: nothing to leak on disk)
    a --docker-host engine                /workspace        the engine's local volume driver on
                                          tmpfs, ``size=``: nothing of this machine is needed

A write past the quota fails with ENOSPC inside the container, and the tools report it as the
error ``disk_full`` (``tools/builtin.py``). Mounting needs root: run as another user (or with no
``mkfs.ext4``/loop device) the local workspace is not limited, and ``mount`` says why.
At close the mount is copied out to a plain folder (``cp -a``: links stay links, nothing is
followed or opened) and unmounted; a run killed before that is found by ``prune_mounts`` (the
start of every run and ``sandbox prune``) through ``<root>/.workspace.owner``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from docker.types import DriverConfig

from agentrun import lifeline, liveness
from agentrun.errors import SandboxError
from agentrun.sandbox.base import ENGINE_ERRORS
from agentrun.sandbox.workspace import archive

DEFAULT_QUOTA_MB = 1024  # what grading copies into the verifier (``docker.MAX_WORKSPACE_ARCHIVE``)
COMMAND_TIMEOUT_S = 60.0
# no reserved blocks, no journal (a run's scratch space), an inode per 4 KiB: 262,144 files in
# 1 GB (the default ratio gives 65,536, fewer than one npm install writes)
MKFS_OPTIONS = ("-q", "-F", "-m", "0", "-i", "4096", "-O", "^has_journal", "-L", "agentrun-ws")


def mount(ws: Path, image: Path, size_mb: int) -> str | None:
    """Mount a fresh ``size_mb`` ext4 on the folder ``ws``, with what it held copied in; None,
    or why it was not limited (the folder is then as it was)."""
    if os.geteuid() != 0:
        return "mounting a filesystem needs root"
    missing = [tool for tool in ("mkfs.ext4", "mount", "umount", "cp") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found"
    before = ws.with_name(ws.name + ".quota-before") if any(ws.iterdir()) else None
    try:
        with open(image, "wb") as fh:
            fh.truncate(size_mb << 20)
        _run("mkfs.ext4", *MKFS_OPTIONS, str(image))
        if before is not None:  # a resumed run's folder: its files go into the new filesystem
            ws.rename(before)
            ws.mkdir()
        # the owner first, for ``prune_mounts`` if we die at any moment from here on (a stale
        # one without its mount is harmless: prune checks the mount's device)
        owner = {**liveness.owner_labels(), "mountpoint": str(ws)}
        image.with_suffix(".owner").write_text(json.dumps(owner))
        _run("mount", "-o", "loop,nosuid,nodev", str(image), str(ws))
    except BaseException as exc:
        if os.path.ismount(ws):  # Ctrl-C while mount ran: it may have mounted before it was killed
            with contextlib.suppress(SandboxError):
                _run("umount", "-l", str(ws))
        image.with_suffix(".owner").unlink(missing_ok=True)
        if before is not None and before.exists():
            with contextlib.suppress(OSError):
                ws.rmdir()
                before.rename(ws)
        if not isinstance(exc, (OSError, SandboxError)):
            raise  # Ctrl-C: nothing mounted is left behind
        return str(exc)
    finally:
        with contextlib.suppress(OSError):
            image.unlink()  # the loop device holds it open until the unmount
    with contextlib.suppress(OSError):
        (ws / "lost+found").rmdir()
    if before is not None:
        _run("cp", "-a", f"{before}/.", str(ws), timeout=600)
        shutil.rmtree(before, ignore_errors=True)
    return None


def unmount(ws: Path, *, keep: bool, owner: Path | None = None) -> None:
    """Copy the mounted files to a plain folder at ``ws`` (when ``keep``), then unmount; the
    ``owner`` file (``<root>/.workspace.owner``) goes with it."""
    staged = ws.with_name(ws.name + ".quota-copy")
    if keep:
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir()
        with contextlib.suppress(SandboxError):
            _run("cp", "-a", "--sparse=always", f"{ws}/.", str(staged), timeout=600)
    try:
        _run("umount", str(ws))
    except SandboxError:
        _run("umount", "-l", str(ws))  # still busy: detached now, gone when the last user lets go
    if keep:
        ws.rmdir()
        staged.rename(ws)
    if owner is not None:
        owner.unlink(missing_ok=True)


def prune_mounts() -> int:
    """Unmount the workspaces of runs that died (SIGKILL: no close ran), their files copied out
    as ``close`` does; a live run's mount and anything that is not ours are left. How many."""
    removed = 0
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        with contextlib.suppress(OSError, ValueError, SandboxError):
            image = Path(backing.read_text().strip().removesuffix(" (deleted)"))
            owner_file = image.with_suffix(".owner")
            if image.name != ".workspace.img" or not owner_file.is_file():
                continue
            owner = json.loads(owner_file.read_text())
            device = f"/dev/{backing.parent.parent.name}"
            mountpoint = Path(owner["mountpoint"])
            if not liveness.is_dead(owner) or _source(mountpoint) != device:
                continue
            unmount(mountpoint, keep=True, owner=owner_file)
            removed += 1
    return removed


def _source(mountpoint: Path) -> str:
    found = lifeline.run(
        ["findmnt", "-n", "-o", "SOURCE", str(mountpoint)], capture_output=True, text=True, timeout=30
    )
    return found.stdout.strip()


def volume_driver(size_mb: int, uid: int) -> DriverConfig:
    """The /workspace volume of a ``--docker-host`` engine: tmpfs of ``size_mb``, owned by ``uid``."""
    options = {"type": "tmpfs", "device": "tmpfs", "o": f"size={size_mb}m,uid={uid},gid={uid},mode=0755"}
    return DriverConfig("local", options)


def _run(*argv: str, timeout: float = COMMAND_TIMEOUT_S) -> None:
    try:
        done = lifeline.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"{argv[0]}: {exc}") from exc
    if done.returncode != 0:
        raise SandboxError(f"{' '.join(argv[:2])} failed: {(done.stderr or done.stdout).strip()[-300:]}")


def read_bounded(stream: Iterable[bytes], limit: int) -> bytes | None:
    """The engine's tar of /workspace, or None (the stream closed) once it goes past ``limit``:
    a sparse file claims any size, and the rest is not worth the time it takes to read."""
    data = bytearray()
    for chunk in stream:
        data += chunk
        if len(data) > limit:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
            return None
    return bytes(data)


def archive_or_history(sandbox: Any, limit: int) -> bytes:
    """The sandbox's /workspace as the engine's tar, or once that goes past ``limit`` the files
    its history keeps (under 50 MB each, 512 MB in all): what is left out is named in
    ``sandbox.left_out_of_grading``."""
    try:
        stream, _ = sandbox.container.get_archive("/workspace/.")
        data = read_bounded(stream, limit)
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"could not read /workspace of {sandbox.container.name}: {exc}") from exc
    sandbox.left_out_of_grading = {}
    if data is not None:
        return data
    if not sandbox.remote:  # the history as the folder is now (a remote one is its last turn's)
        sandbox.history.commit_folder(sandbox.workspace, "workspace at grading", left_out=sandbox.left_out)
    sandbox.left_out_of_grading = {
        path: f"graded without it: /workspace is over {limit >> 20} MB as a tar" for path in sandbox.left_out
    }
    sandbox.left_out_of_grading.setdefault(
        "/workspace", f"over {limit >> 20} MB as a tar: graded on its last commit"
    )
    return archive(sandbox.git_dir)


def save_workspace(sandbox: Any, run_dir: Path, log: Callable[[str], None] | None = None) -> None:
    """What was done, whatever its size: ``workspace.patch`` (the files the history keeps) and
    ``workspace.left_out.txt``, each file too large for the patch or for grading with why."""
    (run_dir / "workspace.patch").write_text(sandbox.diff())
    left_out: dict[str, list[str]] = {}
    for source in (getattr(sandbox, "left_out", {}), getattr(sandbox, "left_out_of_grading", {})):
        for path, why in source.items():
            left_out.setdefault(path, []).append(why)
    listing = run_dir / "workspace.left_out.txt"
    if not left_out:
        listing.unlink(missing_ok=True)
        return
    listing.write_text("".join(f"{path}\t{'; '.join(whys)}\n" for path, whys in sorted(left_out.items())))
    if log is not None:
        log(
            f"workspace: {len(left_out)} file(s) too large to keep, left out of the patch or grading ({listing.name})"
        )
