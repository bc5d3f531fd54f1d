"""Parity with Harbor 0.25: each probe task (tests/fixtures/harbor_tasks, written in the
terminal-bench 2 / Harbor layout, not agentrun's) gets from agentrun's oracle the reward that
Harbor's own oracle gave it, and 0 from the no-op agent. Harbor's results were recorded by
scripts/harbor_reference.py (Harbor itself, in the trixie container) in harbor_expected.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import load_result, only_run, run_cli

from agentrun.harbor.imagemap import parse_image_map
from agentrun.runner import RunConfig, run_task

pytestmark = pytest.mark.docker

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"
IMAGE_MAP = parse_image_map([], [PROBES / "image-map.txt"])
TASKS = sorted(p.name for p in PROBES.iterdir() if (p / "harbor_expected.json").is_file())


def _expected(name: str) -> dict[str, Any]:
    return json.loads((PROBES / name / "harbor_expected.json").read_text())


def _run(name: str, agent: str, results: Path) -> Any:
    config = RunConfig(task=str(PROBES / name), agent=agent, results_dir=results, image_map=IMAGE_MAP)  # type: ignore[arg-type]
    return run_task(config)


@pytest.fixture(scope="module")
def probe_runs(tmp_path_factory: pytest.TempPathFactory, docker_client: Any) -> dict[tuple[str, str], Any]:
    """Every probe with the oracle and with nop, three at a time (the runs wait on Docker and pip
    more than on the CPU), each in its own results folder."""
    from concurrent.futures import ThreadPoolExecutor

    root = tmp_path_factory.mktemp("parity")
    pairs = [(name, agent) for name in TASKS for agent in ("oracle", "nop")]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda pair: _run(pair[0], pair[1], root / f"{pair[0]}-{pair[1]}"), pairs))
    return dict(zip(pairs, results, strict=True))


def test_every_probe_has_a_harbor_record() -> None:
    probes = sorted(p.name for p in PROBES.iterdir() if (p / "task.toml").is_file())
    assert probes == TASKS
    for name in TASKS:
        assert _expected(name)["harbor_version"].startswith("0.25")


@pytest.mark.parametrize("name", TASKS)
def test_oracle_gets_harbors_reward(
    name: str, probe_runs: dict[tuple[str, str], Any], docker_client: Any
) -> None:
    harbor = _expected(name)["oracle"]
    result = probe_runs[(name, "oracle")]
    assert result.profile == "harbor" and result.stop_reason in ("oracle", "verifier_timeout", "error")
    assert result.reward == harbor["reward"], (result.error, result.rewards)
    assert (result.rewards or None) == harbor["rewards"]
    if harbor["exception"] == "VerifierTimeoutError":
        assert result.stop_reason == "verifier_timeout" and result.error
    elif harbor["exception"] == "HealthcheckError":  # the environment never got ready: no agent
        assert result.stop_reason == "error" and result.error.startswith("HealthcheckFailed: ")
    else:
        assert result.error is None
    assert not docker_client.containers.list(all=True, filters={"label": f"agentrun.run_id={result.run_id}"})


@pytest.mark.parametrize("name", TASKS)
def test_nop_agent_gets_zero(name: str, probe_runs: dict[tuple[str, str], Any]) -> None:
    harbor = _expected(name)["nop"]
    result = probe_runs[(name, "nop")]
    assert (result.reward or 0.0) == 0.0 == (harbor["reward"] or 0.0)
    assert result.reward == harbor["reward"]
    assert not result.passed


def test_multi_step_runs_each_step_in_order_and_collects_its_artifacts(
    probe_runs: dict[tuple[str, str], Any],
) -> None:
    """Harbor's MultiStepTrial: each step's solution then its own tests, the rewards by the mean
    (a key a step lacks counts 0), the artifacts per step; nop stops after a step below min_reward."""
    oracle = probe_runs[("multi-step", "oracle")]
    record = load_result(Path(oracle.results_path))
    assert [(s["name"], s["rewards"]) for s in record["steps"]] == [
        ("write", {"reward": 1.0}),
        ("extend", {"reward": 1.0, "setup": 1.0, "lines": 3.0}),  # its setup.sh ran before the agent
    ]
    steps = Path(oracle.results_path) / "steps"
    assert (steps / "write" / "artifacts" / "app" / "notes.txt").read_text() == "alpha\nbeta\n"
    assert (steps / "extend" / "artifacts" / "state-copy" / "count.txt").read_text() == "3\n"
    assert (steps / "extend" / "artifacts" / "app" / "extra.txt").is_file()  # the step's own entry
    assert not (steps / "write" / "artifacts" / "app" / "extra.txt").exists()
    assert (steps / "write" / "artifacts" / "logs" / "artifacts" / "write.log").is_file()
    assert (steps / "write" / "agent" / "oracle.txt").read_text() == "write: done\n"  # /logs/agent per step
    assert (steps / "extend" / "agent" / "oracle.txt").read_text() == "extend: done\n"
    nop = load_result(Path(probe_runs[("multi-step", "nop")].results_path))
    assert [s["name"] for s in nop["steps"]] == ["write"] and nop["rewards"] == {"reward": 0.0}


def test_healthchecks_wait_for_the_environment_or_stop_the_run(
    probe_runs: dict[tuple[str, str], Any],
) -> None:
    """[environment.healthcheck] before the agent (a slow service waited for; the tries counted
    as Harbor counts them); one that never passes stops the run with one clear error and no
    grade; a step's healthcheck that fails ends that step ungraded."""
    never = probe_runs[("healthcheck-never", "oracle")]
    assert never.error == (
        "HealthcheckFailed: healthcheck failed after 2 consecutive retries: test -f /app/ready "
        "(last try exited 1)"
    )
    assert not (Path(never.results_path) / "verifier").exists()  # nothing was graded
    retries = probe_runs[("healthcheck-retries", "oracle")]
    assert retries.rewards == {"reward": 1.0, "tries": 3.0}  # three tries, as root, before solve.sh
    steps = load_result(Path(probe_runs[("healthcheck-step", "nop")].results_path))["steps"]
    assert [(s["name"], s["rewards"]) for s in steps] == [("one", {"reward": 0.0}), ("two", None)]
    assert "step 'two' healthcheck failed after 2 consecutive retries" in steps[1]["error"]
    oracle = load_result(Path(probe_runs[("healthcheck-step", "oracle")].results_path))["steps"]
    assert [s["rewards"] for s in oracle] == [{"reward": 1.0}, {"reward": 1.0}]


def test_each_phase_gets_its_own_network(probe_runs: dict[tuple[str, str], Any]) -> None:
    """[agent]/[verifier] network_mode as Harbor's phase policy: the agent phase without a route
    out in both probes, the verifier with one (named, or the environment's), the healthcheck
    under the environment's. (Harbor's own record ran them all public: see harbor_reference.py.)"""
    for name in ("verifier-network", "agent-network"):
        run = Path(probe_runs[(name, "oracle")].results_path)
        assert (run / "sandbox" / "logs" / "agent" / "oracle.txt").read_text() == "agent network: none\n"
        stdout = run / "verifier" / "logs" / "verifier" / "test-stdout.txt"
        assert stdout.read_text().startswith("verifier network: route"), name
    run = Path(probe_runs[("agent-network", "oracle")].results_path)
    routes = run / "artifacts" / "app" / "healthcheck-routes.txt"
    assert int(routes.read_text()) >= 1  # the environment's network (public) before the agent phase


def test_a_separate_verifier_sees_only_the_artifacts(probe_runs: dict[tuple[str, str], Any]) -> None:
    """[verifier.environment] with tests/Dockerfile: the tests run in that image, with its env,
    and of the agent's files only the collected artifact is there (as in Harbor's record)."""
    run = Path(probe_runs[("separate-verifier", "oracle")].results_path)
    stdout = (run / "verifier" / "logs" / "verifier" / "test-stdout.txt").read_text()
    assert stdout.startswith('{"reward": 1, "env": 1}') and "scratch.txt" not in stdout
    assert (run / "artifacts" / "app" / "result.txt").read_text() == "42\n"
    record = load_result(run)
    assert "tests/Dockerfile: python:3.12-slim -> agentrun-sandbox:base" in record["image_substitutions"]


def test_a_single_step_run_collects_the_publish_folder(probe_runs: dict[tuple[str, str], Any]) -> None:
    manifest = Path(probe_runs[("solve-only", "oracle")].results_path) / "artifacts" / "manifest.json"
    assert [e["source"] for e in json.loads(manifest.read_text())] == ["/logs/artifacts"]


def test_cli_exit_code_summary_and_record_follow_the_reward(tmp_path: Path) -> None:
    ok = run_cli(
        "task",
        str(PROBES / "reward-json"),
        "--agent",
        "oracle",
        "--results",
        str(tmp_path / "a"),
        "--image-map-file",
        str(PROBES / "image-map.txt"),
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "accuracy 0.75" in ok.stdout and "python:3.12-slim -> agentrun-sandbox:base" in ok.stdout
    record = load_result(only_run(tmp_path / "a"))
    assert record["rewards"] == {"reward": 1.0, "accuracy": 0.75, "lines": 4.0}
    assert record["image_substitutions"] == ["Dockerfile: python:3.12-slim -> agentrun-sandbox:base"]

    late = run_cli(
        "task",
        str(PROBES / "verifier-timeout"),
        "--agent",
        "oracle",
        "--results",
        str(tmp_path / "b"),
        "--image-map",
        "python:3.12-slim=agentrun-sandbox:base",
    )
    assert late.returncode == 1
    record = load_result(only_run(tmp_path / "b"))
    assert record["stop_reason"] == "verifier_timeout" and "timed out after 5s" in record["error"]
    assert record["reward"] is None


def test_replay_model_solves_a_foreign_task_in_the_harbor_profile(tmp_path: Path) -> None:
    """The replay model types solve.sh into run_shell (the task has no reference files), as root in /app."""
    config = RunConfig(task=str(PROBES / "tb2-fix-parser"), results_dir=tmp_path, image_map=IMAGE_MAP)
    result = run_task(config)
    assert result.model_label.startswith("replay model") and result.profile == "harbor"
    assert result.stop_reason == "final_answer" and result.tool_calls.total >= 2
    assert result.reward == 1.0 and result.hidden_tests.passed == result.hidden_tests.total == 3
    assert "M /app/parse.py" in (Path(result.results_path) / "workspace.patch").read_text()


def test_replay_model_works_a_multi_step_task_one_conversation_per_step(tmp_path: Path) -> None:
    """Each step's instruction goes to the model as a new conversation, in order; each step is
    graded before the next; the rewards are combined as Harbor's oracle run combined them."""
    from agentrun.trajectory import read_trajectory

    config = RunConfig(task=str(PROBES / "multi-step"), results_dir=tmp_path, image_map=IMAGE_MAP)
    result = run_task(config)
    assert result.model_label.startswith("replay model") and result.error is None, result.error
    assert result.rewards == _expected("multi-step")["oracle"]["rewards"]
    assert [(s["name"], s["stop_reason"]) for s in result.steps] == [
        ("write", "final_answer"),
        ("extend", "final_answer"),
    ]
    assert result.turns == 4 and result.requests == 4  # two turns a step, counted over the run
    events = read_trajectory(Path(result.results_path) / "trajectory.jsonl")
    users = [
        m["content"]
        for e in events
        if e["event"] == "request"
        for m in e["new_messages"]
        if m.get("role") == "user"
    ]
    assert (
        users
        and users[0].startswith("Append the line `beta`")
        and users[-1].startswith("Append the line `gamma`")
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_local_model_runs_a_foreign_task_in_the_harbor_profile(tmp_path: Path) -> None:
    """A real model (Qwen2.5-Coder-1.5B on llama.cpp, this CPU) end to end on a Harbor task."""
    import os

    from agentrun import localmodel

    if not localmodel.is_prepared():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but the local model is not prepared: scripts/test.sh should have prepared it"
            )
        pytest.skip("the local model is not prepared: run `agentrun local-model prepare`")
    config = RunConfig(
        task=str(PROBES / "solve-only"),
        model="local",
        temperature=0.0,
        max_turns=4,
        results_dir=tmp_path,
        image_map=IMAGE_MAP,
    )
    result = run_task(config)
    assert result.profile == "harbor" and result.requests >= 1 and result.error is None
    assert result.reward is not None  # graded by the task's own test.sh; 1.0 when the model wrote the file
    record = load_result(Path(result.results_path))
    assert record["rewards"] == {"reward": result.reward}


def test_run_many_tasks_prints_rewards_and_harbors_mean(tmp_path: Path) -> None:
    proc = run_cli(
        "run",
        str(PROBES / "solve-only"),
        str(PROBES / "verifier-timeout"),
        "--agent",
        "oracle",
        "--concurrency",
        "2",
        "--results",
        str(tmp_path),
        "--image-map-file",
        str(PROBES / "image-map.txt"),
    )
    assert proc.returncode == 1, proc.stderr[-2000:]  # one task got no reward
    assert "2 of 2 trials" in proc.stdout and "0.500" in proc.stdout
    (job_dir,) = [p for p in tmp_path.iterdir() if p.name.startswith("job-")]
    job = json.loads((job_dir / "job.json").read_text())
    assert job["summary"]["mean"] == 0.5
    assert job["summary"]["failures"] == {"task": 0, "timeout": 1, "infra": 0}
    trials = {t["task"]: t for t in job["trials"]}
    assert trials["solve-only"]["reward"] == 1.0 and trials["solve-only"]["cause"] == "ok"
    assert trials["verifier-timeout"]["stop_reason"] == "verifier_timeout"
    assert trials["verifier-timeout"]["cause"] == "timeout"
    folders = sorted(p.name for p in job_dir.iterdir() if p.is_dir())
    assert folders == ["solve-only__t1", "verifier-timeout__t1"]
    for trial in job["trials"]:
        result = json.loads((job_dir / trial["run_dir"] / "result.json").read_text())
        assert result["task"] == trial["task"] and result["run_id"] == trial["id"]


def test_strict_profile_verifier_timeout_is_reported_too(tmp_path: Path) -> None:
    """agentrun's own tasks (strict profile) say a verifier timeout the same way."""
    import shutil

    from agentrun.tasks import load_task

    copy = tmp_path / "tasks" / "greet-cli"
    shutil.copytree(load_task("greet-cli").path, copy)
    toml = (
        (copy / "task.toml")
        .read_text()
        .replace("[verifier]\ntimeout_sec = 120.0", "[verifier]\ntimeout_sec = 3.0")
    )
    (copy / "task.toml").write_text(toml)
    (copy / "tests" / "test.sh").write_text("#!/bin/bash\nsleep 60\necho 1 > /logs/verifier/reward.txt\n")
    result = run_task(RunConfig(task=str(copy), agent="oracle", results_dir=tmp_path / "results"))
    assert result.profile == "strict"
    assert result.stop_reason == "verifier_timeout" and result.error == "the verifier timed out after 3s"
    assert not result.passed and result.reward is None
