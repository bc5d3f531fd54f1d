"""Multi-step tasks and artifacts as Harbor 0.25 defines them: the task.toml model, the
rewards combined by ``multi_step_reward_strategy``, when the remaining steps are skipped,
which tests each step's verifier gets, and the artifact entries collected."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrun.errors import TaskError
from agentrun.harbor.collect import _entries, _excluded
from agentrun.harbor.steps import StepRecord, _stop_after, combine, step_plan
from agentrun.tasks import ArtifactSection, load_task

PROBE = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks" / "multi-step"

STEPS = """
multi_step_reward_strategy = "{strategy}"
[verifier]
timeout_sec = 30.0
env = {{ A = "task", B = "task" }}
[[steps]]
name = "one"
min_reward = {{ reward = 0.5, quality = 0.2 }}
[[steps]]
name = "two"
[steps.verifier]
env = {{ B = "step" }}
user = "tester"
"""


def make_steps_task(root: Path, toml: str, *, step_tests: tuple[str, ...] = ("one",)) -> Path:
    task = root / "demo"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text("true\n")
    for name in ("one", "two"):
        (task / "steps" / name).mkdir(parents=True)
        (task / "steps" / name / "instruction.md").write_text(f"step {name}")
    for name in step_tests:
        (task / "steps" / name / "tests").mkdir()
        (task / "steps" / name / "tests" / "test.sh").write_text("true\n")
    (task / "task.toml").write_text(toml)
    return task


def _record(name: str, rewards: dict[str, float] | None) -> StepRecord:
    return StepRecord(name=name, stop_reason="oracle", rewards=rewards, error=None if rewards else "boom")


def test_the_probe_loads_with_its_steps_and_artifacts():
    task = load_task(str(PROBE))
    assert [s.name for s in task.config.steps or []] == ["write", "extend"]
    assert task.instruction == "" and task.config.multi_step_reward_strategy == "mean"
    assert task.config.steps and task.config.steps[0].min_reward == 0.5
    assert task.config.artifacts[0] == ArtifactSection(source="/app/notes.txt")


def test_mean_is_per_key_over_the_steps_that_gave_rewards(tmp_path):
    task = load_task(str(make_steps_task(tmp_path, STEPS.format(strategy="mean"))))
    records = [
        _record("one", {"reward": 1.0}),
        _record("x", None),
        _record("two", {"reward": 0.5, "extra": 3.0}),
    ]
    assert combine(task, records) == {"reward": 0.75, "extra": 1.5}  # the missing key counts 0
    assert combine(task, [_record("one", None)]) is None
    assert combine(task, []) is None


def test_final_takes_the_last_steps_rewards_verbatim(tmp_path):
    task = load_task(str(make_steps_task(tmp_path, STEPS.format(strategy="final"))))
    assert combine(task, [_record("one", {"reward": 1.0}), _record("two", {"reward": 0.25})]) == {
        "reward": 0.25
    }
    assert combine(task, [_record("one", {"reward": 1.0}), _record("two", None)]) is None


def test_remaining_steps_stop_on_no_reward_or_below_min_reward(tmp_path):
    task = load_task(str(make_steps_task(tmp_path, STEPS.format(strategy="mean"))))
    one, two = task.config.steps or []
    assert _stop_after(one, _record("one", {"reward": 0.5, "quality": 0.2})) is None
    assert "quality=-inf" in (_stop_after(one, _record("one", {"reward": 1.0})) or "")  # a missing key fails
    assert "reward=0.4" in (_stop_after(one, _record("one", {"reward": 0.4, "quality": 1.0})) or "")
    assert _stop_after(two, _record("two", {"reward": 0.0})) is None  # no min_reward
    assert "no reward" in (_stop_after(two, _record("two", None)) or "")


def test_each_step_gets_the_tasks_tests_then_its_own_and_its_verifier_settings(tmp_path):
    root = make_steps_task(tmp_path, STEPS.format(strategy="mean"), step_tests=("one",))
    task = load_task(str(root))
    one, two = task.config.steps or []
    plan = step_plan(task, one)
    assert plan.tests == (root / "tests", root / "steps" / "one" / "tests")
    assert plan.timeout_sec == 600.0  # Harbor: a step's verifier timeout is its own, 600 s unless set
    assert plan.env == {"A": "task", "B": "task"} and plan.user is None
    plan = step_plan(task, two)
    assert plan.tests == (root / "tests",) and plan.script == "/tests/test.sh"
    assert plan.env == {"A": "task", "B": "step"} and plan.user == "tester"


def test_a_step_without_an_instruction_or_any_test_is_refused(tmp_path):
    root = make_steps_task(tmp_path, STEPS.format(strategy="mean"))
    (root / "steps" / "two" / "instruction.md").unlink()
    with pytest.raises(TaskError, match=r"missing steps/two/instruction\.md"):
        load_task(str(root))
    (root / "steps" / "two" / "instruction.md").write_text("again")
    (root / "tests" / "test.sh").unlink()
    with pytest.raises(TaskError, match=r"missing steps/two/tests/test\.sh"):
        load_task(str(root))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[[steps]]\nname = "a"\n[[steps]]\nname = "A"\n', "step names must be unique"),
        ('[[steps]]\nname = "a/b"\n', "steps.0.name"),
        ('multi_step_reward_strategy = "max"\n[[steps]]\nname = "a"\n', "multi_step_reward_strategy"),
        ('artifacts = ["/app/../etc"]\n', "must not contain '..'"),
        ('artifacts = [{ source = "/app", destination = "/abs" }]\n', "relative path inside artifacts"),
        (
            'artifacts = [{ source = "/app", destination = "manifest.json" }]\n',
            "relative path inside artifacts",
        ),
    ],
)
def test_bad_steps_and_artifacts_are_one_line_task_errors(tmp_path, toml, message):
    root = make_steps_task(tmp_path, toml)
    with pytest.raises(TaskError, match=message) as info:
        load_task(str(root))
    assert "\n" not in str(info.value)


def test_the_publish_folder_is_collected_first_unless_named():
    entries = _entries(
        [ArtifactSection(source="/app/out.txt"), ArtifactSection(source="/var/log", service="db")]
    )
    assert [(e.source, e.service) for e in entries] == [
        ("/logs/artifacts", None),
        ("/app/out.txt", None),
        ("/var/log", "db"),
    ]
    named = _entries([ArtifactSection(source="/logs/artifacts/", exclude=["*.tmp"])])
    assert len(named) == 1 and named[0].exclude == ["*.tmp"]


def test_excludes_match_like_tar_exclude():
    assert _excluded("state/cache/x.bin", "state", ["cache"])
    assert _excluded("state/a.tmp", "state", ["*.tmp"])
    assert not _excluded("state/keep.txt", "state", ["*.tmp", "cache"])
    assert not _excluded("state", "state", ["*.tmp"])


def test_a_strict_task_is_told_its_artifacts_and_collect_hooks_are_not_carried_out(tmp_path):
    from agentrun.harbor.run import task_notes

    toml = (
        'artifacts = ["/workspace/out.txt"]\n[[verifier.collect]]\ncommand = "true"\n'
        '[metadata.agentrun]\nprofile = "strict"\n'
    )
    root = make_steps_task(tmp_path, toml)
    (root / "instruction.md").write_text("Do it.")  # a single-step task
    logged: list[str] = []
    notes, _ = task_notes(load_task(str(root)), {}, logged.append)
    assert notes == [
        "artifacts: not collected in the strict profile",
        "verifier.collect: not run in the strict profile",
    ]
    assert logged == [f"task.toml {n}" for n in notes]
