"""The tool server inside the sandbox: JSON lines on stdin, JSON lines on stdout. Stdlib only.

Requests, one per line::

    {"id": "c1", "tool": "read_file", "args": {"path": "app.py"}}
    {"id": "p1", "op": "ping"}

Responses, one per line, in order::

    {"id": "c1", "output": "...", "error": null, "exit_code": null, "truncated": false, "duration_s": 0.0004,
     "oom_kills": 0}

(``oom_kills``: the container's OOM-kill count, so the host can tell a runtime that died of it.)

``error`` is null on success, else an agentrun ``ToolErrorKind`` string. The server never
dies on a bad request (it answers with error "runtime"), and stdout carries nothing but
the protocol: anything a tool prints goes to stderr.

Run it as ``python3 -I runtime.py``; it loads ``builtin.py`` from its own folder.

With ``AGENTRUN_STOP_LEFTOVERS=1`` (the sandbox sets it) it SIGKILLs every other process of
its uid when it starts and after every tool call: whatever a call started (``setsid -f``,
``nohup``, ``set -m`` jobs, double forks, a fork bomb in its own process group) ends with the
call, and a restarted runtime first ends what its dead predecessor's call left.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import math
import os
import signal
import sys
import time
from typing import Any, BinaryIO


def _load_builtin() -> Any:
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("agentrun_sandbox_tools", os.path.join(here, "builtin.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _protocol_stream() -> BinaryIO:
    """Keep the real stdout for responses; point fd 1 and sys.stdout at stderr."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def handle(request: Any, tools: dict[str, Any], builtin: Any) -> dict[str, Any]:
    """Answer one decoded request; never raises."""
    if not isinstance(request, dict):
        return _reply(None, "request must be a JSON object", "runtime")
    call_id = request.get("id")
    call_id = call_id if isinstance(call_id, str) else None
    if request.get("op") == "ping":
        return _reply(call_id, "pong")
    if "op" in request:
        return _reply(call_id, f"unknown op {request['op']!r}; known: ping", "runtime")
    name, args = request.get("tool"), request.get("args", {})
    if not isinstance(name, str):
        return _reply(call_id, "request needs 'tool' (a string) or 'op'", "runtime")
    if name not in tools:
        return _reply(call_id, f"unknown tool {name!r}; available: {', '.join(tools)}", "unknown_tool")
    if not isinstance(args, dict):
        return _reply(call_id, "'args' must be a JSON object", "validation")
    started = time.perf_counter()
    problem = check_arguments(tools[name], args)
    if problem:
        return _reply(call_id, f"{name}: {problem}", "validation", started=started)
    try:
        result = tools[name](**args)
    except builtin.ToolFailure as exc:
        return _reply(call_id, exc.message, exc.kind, started=started)
    except Exception as exc:
        return _reply(call_id, f"{name} failed: {type(exc).__name__}: {exc}", "runtime", started=started)
    if isinstance(result, builtin.ToolOutput):
        return _reply(
            call_id, result.text, exit_code=result.exit_code, truncated=result.truncated, started=started
        )
    return _reply(call_id, str(result), started=started)


_ACCEPTS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "int | None": (int, type(None)),
    "float | None": (int, float, type(None)),
    "str | None": (str, type(None)),
}


def check_arguments(fn: Any, args: dict[str, Any]) -> str | None:
    """A short reason why ``args`` do not fit ``fn``'s signature, or None (the host checks in depth)."""
    signature = inspect.signature(fn)
    try:
        signature.bind(**args)
    except TypeError as exc:
        return f"{exc}; parameters: {', '.join(signature.parameters)}"
    for key, value in args.items():
        if isinstance(value, float) and not math.isfinite(value):
            return f"argument {key!r} must be a finite number, got {value}"
        accepts = _ACCEPTS.get(str(signature.parameters[key].annotation))
        wrong_bool = isinstance(value, bool) and bool not in (accepts or ())
        if accepts and (wrong_bool or not isinstance(value, accepts)):
            return (
                f"argument {key!r} must be {signature.parameters[key].annotation}, got {type(value).__name__}"
            )
    return None


def _reply(
    call_id: str | None,
    output: str,
    error: str | None = None,
    *,
    exit_code: int | None = None,
    truncated: bool = False,
    started: float | None = None,
) -> dict[str, Any]:
    duration = time.perf_counter() - started if started is not None else 0.0
    return {
        "id": call_id,
        "output": output,
        "error": error,
        "exit_code": exit_code,
        "truncated": truncated,
        "duration_s": round(duration, 6),
    }


def stop_leftovers() -> None:
    """SIGKILL every process of this uid but this one, in one atomic ``kill(-1)``.

    Only when ``AGENTRUN_STOP_LEFTOVERS=1`` and not as root: inside the sandbox the agent's uid
    owns nothing else (the container's own process runs as another uid); anywhere else, or
    as root, ``kill(-1)`` would take down far more than a call's leftovers.
    """
    if os.environ.get("AGENTRUN_STOP_LEFTOVERS") != "1" or os.getuid() == 0:
        return
    deadline = time.monotonic() + 2.0
    while True:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(-1, signal.SIGKILL)
        # a busy process dies when next scheduled: wait until none is left (zombies are dead)
        if not _others_alive() or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def _others_alive() -> bool:
    me, uid = str(os.getpid()), os.getuid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid in ("1", me):
            continue
        try:
            with open(f"/proc/{pid}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid and not fields.get("State", "").strip().startswith(
            "Z"
        ):
            return True
    return False


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    builtin = _load_builtin()
    tools = {fn.__name__: fn for fn in builtin.TOOLS}
    stop_leftovers()
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except (ValueError, RecursionError) as exc:
            response = _reply(None, f"request is not valid JSON: {exc}", "runtime")
        else:
            response = handle(request, tools, builtin)
            if isinstance(request, dict) and "tool" in request:
                stop_leftovers()
        response["oom_kills"] = builtin.oom_kills()  # the host tells a runtime the OOM killer took
        stdout.write((json.dumps(response) + "\n").encode())


def main() -> None:
    out = _protocol_stream()
    with contextlib.suppress(KeyboardInterrupt):
        serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
