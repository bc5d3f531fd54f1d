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

Run it as ``python3 -I runtime.py``; it loads ``builtin.py`` from its own folder. With
``AGENTRUN_CHANNEL_SOCKET`` set it connects to that Unix socket (the host's, through a bind
mount) and the requests and replies go over it instead of stdin and stdout, which bypasses
dockerd's relaying (``agentrun/sandbox/channel.py``); it exits when that socket closes.

Every process a call started is gone when its reply is sent, whatever its user, session or
process group (``leftovers.py``): the runtime is a child subreaper, so whatever a call started
(``setsid -f``, ``nohup``, ``set -m`` jobs, double forks, a daemon that changes its pgid, a
fork bomb) stays its descendant, is found through ``/proc/<pid>/task/<tid>/children`` and
SIGKILLed. ``AGENTRUN_STOP_LEFTOVERS`` says the runtime is in a sandbox: set to anything, a
starting runtime first ends its predecessors (still running or dead) and what their calls
left; ``1`` (the strict profile, a uid of its own) adds a ``kill(-1)`` of every other process of
its uid at start and after each command, one atomic pass a fork bomb cannot outrun.

At start, and after a reply no request follows within ``SPARE_AFTER_S``, the runtime starts
the bash the next ``run_shell`` call runs its command in (``spare.py``), so bash's start
overlaps the model's turn. The sweep keeps it while it waits; a call that can start processes
takes it or ends it before ``kill(-1)``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import math
import os
import select
import socket
import sys
import time
from typing import Any, BinaryIO


def _load(name: str, module_name: str) -> Any:
    """A sibling file as a module (``-I`` leaves this folder off ``sys.path``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(module_name, os.path.join(here, name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _load_builtin() -> Any:
    return _load("builtin.py", "agentrun_sandbox_tools")


leftovers = _load("leftovers.py", "agentrun_sandbox_leftovers")


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
    problem = check_arguments(tools[name], args, _spec(tools[name]))
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


class _Spec:
    """One tool's parameters, read from its signature once (``inspect`` per call cost 10 us)."""

    def __init__(self, fn: Any) -> None:
        self.signature = inspect.signature(fn)
        self.names = frozenset(self.signature.parameters)
        self.required = frozenset(
            name for name, p in self.signature.parameters.items() if p.default is inspect.Parameter.empty
        )
        self.accepts = {
            name: (str(p.annotation), _ACCEPTS.get(str(p.annotation)))
            for name, p in self.signature.parameters.items()
        }


_SPECS: dict[Any, _Spec] = {}


def _spec(fn: Any) -> _Spec:
    spec = _SPECS.get(fn)
    if spec is None:
        spec = _SPECS[fn] = _Spec(fn)
    return spec


def check_arguments(fn: Any, args: dict[str, Any], spec: _Spec | None = None) -> str | None:
    """A short reason why ``args`` do not fit ``fn``'s signature, or None (the host checks in depth).

    One pass over the arguments: names, then each value's type and finiteness."""
    spec = spec or _spec(fn)
    if not spec.required <= args.keys() or not spec.names >= args.keys():
        try:
            spec.signature.bind(**args)
        except TypeError as exc:
            return f"{exc}; parameters: {', '.join(spec.signature.parameters)}"
    for key, value in args.items():
        annotation, accepts = spec.accepts[key]
        if isinstance(value, float) and not math.isfinite(value):
            return f"argument {key!r} must be a finite number, got {value}"
        wrong_bool = isinstance(value, bool) and bool not in (accepts or ())
        if accepts and (wrong_bool or not isinstance(value, accepts)):
            return f"argument {key!r} must be {annotation}, got {type(value).__name__}"
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


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer requests until stdin ends; after every tool call, before its reply, end what it started."""
    builtin = _load_builtin()
    tools = {fn.__name__: fn for fn in builtin.TOOLS}
    starts: set[Any] = {fn.__name__ for fn in builtin.TOOLS if getattr(fn, "starts_processes", False)}
    scope = os.environ.get("AGENTRUN_STOP_LEFTOVERS", "")  # "1": the uid is the agent's alone
    leftovers.become_subreaper()
    if scope:  # in a sandbox: what a replaced runtime left ends now
        leftovers.stop_predecessors()
    if scope == "1":
        leftovers.wait_uid_clear()
    builtin.prepare_shell()  # started once what came before is gone, never swept while idle
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except (ValueError, RecursionError) as exc:
            response = _reply(None, f"request is not valid JSON: {exc}", "runtime")
        else:
            response = handle(request, tools, builtin)
            tool = request.get("tool") if isinstance(request, dict) else None
            if tool is not None:
                _end_what_it_started(builtin, isinstance(tool, str) and tool in starts, scope)
        response["oom_kills"] = builtin.oom_kills()  # the host tells a runtime the OOM killer took
        stdout.write((json.dumps(response) + "\n").encode())
        if _no_request_within(stdin, SPARE_AFTER_S):
            builtin.prepare_shell()  # the next run_shell's bash starts while the model thinks


# A request this soon after a reply (the host's next call of the same turn) is answered before
# a spare bash is started: starting one keeps the runtime off the CPU until that bash has done
# its start (~1 ms here: setsid makes it a session, so an autogroup, of its own, which the
# scheduler runs before the woken runtime), which the request would wait for.
SPARE_AFTER_S = 0.001


def _no_request_within(stdin: BinaryIO, seconds: float) -> bool:
    """Whether nothing more arrives on ``stdin`` within ``seconds``."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return not poller.poll(seconds * 1000)


def _end_what_it_started(builtin: Any, started_processes: bool, scope: str) -> None:
    """Every process the call started, gone; the idle spare bash (``spare.py``) is kept, but not
    past a call that could start processes (so ``kill(-1)`` never meets it)."""
    if started_processes:
        builtin.discard_shell()
        if scope == "1":
            leftovers.kill_own_uid()  # one atomic pass a fork bomb cannot outrun
    leftovers.stop_descendants(keep=builtin.spare_shell())


class _SocketOut:
    """The replies' writer on the host's socket: ``sendall``, so a long reply goes out whole."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)


def _host_socket() -> socket.socket | None:
    """The host's socket (``AGENTRUN_CHANNEL_SOCKET``, taken out of the environment the tools'
    commands inherit), connected; None when the host gave none (the attached stdin and stdout
    are the protocol then)."""
    path = os.environ.pop("AGENTRUN_CHANNEL_SOCKET", "")
    if not path:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # not inherited by what a call starts
    sock.connect(path)
    return sock


def main() -> None:
    out = _protocol_stream()  # kept where it is either way: stdout is never a tool's
    sock = _host_socket()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        if sock is None:
            serve(sys.stdin.buffer, out)
        else:
            serve(sock.makefile("rb"), _SocketOut(sock))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
