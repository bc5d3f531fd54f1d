"""The append-only JSONL trajectory of a run, and the results folder it lives in.

Every request, response, repair, tool call, tool result, timing and usage is one line,
written and flushed as it happens, so a crash or Ctrl-C loses nothing already done. Each
line carries the run id, the mode and a monotonic sequence number; field names follow
ATIF (Harbor's trajectory format) where they have an equivalent (``step_id``, ``source``,
``tool_calls``, ``observation``, ``metrics``). Secrets (the API key and every registered
one, see ``agentrun.secrets``) are scrubbed from each string before the line is encoded.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentrun.lines import json_line, read_jsonl
from agentrun.secrets import Scrubber


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


class Trajectory:
    """Append-only JSONL writer; one instance per run, safe across threads."""

    def __init__(
        self, path: Path, *, run_id: str, mode: str, secrets: list[str] | None = None, first_seq: int = 0
    ) -> None:
        self.path = path
        self.run_id = run_id
        self.mode = mode
        self._scrubber = Scrubber(secrets or ())
        self._seq = first_seq  # a resumed run numbers on from the killed run's last line
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("a", encoding="utf-8")

    def append(self, event: str, **fields: Any) -> None:
        """Write one event line now (flushed), with run id, mode and sequence number."""
        with self._lock:
            self._seq += 1
            line = {
                "seq": self._seq,
                "ts": time.time(),
                "run_id": self.run_id,
                "mode": self.mode,
                "event": event,
            }
            # scrubbed as strings, before encoding: an escaped key would slip past a replace on JSON
            line.update(self._scrubber.data(_jsonable(fields)))
            self._fh.write(json_line(line) + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    """All events of a trajectory file, in order (lines split on ``\\n`` only: ``agentrun.lines``)."""
    return read_jsonl(path)
