"""The runner's harbor hooks: the task's notes, its sandbox per profile, the oracle, the verifier.

Kept here so ``agentrun.runner`` only calls in at four points (before the build, when the
sandbox starts, for the oracle, for grading).
"""

from __future__ import annotations

import contextlib
import dataclasses
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentrun.errors import HealthcheckFailed, ModelAPIError, UserError
from agentrun.harbor.collect import collect
from agentrun.harbor.compose import check, compose_services, main_image, project_name
from agentrun.harbor.compose_main import MainSettings
from agentrun.harbor.fields import unsupported_fields
from agentrun.harbor.healthcheck import environment_check, run_healthcheck
from agentrun.harbor.imagemap import planned_substitutions
from agentrun.harbor.lockdown import FLAG
from agentrun.harbor.network import compose_notes, explicit_mode, phase_network, switch, verifier_network
from agentrun.harbor.oracle import HARBOR_SOLUTION_DIR, STRICT_SOLUTION_DIR, run_oracle
from agentrun.harbor.sandbox import HarborSandbox
from agentrun.harbor.separate import definition, for_grade, verifier_images
from agentrun.harbor.steps import Act, combine, run_steps
from agentrun.harbor.verifier import verify
from agentrun.rewards import primary_reward
from agentrun.tasks import StepSection, TaskSpec

Log = Callable[[str], None]


def task_image(
    task: TaskSpec, *, base_image: str | None, image_map: dict[str, str], log: Callable[[str], None]
) -> str:
    """The image the agent's container runs: the Dockerfile's (or docker_image), else compose's main."""
    from agentrun.sandbox.images import ensure_task_image

    if task.config.steps and task.config.profile != "harbor":
        raise UserError(f"task {task.name}: [[steps]] (a multi-step task) runs in the harbor profile only")
    has_dockerfile = (task.environment_dir / "Dockerfile").is_file()
    if task.compose_file is not None and not has_dockerfile and not task.config.environment.docker_image:
        return main_image(task, image_map=image_map, on_log=log)
    return ensure_task_image(task, base_image=base_image, on_log=log, image_map=image_map)


@dataclasses.dataclass(frozen=True)
class ComposeCheck:
    """What the lock-down found in a task's compose file, for the run's output and result.json."""

    unused: list[str]  # main's keys agentrun does not use
    allowed: list[str]  # settings it would refuse, run as written under --allow-task-privileges


def main_healthcheck(main: MainSettings | None, box: Any, log: Callable[[str], None]) -> None:
    """compose main's ``healthcheck``, tried in the container as Docker would (as the image's
    user, in main's workdir) until it passes; ``HealthcheckFailed`` stops the run."""
    if main is None or main.healthcheck is None:
        return
    try:
        tries = run_healthcheck(box, main.healthcheck, user=box.image_user, what="compose main.healthcheck")
    except HealthcheckFailed as exc:
        log(f"{exc}; the agent does not run")
        raise
    log(f"compose main.healthcheck passed after {tries} tr{'y' if tries == 1 else 'ies'}")


def check_compose(task: TaskSpec, *, allow: bool, log: Log) -> ComposeCheck:
    """The task's compose file against the lock-down (``agentrun.harbor.lockdown``), before any
    image is built: ``TaskRefused`` (one line per setting, exit 2) unless ``allow``."""
    if task.config.profile != "harbor" or task.compose_file is None:
        return ComposeCheck([], [])
    unused, refused = check(task, allow=allow)
    for line in unused:
        log(line)
    if allow:
        log(
            f"{FLAG}: the task's compose services run as written" + ("" if refused else " (nothing to allow)")
        )
    for line in refused:
        log(f"{FLAG}: allowed {line}")
    return ComposeCheck(unused, refused)


def task_notes(
    task: TaskSpec, image_map: dict[str, str], log: Callable[[str], None]
) -> tuple[list[str], list[str]]:
    """(fields not supported, images substituted), each said once in the run's output."""
    raw = tomllib.loads((task.path / "task.toml").read_text())
    notes = unsupported_fields(raw) + compose_notes(task)
    if task.config.profile == "strict":  # collection is the harbor profile's (agentrun.harbor.collect)
        notes = [n for n in notes if not n.startswith("environment.storage_mb:")]  # the workspace's quota
        notes += [f"{f}: not collected in the strict profile" for f in ("artifacts",) if raw.get(f)]
        notes += ["verifier.collect: not run in the strict profile"] if task.config.verifier.collect else []
        phases = [f"{r}.network_mode" for r in ("agent", "verifier") if explicit_mode(task, r) is not None]
        notes += [f"{p}: the strict profile keeps the environment's network" for p in phases]
        notes += (
            ["verifier.environment: the strict profile grades in its own way"] if definition(task) else []
        )
    for note in notes:
        log(f"task.toml {note}")
    verifiers = [p for p in [task.tests_dir, *sorted(task.path.glob("steps/*/tests"))] if p.is_dir()]
    # the environment's, then a separate verifier's built from tests/ (agentrun.harbor.separate)
    dockerfiles = [(d, task.environment_dir) for d in sorted(task.environment_dir.rglob("Dockerfile"))]
    dockerfiles += [(f / "Dockerfile", task.path) for f in verifiers if (f / "Dockerfile").is_file()]
    done = [
        f"{s.file}: {s.original} -> {s.replacement}"
        for dockerfile, root in dockerfiles
        for s in planned_substitutions(dockerfile, image_map, root=root)
    ]
    for line in done:
        log(f"image map: {line}")
    return notes, done


@contextlib.contextmanager
def start_sandbox(
    task: TaskSpec,
    image: str,
    *,
    run_id: str,
    run_dir: Path,
    image_map: dict[str, str],
    log: Callable[[str], None],
    allow_privileges: bool = False,
    mounts: dict[str, str] | None = None,
) -> Iterator[Any]:
    """The task's sandbox in its profile: ``HarborSandbox`` (harbor; with its compose services)
    or ``DockerSandbox`` (strict), once its ``[environment.healthcheck]`` passed (else
    ``HealthcheckFailed``). Everything is removed on the way out. ``mounts``: bind mounts
    added (the strict profile's only, for now)."""
    from agentrun.sandbox.docker import connect

    env = task.config.environment
    check_cpus(task, connect())
    if task.config.profile == "harbor" and mounts:
        raise UserError(f"task {task.name}: an installed agent runs on strict-profile tasks only, for now")
    if task.config.profile == "harbor":
        mains: list[MainSettings] = []
        with compose_services(
            task,
            image,
            run_id=run_id,
            network=env.network,
            image_map=image_map,
            on_log=log,
            allow=allow_privileges,
            on_main=mains.append,
        ) as net:
            root = run_dir / "sandbox"
            network = net or env.network
            main = mains[0] if mains else None
            with HarborSandbox.for_task(
                task, image, run_id=run_id, root=root, network=network, client=connect(), main=main
            ) as box:
                box.verifier_images = verifier_images(
                    task, image, client=box.client, image_map=image_map, log=log
                )
                main_healthcheck(main, box, log)  # Docker's, in Harbor's main: before anything runs
                environment_check(task, box, log, user=box.image_user)  # before the agent, as Harbor
                if not task.config.steps:  # a multi-step task's agent phases are its steps'
                    switch(box, phase_network(task, "agent"))
                yield box
        return
    with _strict_sandbox(task, image, run_id=run_id, run_dir=run_dir, log=log, mounts=mounts) as sandbox:
        yield sandbox


@contextlib.contextmanager
def _strict_sandbox(
    task: TaskSpec,
    image: str,
    *,
    run_id: str,
    run_dir: Path,
    log: Callable[[str], None],
    mounts: dict[str, str] | None,
) -> Iterator[Any]:
    """The strict profile's ``DockerSandbox``, its folders in the run's, once its healthcheck passed."""
    from agentrun.sandbox.docker import DockerSandbox

    env, settings = task.config.environment, task.config.agentrun
    with DockerSandbox.start(
        image, run_id=run_id, network=env.network, cpus=env.cpus, memory_mb=env.memory_mb,
        pids_limit=settings.pids_limit, workspace=run_dir / "workspace", root=run_dir / "sandbox",
        quota_mb=env.storage_mb, env={"AGENTRUN_SHELL_TIMEOUT_MAX": str(settings.shell_timeout_sec)},
        mounts=mounts,
    ) as sandbox:  # fmt: skip
        environment_check(task, sandbox, log, user=None)
        yield sandbox


def check_cpus(task: TaskSpec, client: Any) -> None:
    """A task.toml ``cpus`` past the engine's CPUs is one line about that field (Docker would
    refuse the container with "Range of CPUs is from 0.01 to N")."""
    engine = int(client.info().get("NCPU") or 0)
    sections = [
        ("environment", task.config.environment),
        ("verifier.environment", task.config.verifier.environment),
    ]
    sections += [
        (f"steps.{s.name}.verifier.environment", s.verifier.environment) for s in task.config.steps or []
    ]
    for where, section in sections:
        if section is not None and engine and section.cpus > engine:
            raise UserError(
                f"task {task.name}: task.toml {where}.cpus = {section.cpus:g} is more than this Docker "
                f"engine's {engine} CPUs"
            )


def oracle(task: TaskSpec, sandbox: Any, log: Callable[[str], None]) -> str:
    """Run solve.sh (Harbor's oracle) in either profile; the stop reason is ``oracle``."""
    harbor = isinstance(sandbox, HarborSandbox)
    if harbor:
        outcome = run_oracle(task, sandbox, solution_dir=HARBOR_SOLUTION_DIR)
    else:  # the strict profile's /tmp is noexec
        outcome = run_oracle(task, sandbox, solution_dir=STRICT_SOLUTION_DIR, interpreter="bash")
    if outcome.timed_out:
        log(f"oracle: solve.sh timed out after {task.config.agent.timeout_sec:g}s")
    elif outcome.exit_code != 0:
        log(f"oracle: solve.sh exited {outcome.exit_code}: {outcome.output_tail[-300:]}")
    if not harbor:
        sandbox.commit("oracle: reference solution")
    return "oracle"


def grade_harbor(result: Any, task: TaskSpec, sandbox: HarborSandbox, run_dir: Path) -> Any:
    """Harbor's verifier into ``result``: rewards, the main reward, test counts, and its failure.
    The artifacts are collected first. A multi-step task was graded step by step already."""
    if task.config.steps:  # graded step by step; a resumed run did not go through the steps
        if not result.steps:
            result.stop_reason = "error"
            result.error = "a multi-step task is graded step by step; resuming one is not supported"
        return result.steps
    switch(sandbox, task.config.environment.network)  # the agent phase is over: back to the environment's
    collect(task, sandbox, run_dir / "artifacts", project=project_name(result.run_id), log=lambda _m: None)
    network, separate = verifier_network(task, sandbox), for_grade(task, sandbox)
    outcome = verify(
        task, sandbox, run_id=result.run_id, root=run_dir / "verifier", network=network, separate=separate
    )
    result.hidden_tests = outcome.tests
    if outcome.rewards is not None:
        result.rewards = dict(outcome.rewards.metrics)
        result.reward = outcome.rewards.main
        result.verdict = "graded"
    if outcome.stop_reason:
        result.stop_reason = outcome.stop_reason
        result.error = outcome.error
    return outcome


def multi_step(result: Any, task: TaskSpec, sandbox: Any, run_dir: Path, *, act: Act, log: Log) -> None:
    """Every step acted and graded in turn (``agentrun.harbor.steps``); the rewards combined."""
    if not isinstance(sandbox, HarborSandbox):
        raise UserError(f"task {task.name}: [[steps]] (a multi-step task) runs in the harbor profile only")
    records = run_steps(
        task, sandbox, act=act, run_id=result.run_id, run_dir=run_dir,
        project=project_name(result.run_id), log=log,
    )  # fmt: skip
    result.steps = [r.model_dump() for r in records]
    result.stop_reason = records[-1].stop_reason if records else result.stop_reason
    rewards = combine(task, records)
    if rewards is not None:
        result.rewards, result.reward, result.verdict = rewards, primary_reward(rewards), "graded"
    failed = [f"step {r.name}: {r.error}" for r in records if r.error]
    if failed:
        result.error = "; ".join(failed)


def fixed_act(agent: str, task: TaskSpec, sandbox: Any, log: Log) -> Act:
    """A step's oracle: ``steps/<name>/solution/solve.sh``, else the task's solve.sh (Harbor's);
    or Harbor's no-op agent (``nop``), which leaves each step's environment as it is."""
    if agent == "nop":
        return lambda _step, _instruction, _timeout: "nop"

    def act(step: StepSection, _instruction: str, timeout: float) -> str:
        own = task.step_dir(step.name) / "solution"
        source = own if own.is_dir() else task.solution_dir
        outcome = run_oracle(task, sandbox, solution_dir=HARBOR_SOLUTION_DIR, source=source, timeout=timeout)
        if outcome.timed_out:
            log(f"oracle: step {step.name} solve.sh timed out after {timeout:g}s")
        elif outcome.exit_code != 0:
            log(f"oracle: step {step.name} solve.sh exited {outcome.exit_code}: {outcome.output_tail[-300:]}")
        return "oracle"

    return act


def agent_act(agent: Any, limits: Any, on_model_error: Callable[[ModelAPIError], None]) -> Act:
    """A step for the model: a new conversation with the step's instruction, as Harbor gives
    each step; the turn limit is per step, the wall time the step's agent timeout."""

    def act(_step: StepSection, instruction: str, timeout: float) -> str:
        agent.limits = dataclasses.replace(
            limits,
            max_turns=agent.stats.turns + limits.max_turns,
            max_wall_s=agent.stats.agent_wall_s + min(timeout, limits.max_wall_s),
        )
        try:
            return str(agent.run(instruction))
        except ModelAPIError as exc:
            on_model_error(exc)
            return "model_error"

    return act
