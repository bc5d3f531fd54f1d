"""One-off execs whose output decides something (a grade, "no process is left"), checked whole.

Docker Engine 20.10 sometimes returns a short exec's exit code with none of its output
(moby/moby#27289, docker/docker-py#2042). Measured here under load: ``head`` of a finished
JUnit report exited 0 with no bytes, so a run whose 16 hidden tests had passed was graded
0/16, and a ``stat`` right after it came back empty too, while a second ``head`` read all
1,725 bytes. So the command's stdout is framed by a random marker printed before and after
it; a reply without both was cut by the engine, and the command (only reads and listings come
here: running them twice changes nothing) is run again.
"""

from __future__ import annotations

import secrets
from typing import Any

import tenacity

from agentrun.errors import SandboxError
from agentrun.sandbox.base import ENGINE_ERRORS

ATTEMPTS = 6
# $0 is the marker; the command is "$@"; its exit status is kept.
_FRAME = 'printf "%s\\n" "$0"; "$@"; s=$?; printf "%s" "$0"; exit "$s"'


class LostOutput(Exception):
    """The engine returned the exec's exit code without (all of) its framed output."""


def exec_checked(container: Any, argv: list[str], *, user: str) -> tuple[int, bytes, bytes]:
    """Run ``argv`` (idempotent) as ``user``: (exit code, whole stdout, stderr).

    Raises ``SandboxError`` if the engine fails or cuts the output ``ATTEMPTS`` times running."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(LostOutput),
        stop=tenacity.stop_after_attempt(ATTEMPTS),
        wait=tenacity.wait_exponential(multiplier=0.05, max=1.0),
        reraise=True,
    )
    try:
        for attempt in retrying:
            with attempt:
                return _once(container, argv, user)
    except LostOutput as exc:
        raise SandboxError(
            f"the engine lost the output of {argv[0]} in {container.name} {ATTEMPTS} times"
        ) from exc
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"exec of {argv[0]} in {container.name} failed: {exc}") from exc
    raise AssertionError("unreachable")  # pragma: no cover - tenacity either returns or raises


def _once(container: Any, argv: list[str], user: str) -> tuple[int, bytes, bytes]:
    marker = f"agentrun-{secrets.token_hex(8)}".encode()
    code, (out, err) = container.exec_run(["sh", "-c", _FRAME, marker.decode(), *argv], user=user, demux=True)
    body = out or b""
    head, tail = marker + b"\n", marker
    if (
        code is None
        or not body.startswith(head)
        or not body.endswith(tail)
        or len(body) < len(head) + len(tail)
    ):
        raise LostOutput(argv[0])
    return int(code), body[len(head) : len(body) - len(tail)], err or b""


def cat_file(container: Any, path: str, *, user: str, max_bytes: int) -> bytes:
    """A file's bytes as ``user`` reads it inside the container (tmpfs and symlinks included)."""
    code, out, err = exec_checked(container, ["head", "-c", str(max_bytes + 1), "--", path], user=user)
    if code != 0:
        raise FileNotFoundError(f"{path}: {err.decode(errors='replace').strip()}")
    if len(out) > max_bytes:
        raise SandboxError(f"{path}: more than {max_bytes} bytes, not read")
    return out
