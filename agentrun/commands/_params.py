"""Parameter checks shared by the commands, run by click while it parses the command line.

Each raises ``typer.BadParameter``, which click prefixes with the option's name and the CLI
prints as one line, so a bad value is refused before anything starts: no container, no run
folder, no half-written file. Ranges are declared on the options themselves (``min``/``max``).
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

import typer

FaultMixName = Literal["deepseek", "qwen", "mixed"]  # faults.MIXES; a unit test keeps them equal
FaultSourceName = Literal["designed", "real"]  # real_faults.FAULT_SOURCES
ModeName = Literal["direct", "corrected"]
OtlpProtocolName = Literal["http/protobuf", "grpc"]

BINARY_SNIFF_BYTES = 8192


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def _probe_writable(folder: Path) -> str | None:
    """Why ``folder`` cannot take new entries, or None. A real try: root passes every mode check."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".agentrun-probe-", dir=folder))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def results_dir(value: Path) -> Path:
    """A folder results can go in: it exists as a folder, or can be made where it would be."""
    path = value.expanduser()
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{value} is a file, not a folder; name a folder for the results")
    ancestor = _existing_ancestor(path.absolute())
    if not ancestor.is_dir():
        raise typer.BadParameter(f"{ancestor} is a file, so {value} cannot be made; name a folder")
    reason = _probe_writable(ancestor)
    if reason:
        raise typer.BadParameter(f"cannot write in {ancestor} ({reason}); name a folder you can write to")
    return path


def output_file(value: Path | None) -> Path | None:
    """A file to (over)write: not a folder, in a folder that exists and can be written."""
    if value is None:
        return None
    if value.is_dir():
        raise typer.BadParameter(f"{value} is a folder; name a file to write, e.g. {value / 'script.json'}")
    parent = value.absolute().parent
    if not parent.is_dir():
        raise typer.BadParameter(f"folder {parent} does not exist; create it first")
    reason = _probe_writable(parent)
    if reason:
        raise typer.BadParameter(f"cannot write in {parent} ({reason})")
    return value


def agent_name(value: str) -> str:
    """``model``, ``oracle``, ``nop`` or an installed agent's name (``agentrun.agents.AGENTS``)."""
    from agentrun.agents import AGENTS
    from agentrun.config import BUILTIN_AGENTS

    if value not in BUILTIN_AGENTS and value not in AGENTS:
        raise typer.BadParameter(
            f"unknown agent {value!r}; choose from {', '.join([*BUILTIN_AGENTS, *sorted(AGENTS)])}"
        )
    return value


def model_agent_name(value: str) -> str:
    """``agent_name``, and one that sends requests (``compare`` and ``load`` have nothing without)."""
    if value in ("oracle", "nop"):
        raise typer.BadParameter(f"{value!r} uses no model: it sends no requests to compare or load")
    return agent_name(value)


def check_agent_profiles(agent: str, tasks: dict[str, str]) -> None:
    """An installed agent runs on strict-profile tasks only, for now: say so before a job or a
    load starts (not once per trial, each after its agent layer is built). ``tasks``: name -> folder."""
    from agentrun.agents import AGENTS
    from agentrun.errors import UserError
    from agentrun.tasks import load_task

    if agent not in AGENTS:
        return
    harbor = sorted(n for n, path in tasks.items() if load_task(path).config.profile == "harbor")
    if harbor:
        shown = ", ".join(harbor[:5]) + (f" and {len(harbor) - 5} more" if len(harbor) > 5 else "")
        raise UserError(
            f"--agent {agent} runs on strict-profile tasks only, for now; not on {shown} (leave them out)"
        )


AGENT_HELP = (
    "model (agentrun's loop); oracle: run solution/solve.sh; nop: do nothing; "
    "mini-swe-agent, opencode or qwen-code: that agent in the sandbox, its requests through the gateway"
)
AgentName = Annotated[str, typer.Option("--agent", help=AGENT_HELP, callback=agent_name)]
ModelAgentName = Annotated[str, typer.Option("--agent", help=AGENT_HELP, callback=model_agent_name)]


def http_url(value: str | None) -> str | None:
    """An http(s) URL with a host, such as http://localhost:8000/v1."""
    if value is None:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise typer.BadParameter(f"{value!r} is not an http(s) URL; e.g. http://localhost:8000/v1")
    return value


def otlp_endpoint(value: str | None) -> str | None:
    """An OTLP collector: an http(s) URL with a host, or ``HOST:PORT`` (as gRPC exporters take it)."""
    if value is None:
        return None
    example = "e.g. http://localhost:4318 (http/protobuf) or localhost:4317 (grpc)"
    try:
        parts = urlsplit(value if "://" in value else f"//{value}")
        port = parts.port  # raises ValueError on a port out of range
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is not a valid URL ({exc}); {example}") from None
    scheme_ok = parts.scheme in ("http", "https") or ("://" not in value and port is not None)
    if not scheme_ok or not parts.hostname or any(ch.isspace() for ch in value):
        raise typer.BadParameter(f"{value!r} is not a collector URL; {example}")
    return value


def finite_delay(value: float) -> float:
    """Seconds to wait: a finite number (``inf`` would hang the replay model's stream forever)."""
    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number of seconds")
    return value


def positive(value: float | None) -> float | None:
    """A size that must be above zero (GiB of memory, say); None passes (the option was not given)."""
    if value is not None and not value > 0:  # `not >` also refuses NaN
        raise typer.BadParameter(f"{value:g} is not a positive number")
    return value


def text_file(value: Path) -> Path:
    """An existing text file (a log): a folder, a missing file or binary data is refused."""
    if not value.exists():
        raise typer.BadParameter(f"{value} does not exist")
    if not value.is_file():
        raise typer.BadParameter(f"{value} is not a file")
    try:
        with value.open("rb") as fh:
            head = fh.read(BINARY_SNIFF_BYTES)
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {value} ({exc.strerror or exc})") from None
    if b"\0" in head or not _mostly_text(head):
        raise typer.BadParameter(f"{value} is binary data, not a text log")
    return value


def _mostly_text(data: bytes) -> bool:
    """True unless over a tenth of the sample is undecodable (a cut-off UTF-8 sequence is fine)."""
    text = data.decode("utf-8", errors="replace")
    return text.count("\ufffd") <= max(1, len(text) // 10)


DOCKER_HOST_SCHEMES = ("unix://", "tcp://", "ssh://", "http://", "https://", "npipe://")


def docker_hosts(value: list[str] | None) -> list[str] | None:
    """Docker engine addresses in any ``DOCKER_HOST`` form, each once."""
    if not value:
        return value
    for host in value:
        if not host.startswith(DOCKER_HOST_SCHEMES) or len(host.split("://", 1)[1]) == 0:
            raise typer.BadParameter(
                f"{host!r} is not a Docker engine address; use unix:///path.sock, tcp://HOST:PORT or ssh://USER@HOST"
            )
    return list(dict.fromkeys(value))


AllowTaskPrivileges = Annotated[
    bool,
    typer.Option(
        "--allow-task-privileges",
        help="run a Harbor task's compose services as written (host mounts, privileged, ...): trusted tasks only",
    ),
]
DockerHosts = Annotated[
    list[str] | None,
    typer.Option(
        "--docker-host",
        help="a Docker engine for the sandboxes (unix://, tcp://, ssh://; repeat for a pool); "
        "nothing is bind-mounted into them",
        callback=docker_hosts,
    ),
]

RayTrials = Annotated[
    str | None,
    typer.Option("--ray", help="run each trial as a Ray task on this cluster (auto, ray://HOST:10001)"),
]
