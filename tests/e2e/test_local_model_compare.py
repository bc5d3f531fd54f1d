"""The real model, end to end: Qwen2.5-Coder-1.5B on llama.cpp on this CPU, direct vs corrected.

Runs when the local model is prepared (``agentrun local-model prepare``; CI prepares it first).
This model never returns native tool calls, so corrected mode must recover them from its text;
direct mode's outcome is recorded as it is, with no expectation forced on it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli

from agentrun import localmodel

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(3600)]
TABLE = Path(__file__).resolve().parents[2] / "results" / "local-model-compare.txt"


def test_greet_cli_direct_vs_corrected_on_the_local_model(tmp_path: Path, docker_client: object) -> None:
    if not localmodel.is_prepared():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but the local model is not prepared: scripts/test.sh should have prepared it"
            )
        pytest.skip("the local model is not prepared: run `agentrun local-model prepare`")
    proc = run_cli(
        "compare",
        "greet-cli",
        "--model",
        "local",
        "--trials",
        "3",
        "--temperature",
        "0",
        "--results",
        str(tmp_path),
        timeout=3600,
    )
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(proc.stdout + "\n" + proc.stderr)  # the table, kept for the record
    print(proc.stdout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [compare_json] = list(tmp_path.glob("compare-*/compare.json"))
    data = json.loads(compare_json.read_text())
    assert "qwen2.5-coder-1.5b" in data["model_label"] and data["faults"] == 0.0  # genuine errors only
    corrected = [r for r in data["runs"] if r["mode"] == "corrected"]
    direct = [r for r in data["runs"] if r["mode"] == "direct"]
    assert len(corrected) == len(direct) == 3
    assert data["modes"]["corrected"]["fully_passed"] >= 2
    assert data["modes"]["corrected"]["repaired_total"].get("text_tool_call", 0) >= 3  # calls came as text
    for run in direct:  # recorded as they are
        assert run["stop_reason"] and run["hidden_tests"]["total"] == 12
