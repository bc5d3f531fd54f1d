"""Sandbox profiles: what a task's container is given, and what it is never given.

``strict`` (agentrun's own tasks; ``DockerSandbox``, options in ``container.locked_down``)
    uid 1000, ``/workspace`` bind-mounted from the host (on a ``--docker-host`` engine: a volume
    filled and read through the engine API, ``sandbox/remote.py``), read-only root, every capability
    dropped; graded in a fresh container from the same image (``sandbox/verifier.py``).

``harbor`` (tasks written for Harbor; ``agentrun.harbor.sandbox.HarborSandbox``)
    what Harbor gives a task: the task's user (``[agent] user``, else the image's ``USER``,
    i.e. root), the image's ``WORKDIR`` (or ``[environment] workdir``), a writable container
    filesystem (``apt-get`` in tests, results under ``/app``), ``/tests`` and ``/logs/verifier``
    where Harbor puts them; on a ``--docker-host`` engine ``/logs`` and the tool runtime are
    volumes filled and read through the engine API (``agentrun.harbor.engine_files``).

Both keep: no network unless the task asks for it, no host path but the run's own folders
(``/logs``) and agentrun's tool runtime (read-only), no Docker socket, ``no-new-privileges``,
pids / memory / CPU limits, tini as PID 1. The harbor profile keeps only the capabilities a
root user needs to install packages and own files (``HARBOR_CAPABILITIES``); everything else,
``SYS_ADMIN``, ``NET_ADMIN``, ``NET_RAW``, ``MKNOD``, ``SYS_PTRACE`` and ``AUDIT_WRITE`` among
them, stays dropped. Its verifier runs in a fresh container made (``docker commit``) from the
agent's stopped container: no agent process is left, ``/tests`` and ``/logs/verifier`` are new.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ProfileName = Literal["strict", "harbor"]

# chown/chmod of files root does not own, apt-get's drop to the _apt user, kill of own children
HARBOR_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID")


@dataclass(frozen=True)
class SandboxProfile:
    """Container options for one profile; ``run_options`` turns them into ``containers.run`` keywords."""

    name: ProfileName
    read_only_root: bool
    cap_add: tuple[str, ...] = ()
    security_opt: tuple[str, ...] = ("no-new-privileges",)
    tmpfs: dict[str, str] = field(default_factory=dict)

    def run_options(
        self, *, network: bool | str, cpus: float, memory_mb: int, pids_limit: int
    ) -> dict[str, Any]:
        """``network``: False (none), True (the default bridge) or a network's name (compose)."""
        network_mode = network if isinstance(network, str) else ("bridge" if network else "none")
        return {
            "init": True,
            "network_mode": network_mode,
            "cap_drop": ["ALL"],
            "cap_add": list(self.cap_add),
            "security_opt": list(self.security_opt),
            "read_only": self.read_only_root,
            "tmpfs": dict(self.tmpfs),
            "pids_limit": pids_limit,
            "mem_limit": f"{memory_mb}m",
            "memswap_limit": f"{memory_mb}m",
            "nano_cpus": int(cpus * 1e9),
        }


HARBOR = SandboxProfile(name="harbor", read_only_root=False, cap_add=HARBOR_CAPABILITIES)
