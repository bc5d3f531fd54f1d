"""``agentrun resume RUN_DIR``: continue a run that was killed, from its last completed turn.

Everything needed is already in the run folder, written as it happened:

* ``config.json``: the run's configuration (no API key: give it again);
* ``trajectory.jsonl``: every request with the messages it added to the history, so the
  history up to any turn is the concatenation of those; turn *K* is complete once the
  request of turn *K+1* was sent (the loop asks again only after the turn's calls ran and
  were committed);
* ``sandbox/git``: the workspace's history, one commit per turn that wrote files, so the
  workspace as it was after turn *K* is the newest commit of a turn up to *K*.

The resumed run gets a new container, the workspace as it was, the history and counts of
turns 1..K; turn *K+1* is asked again (the replay model, like a real one, answers from the
history), and the result says ``resumed_from_turn``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from agentrun.agent import RunStats
from agentrun.config import RunConfig
from agentrun.errors import UserError
from agentrun.liveness import run_is_alive
from agentrun.messages import Completion, Message, Usage
from agentrun.sandbox import hostfs
from agentrun.sandbox.workspace import EXCLUDED_DIRS, archive, git
from agentrun.secrets import register, scrub_data
from agentrun.trajectory import read_trajectory

__all__ = [
    "CONFIG_FILE",
    "ResumePoint",
    "load_resume_point",
    "restore_workspace",
    "resume_sandbox",
    "save_config",
    "workspace_commit",
]

CONFIG_FILE = "config.json"
RESUMABLE_STOPS = (
    "interrupted",
    "error",
    "model_error",
    "not_started",
)  # and no result.json at all (SIGKILL)


@dataclass
class ResumePoint:
    """Where a killed run picks up: its folder and config, turn ``from_turn`` done, the rest redone."""

    run_dir: Path
    config: RunConfig
    from_turn: int
    messages: list[Message]
    stats: RunStats
    last_seq: int
    commit: str = ""  # the workspace history's commit for turn from_turn
    earlier_wall_s: float = 0.0  # what the earlier attempts took, start to their last line
    events: list[dict[str, Any]] = field(default_factory=list, repr=False)


def load_resume_point(run_dir: Path, *, api_key: str = "EMPTY") -> ResumePoint:
    """Read a run folder; ``UserError`` (one line for the CLI) when it cannot be resumed."""
    run_dir = Path(run_dir).resolve()
    _check_resumable(run_dir)
    try:
        config = RunConfig.model_validate_json((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise UserError(
            f"{run_dir} has no readable {CONFIG_FILE} ({type(exc).__name__}); it cannot be resumed"
        ) from None
    config = config.model_copy(
        update={"api_key": api_key, "run_id": run_dir.name, "results_dir": run_dir.parent}
    )
    try:
        events = read_trajectory(run_dir / "trajectory.jsonl")
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {run_dir / 'trajectory.jsonl'}: {exc}") from None
    spent, earlier_wall_s = agent_wall_spent(events), run_wall_spent(events)
    events = _live_events(events)
    requests = [e for e in events if e.get("event") == "request"]
    if not requests:
        raise UserError(f"{run_dir} stopped before its first request: start it again with `agentrun task`")
    from_turn = max(int(e["turn"]) for e in requests) - 1
    return ResumePoint(
        run_dir=run_dir,
        config=config,
        from_turn=from_turn,
        messages=_history(requests, from_turn),
        stats=_stats(events, from_turn, agent_wall_s=spent),
        last_seq=max((int(e.get("seq", 0)) for e in events), default=0),
        commit=workspace_commit(run_dir / "sandbox" / "git", from_turn),
        earlier_wall_s=earlier_wall_s,
        events=events,
    )


def save_config(run_dir: Path, config: RunConfig) -> None:
    """What ``agentrun resume`` needs after a kill: no API key, no password in a URL (give them again)."""
    register(config.api_key, urlsplit(config.base_url or "").password)
    saved = scrub_data(config.model_dump(mode="json", exclude={"api_key"}))
    (run_dir / CONFIG_FILE).write_text(json.dumps(saved, indent=2), encoding="utf-8")


def _check_resumable(run_dir: Path) -> None:
    if not (run_dir / "trajectory.jsonl").is_file():
        raise UserError(f"{run_dir} is not a run folder (no trajectory.jsonl)")
    if run_is_alive(run_dir):
        raise UserError(f"run {run_dir.name} is still in progress (another process holds its lock)")
    result = run_dir / "result.json"
    if result.is_file():
        stop = json.loads(result.read_text(encoding="utf-8")).get("stop_reason")
        if stop not in RESUMABLE_STOPS:
            raise UserError(f"run {run_dir.name} already finished ({stop}); nothing to resume")


def _live_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events that still count: at each earlier resume, what the killed run had written of
    the turns it redid is dropped (those turns were asked again)."""
    kept: list[dict[str, Any]] = []
    for e in events:
        if e.get("event") == "resume":
            kept = [k for k in kept if int(k.get("turn") or 0) <= int(e["from_turn"])]
        kept.append(e)
    return kept


def _history(requests: list[dict[str, Any]], from_turn: int) -> list[Message]:
    """The history as the loop held it when it asked for turn ``from_turn + 1`` the first time."""
    messages: list[Message] = []
    for event in requests:
        turn = int(event["turn"])
        if turn > from_turn + 1:
            break
        messages += [Message.model_validate(m) for m in event.get("new_messages") or []]
        if turn == from_turn + 1:
            break  # its re-asks (if any) belong to the turn that is asked again
    return messages


def _stats(events: list[dict[str, Any]], from_turn: int, *, agent_wall_s: float = 0.0) -> RunStats:
    """The counts of turns 1..from_turn, as the loop had them then; the wall time all attempts spent."""
    stats = RunStats(turns=from_turn, repairs=Counter(), agent_wall_s=agent_wall_s)
    for e in events:
        turn = int(e.get("turn") or 0)
        if not 1 <= turn <= from_turn:
            continue
        kind = e.get("event")
        if kind == "response":
            completion = Completion.model_validate(e["completion"])
            stats.requests += 1
            stats.retries += completion.retries
            stats.usage = stats.usage + completion.usage
            stats.completions.append(completion)
        elif kind == "tool_result":
            ok = not (e.get("result") or {}).get("error")
            stats.tool_calls, stats.tool_ok, stats.tool_failed = (
                stats.tool_calls + 1,
                stats.tool_ok + ok,
                stats.tool_failed + (not ok),
            )
        elif kind == "repair":
            stats.repairs[(e.get("repair") or {}).get("kind", "unknown")] += 1
        elif kind == "reask":
            stats.reasks += 1
        elif kind == "retry":
            stats.retry_causes[(e.get("attempt") or {}).get("cause", "unknown")] += 1
            usage = (e.get("attempt") or {}).get("usage")
            stats.retry_usage = stats.retry_usage + (Usage.model_validate(usage) if usage else Usage())
    return stats


def agent_wall_spent(events: list[dict[str, Any]]) -> float:
    """The agent loop's wall time over every attempt in a trajectory, killed ones included (the
    time of a turn that is redone was spent all the same), so a resumed run gets what is left.

    An attempt runs from its ``agent_start`` line (in folders written before there was one: its
    first ``request``) to its ``agent_end``; a SIGKILLed one has no end, so it counts to its last
    line: what ran after that line (at most one request or tool call) is not known, not counted."""
    total, opened, last = 0.0, None, 0.0
    for e in events:
        ts, kind = float(e.get("ts") or last), e.get("event")
        if kind == "resume" and opened is not None:  # the attempt before was killed
            total, opened = total + last - opened, None
        if kind == "agent_start" or (kind == "request" and opened is None):
            opened = ts
        elif kind == "agent_end" and opened is not None:
            total, opened = total + ts - opened, None
        last = ts
    return total + (last - opened if opened is not None else 0.0)


def run_wall_spent(events: list[dict[str, Any]]) -> float:
    """What the earlier attempts took in all, each from its first line to its last (a new
    attempt starts at a ``resume`` line): ``timings.wall_s`` of the resumed run adds it."""
    total, first, last = 0.0, None, 0.0
    for e in events:
        ts = float(e.get("ts") or last)
        if e.get("event") == "resume" and first is not None:
            total, first = total + last - first, None
        first, last = (ts if first is None else first), ts
    return total + (last - first if first is not None else 0.0)


def workspace_commit(git_dir: Path, from_turn: int) -> str:
    """The newest commit that holds the workspace as it was after turn ``from_turn``."""
    log = git(git_dir, "log", "--format=%H %s", "refs/heads/main").decode().splitlines()
    for line in log:
        sha, _, subject = line.partition(" ")
        words = subject.split()
        if subject == "initial workspace" or (
            len(words) >= 2
            and words[0] in ("turn", "resumed")
            and words[-1].isdigit()
            and int(words[-1]) <= from_turn
        ):
            return sha
    raise UserError(f"the workspace history in {git_dir} has no commit for turn {from_turn} or before")


def resume_sandbox(point: ResumePoint, sandbox: Any) -> None:
    """Put the new sandbox's workspace back to turn ``point.from_turn`` and record that."""
    git_dir = getattr(sandbox, "git_dir", None)
    if git_dir is None:
        raise UserError("only runs of strict-profile tasks can be resumed (this sandbox keeps no history)")
    restore_workspace(git_dir, sandbox.workspace, point.commit, sandbox.user)
    sandbox.commit(f"resumed at turn {point.from_turn}")
    root = git(git_dir, "rev-list", "--max-parents=0", "refs/heads/main").decode().split()
    sandbox.initial_commit = root[-1] if root else sandbox.initial_commit  # the patch covers the whole run


def restore_workspace(git_dir: Path, workspace: Path, commit: str, owner: str) -> None:
    """Make ``workspace`` the tree of ``commit`` (what the lost turn wrote is gone), owned by
    ``owner`` ("uid:gid", the sandbox user); folders the history never holds (.venv, caches) stay."""
    data = archive(git_dir, commit)
    for entry in list(workspace.iterdir()):
        if os.fsencode(entry.name) in EXCLUDED_DIRS:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(workspace, filter="data")  # refuses links and paths out of the folder
    uid, _, gid = owner.partition(":")
    hostfs.chown_tree(workspace, int(uid), int(gid or uid))
