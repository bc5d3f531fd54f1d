"""Helpers shared by the end-to-end tests: the real CLI in a subprocess and its outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def agentrun_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentrun", *args]


def run_cli(
    *args: str, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        agentrun_cmd(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def only_run(results: Path) -> Path:
    runs = [p for p in results.iterdir() if (p / "result.json").exists()]
    assert len(runs) == 1, runs
    return runs[0]


def load_result(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "result.json").read_text())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
