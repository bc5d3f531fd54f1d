"""django-reservations end to end on the replay model: graded by the hidden tests, sized as the seed did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import load_result, only_run, run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def django_image(docker_client: Any) -> str:
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    return ensure_task_image(load_task("django-reservations"))


def test_corrected_run_passes_every_hidden_test(tmp_path: Path, django_image: str) -> None:
    proc = run_cli("task", "django-reservations", "--results", str(tmp_path), timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(tmp_path)
    result = load_result(run_dir)
    assert result["mode"] == "corrected" and result["network"] is False
    hidden, own = result["hidden_tests"], result["own_tests"]
    assert hidden["total"] >= 40 and hidden["passed"] == hidden["total"]
    from agentrun.tasks import load_task

    assert hidden["total"] == load_task("django-reservations").config.agentrun.hidden_tests_count
    assert own["total"] >= 50 and own["passed"] == own["total"]
    artifact = result["artifact"]  # measured from the produced project, not the spec
    assert artifact["models"] >= 20 and artifact["services"] >= 9 and artifact["endpoints"] >= 12
    assert artifact["own_tests"] == own["total"]
    assert artifact["admin_models"] == artifact["models"]


def test_compare_prints_both_modes(tmp_path: Path, django_image: str) -> None:
    proc = run_cli(
        "compare", "django-reservations", "--trials", "3", "--results", str(tmp_path), timeout=3600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "direct" in proc.stdout and "corrected" in proc.stdout and "hidden tests passed" in proc.stdout
    [compare_json] = list(tmp_path.glob("compare-*/compare.json"))
    data = json.loads(compare_json.read_text())
    assert data["modes"]["corrected"]["fully_passed"] == 3
    assert {r["mode"] for r in data["runs"]} == {"direct", "corrected"} and len(data["runs"]) == 6
    # a run that never built the project still reports every hidden test, as failed
    assert all(r["hidden_tests"]["total"] == 117 for r in data["runs"])
