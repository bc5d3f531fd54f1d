"""Where agentrun finds its non-Python folders (tools/, tasks/, sandboxes/, telemetry/).

In a checkout they sit beside the package; in an installed wheel they are package data
under ``agentrun/_data/``. ``AGENTRUN_TASKS_DIR`` adds a folder of the user's own tasks.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``tools``, ``tasks``, ``sandboxes`` or ``telemetry``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"agentrun's {name}/ folder is missing from this installation")


def task_dirs() -> list[Path]:
    """Folders searched for tasks: the user's (``AGENTRUN_TASKS_DIR``) first, then ours."""
    extra = [Path(p) for p in os.environ.get("AGENTRUN_TASKS_DIR", "").split(os.pathsep) if p]
    return [*extra, data_dir("tasks")]


def cache_dir() -> Path:
    """A per-user cache outside any checkout (local model builds, downloads)."""
    base = (
        os.environ.get("AGENTRUN_CACHE_DIR")
        or os.environ.get("XDG_CACHE_HOME")
        or str(Path.home() / ".cache")
    )
    path = Path(base) / "agentrun" if "AGENTRUN_CACHE_DIR" not in os.environ else Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path
