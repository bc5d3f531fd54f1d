"""The parts of remote engines that need no engine: the tar reader, the address check, placement."""

from __future__ import annotations

import io
import tarfile

import pytest
import typer

from agentrun.commands._params import docker_hosts
from agentrun.sandbox import hostfs
from agentrun.sandbox.pool import EngineLoad


def _tar(members: list[tuple[str, bytes | None, str]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
                tar.addfile(info)
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
                tar.addfile(info)
            else:
                info.size, info.mode = len(data or b""), 0o755 if kind == "exe" else 0o644
                tar.addfile(info, io.BytesIO(data or b""))
    return buffer.getvalue()


def test_tar_entries_reads_files_and_links_and_leaves_out_git_and_skipped_folders() -> None:
    tar = _tar(
        [
            ("./", None, "dir"),
            ("./a.py", b"x = 1\n", "file"),
            ("./run.sh", b"#!/bin/sh\n", "exe"),
            ("./link", None, "link"),
            ("./pipe", None, "fifo"),
            ("./.git/config", b"[core]\nfsmonitor = touch /tmp/pwned\n", "file"),
            ("./sub/.GIT/hooks/x", b"evil", "file"),
            ("./__pycache__/a.pyc", b"\0", "file"),
            ("./b.pyc", b"\0", "file"),
        ]
    )
    entries = list(
        hostfs.tar_entries(
            tar, skip_dir=lambda n: n == b"__pycache__", want_file=lambda n: not n.endswith(b".pyc")
        )
    )
    assert [(e.path, e.mode) for e in entries] == [
        (b"a.py", 0o100644),
        (b"link", 0o120000),
        (b"run.sh", 0o100755),
    ]
    assert entries[1].data == b"/etc/shadow"  # a symlink is its target's text, never followed


def test_docker_host_addresses_are_checked_and_deduplicated() -> None:
    assert docker_hosts(["tcp://h:2375", "ssh://u@h", "tcp://h:2375"]) == ["tcp://h:2375", "ssh://u@h"]
    with pytest.raises(typer.BadParameter, match="not a Docker engine address"):
        docker_hosts(["h:2375"])
    with pytest.raises(typer.BadParameter):
        docker_hosts(["tcp://"])


def test_an_engine_is_as_busy_as_its_containers_or_its_placed_runs_per_cpu() -> None:
    small, big = EngineLoad("a", cpus=2, running=1), EngineLoad("b", cpus=8, running=2)
    assert small.busy(0) == 0.5 and big.busy(0) == 0.25
    assert big.busy(6) == 0.75  # runs placed but still building their images count too


def test_a_ray_address_nothing_listens_on_is_refused_at_once() -> None:
    from agentrun.commands.load import _check_reachable
    from agentrun.errors import UserError

    with pytest.raises(UserError, match="no Ray cluster answers"):
        _check_reachable("127.0.0.1:1")
    with pytest.raises(UserError, match="no Ray cluster answers"):
        _check_reachable("ray://127.0.0.1:1")
