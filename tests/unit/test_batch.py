"""The job's pieces without Docker: the ledger, the causes, the figures, and run_job with a
plain function for a runner (the real runs are in tests/e2e/test_run_job.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docker.errors import APIError

from agentrun.batch.causes import classify_error, classify_result
from agentrun.batch.ledger import JobSpec, Ledger, TrialRecord
from agentrun.batch.run import find_tasks, run_job
from agentrun.batch.stats import bootstrap_ci, ks, pass_at_k, summarize
from agentrun.config import RunConfig
from agentrun.errors import SandboxError, TaskError, UserError
from agentrun.results import RunResult
from agentrun.sandbox.images import ImageBuildError


def _task(root: Path, name: str) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "task.toml").write_text('version = "1.0"\n')
    return root / name


def _spec(tasks: dict[str, str], trials: int = 2, retries: int = 2) -> JobSpec:
    return JobSpec(tasks=tasks, trials=trials, agent="oracle", mode="corrected", infra_retries=retries)


def _result(
    config: RunConfig, reward: float | None, stop: str = "oracle", error: str | None = None
) -> RunResult:
    run_dir = config.results_dir / (config.run_id or "")
    run_dir.mkdir(parents=True, exist_ok=True)
    result = RunResult(run_id=config.run_id or "", task=Path(config.task).name, mode="corrected",
                       agent="oracle", model="", profile="harbor", reward=reward, stop_reason=stop,
                       error=error, results_path=str(run_dir))  # fmt: skip
    (run_dir / "result.json").write_text(result.model_dump_json())
    return result


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(4, 0, 1) == 0.0 and pass_at_k(4, 4, 4) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
    assert ks(1) == [1] and ks(5) == [1, 2, 4, 5] and ks(8) == [1, 2, 4, 8]


def test_bootstrap_interval_holds_the_mean_and_is_seeded() -> None:
    groups = [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    low, high = bootstrap_ci(groups) or (0.0, 0.0)
    assert low < 6 / 9 < high and low >= 0.0 and high <= 1.0
    assert bootstrap_ci(groups) == (low, high)  # the same ledger, the same interval
    assert bootstrap_ci([[1.0], [1.0]]) == (1.0, 1.0) and bootstrap_ci([[]]) is None
    assert bootstrap_ci([[0.0, 1.0] * 10]) != (0.5, 0.5)  # one task, many trials: still a spread


def test_summary_counts_infra_apart_from_the_mean() -> None:
    trials = [
        TrialRecord(id="a__t1", task="a", task_path="a", trial=1, status="done", cause="ok", reward=1.0, passed=True),
        TrialRecord(id="a__t2", task="a", task_path="a", trial=2, status="done", cause="task", reward=0.0),
        TrialRecord(id="b__t1", task="b", task_path="b", trial=1, status="done", cause="timeout"),
        TrialRecord(id="b__t2", task="b", task_path="b", trial=2, status="infra", cause="infra"),
    ]  # fmt: skip
    s = summarize(trials, 2)
    assert s["mean"] == pytest.approx(1 / 3) and s["finished"] == 3 and s["pending"] == 0
    assert s["failures"] == {"task": 1, "timeout": 1, "infra": 1}
    assert s["pass_at_k"] == {"1": pytest.approx(0.25), "2": 1.0}  # b has too few results for pass@2


def test_causes_of_errors_raised_before_a_result() -> None:
    killed = ImageBuildError(
        "building x failed: The command '/bin/sh -c sleep 9' returned a non-zero code: 137"
    )
    assert classify_error(killed)[0] == "infra"  # type: ignore[index]
    broken = ImageBuildError("building x failed: The command '/bin/sh -c false' returned a non-zero code: 1")
    assert classify_error(broken)[0] == "task"  # type: ignore[index]
    assert classify_error(APIError("container start refused"))[0] == "infra"  # type: ignore[index]
    assert classify_error(SandboxError("the Docker engine of x does not answer"))[0] == "infra"  # type: ignore[index]
    assert classify_error(TaskError("bad task.toml"))[0] == "task"  # type: ignore[index]
    assert classify_error(ValueError("a bug of ours")) is None


def test_causes_of_results(tmp_path: Path) -> None:
    config = RunConfig(task="t", results_dir=tmp_path, run_id="t__t1")
    assert classify_result(_result(config, 1.0))[0] == "ok"
    assert classify_result(_result(config, 0.0))[0] == "task"
    assert classify_result(_result(config, None, "verifier_timeout", "timed out"))[0] == "timeout"
    gone = "SandboxError: the Docker engine of c does not answer: connection refused"
    assert classify_result(_result(config, None, "error", gone))[0] == "infra"
    assert (
        classify_result(_result(config, None, "error", "SandboxError: /workspace is too large"))[0] == "task"
    )
    assert (
        classify_result(_result(config, None, "model_error", "ModelAPIError: 400 bad request"))[0] == "task"
    )


def test_find_tasks_include_and_exclude(tmp_path: Path) -> None:
    for name in ("fix-a", "fix-b", "log-c"):
        _task(tmp_path, name)
    assert [p.name for p in find_tasks([tmp_path], include=["fix-*"])] == ["fix-a", "fix-b"]
    assert [p.name for p in find_tasks([tmp_path], exclude=["fix-a"])] == ["fix-b", "log-c"]
    with pytest.raises(TaskError, match="no task left"):
        find_tasks([tmp_path], include=["nothing*"])


def test_a_harbor_registry_file_is_read_from_disk_as_its_datasets_tasks(tmp_path: Path) -> None:
    """Harbor 0.25's registry.json: a list of datasets; each task's path from the file's folder."""
    for name in ("fix-a", "fix-b", "log-c"):
        _task(tmp_path / "datasets" / "tb", name)
    entry = {"git_url": "https://github.com/example/ds.git", "git_commit_id": "abc123"}
    datasets = [
        {"name": "tb", "version": "2.0", "description": "", "metrics": [],
         "tasks": [{"name": n, "path": f"datasets/tb/{n}", **entry} for n in ("log-c", "fix-a")]},
        {"name": "tb", "version": "1.0", "description": "",
         "tasks": [{"name": "gone", "path": "datasets/tb/gone", **entry}]},
    ]  # fmt: skip
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps(datasets))
    found = find_tasks([registry], dataset="tb@2.0", exclude=["fix-*"])
    assert found == [(tmp_path / "datasets" / "tb" / "log-c").resolve()]
    with pytest.raises(TaskError, match=r"holds tb@2.0, tb@1.0; say which with --dataset"):
        find_tasks([registry])
    with pytest.raises(
        TaskError, match=r"no task.toml in .*gone \(it is in https://github.com/example/ds.git at abc123"
    ):
        find_tasks([registry], dataset="tb@1.0")
    with pytest.raises(TaskError, match="no dataset tb@3"):
        find_tasks([registry], dataset="tb@3")
    registry.write_text('{"name": "tb"}')
    with pytest.raises(TaskError, match="a Harbor registry is a JSON list of datasets"):
        find_tasks([registry])
    registry.write_text('[{"name": "tb", "tasks": []}]')
    with pytest.raises(TaskError, match=r"not a Harbor registry \(0.version: Field required\)"):
        find_tasks([registry])
    with pytest.raises(TaskError, match="none of DIRS is a registry file"):
        find_tasks([tmp_path / "datasets" / "tb"], dataset="tb")


def test_ledger_resumes_and_refuses_another_job(tmp_path: Path) -> None:
    job = tmp_path / "job"
    ledger = Ledger.open(job, _spec({"a": "/a"}))
    assert [t.id for t in ledger.trials] == ["a__t1", "a__t2"]
    ledger.update(ledger.trials[0].model_copy(update={"status": "done", "cause": "ok", "reward": 1.0}))
    again = Ledger.open(job, _spec({"a": "/a"}, trials=3))  # more trials may be added
    assert [(t.id, t.status) for t in again.trials] == [
        ("a__t1", "done"),
        ("a__t2", "pending"),
        ("a__t3", "pending"),
    ]
    with pytest.raises(UserError, match="different job"):
        Ledger.open(job, _spec({"b": "/b"}))
    with pytest.raises(UserError, match="3 trials"):
        Ledger.open(job, _spec({"a": "/a"}, trials=1))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("")
    with pytest.raises(UserError, match=r"no job\.json"):
        Ledger.open(tmp_path / "other", _spec({"a": "/a"}))
    (job / "job.json").write_text("{")
    with pytest.raises(UserError, match="not a job ledger"):
        Ledger.open(job, _spec({"a": "/a"}))
    assert not list(job.glob(".job.json*"))  # no temporary file left by a write


def test_run_job_retries_infra_and_runs_only_what_has_no_result(tmp_path: Path) -> None:
    """The first attempt of a__t1 is refused by the engine, a__t2 left a folder from a kill."""
    job = tmp_path / "job"
    ledger = Ledger.open(job, _spec({"a": "/a"}))
    (job / "a__t2").mkdir()
    (job / "a__t2" / "trajectory.jsonl").write_text("{}\n")
    calls: list[str] = []

    def runner(config: RunConfig) -> RunResult:
        calls.append(config.run_id or "")
        if calls.count("a__t1") == 1:
            _result(config, None)  # what the broken attempt had written
            raise APIError("500 Server Error: container start refused")
        return _result(config, 1.0)

    ran = run_job(ledger, RunConfig(task="a", results_dir=tmp_path), runner=runner)
    assert sorted(calls) == ["a__t1", "a__t1", "a__t2"] and len(ran) == 2
    one, two = Ledger.open(job, _spec({"a": "/a"})).trials
    assert (one.status, one.cause, one.infra_retries) == ("done", "ok", 1)
    assert [a.cause for a in one.attempts] == ["infra", "ok"] and one.attempts[0].folder == "a__t1.attempt-1"
    assert [a.cause for a in two.attempts] == ["interrupted", "ok"]
    assert (job / "a__t2.attempt-1" / "trajectory.jsonl").is_file()  # the killed attempt is kept
    assert run_job(Ledger.open(job, _spec({"a": "/a"})), RunConfig(task="a"), runner=runner) == []
    document = json.loads((job / "job.json").read_text())
    assert document["summary"]["infra_retries"] == 1 and document["summary"]["mean"] == 1.0
    assert document["summary"]["ci95"] == [1.0, 1.0]  # the job ended: its ledger has the interval
    Ledger.open(job, _spec({"a": "/a"}))
    assert json.loads((job / "job.json").read_text())["summary"]["ci95"] is None  # not yet


def test_run_job_gives_up_after_the_infra_retries(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "job", _spec({"a": "/a"}, trials=1, retries=1))

    def runner(config: RunConfig) -> RunResult:
        raise ImageBuildError("building a failed: returned a non-zero code: 137")

    (trial,) = run_job(ledger, RunConfig(task="a", results_dir=tmp_path), runner=runner)
    assert trial.status == "infra" and trial.infra_retries == 2 and not trial.final

    def bug(config: RunConfig) -> RunResult:
        raise ValueError("ours")

    with pytest.raises(ValueError):  # a bug is shown, not counted as the task's or the engine's
        run_job(ledger, RunConfig(task="a", results_dir=tmp_path), runner=bug)


def test_causes_of_what_ray_raises() -> None:
    exceptions = pytest.importorskip("ray.exceptions")
    build = ImageBuildError("building x failed: returned a non-zero code: 137")
    wrapped = exceptions.RayTaskError("_session", "Traceback ...", build).as_instanceof_cause()
    assert classify_error(wrapped) == ("infra", f"ImageBuildError: {build}")  # the trial's own error
    bug = exceptions.RayTaskError("_session", "Traceback ...", ValueError("ours")).as_instanceof_cause()
    assert classify_error(bug) is None
    assert classify_error(exceptions.NodeDiedError("node abc died"))[0] == "infra"  # type: ignore[index]
    assert classify_error(exceptions.WorkerCrashedError())[0] == "infra"  # type: ignore[index]


def test_a_killed_jobs_page_is_written(tmp_path: Path) -> None:
    """A job with trials still pending (killed, or running) gets its page from job.json."""
    from agentrun.report import run_folders_inside, write_report

    ledger = Ledger.open(tmp_path / "job", _spec({"a": "/a", "b": "/b"}))
    config = RunConfig(task="a", results_dir=ledger.folder, run_id="a__t1")
    done = ledger.trials[0].model_copy(
        update={"status": "done", "cause": "ok", "reward": 1.0, "passed": True, "run_dir": "a__t1"}
    )
    _result(config, 1.0)
    ledger.update(done)
    assert run_folders_inside(ledger.folder) == [ledger.folder / "a__t1"]
    page = write_report([ledger.folder]).read_text()
    assert "1 of 4" in page and "a__t2" in page and "pending" in page
