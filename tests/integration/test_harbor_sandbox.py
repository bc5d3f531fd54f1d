"""The harbor profile holds: what the container gets (and does not), and a root agent cannot fake
its grade (a planted reward file, a process rewriting it, a planted /tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrun.harbor.imagemap import parse_image_map
from agentrun.harbor.sandbox import HarborSandbox
from agentrun.harbor.verifier import verify
from agentrun.sandbox.profiles import HARBOR_CAPABILITIES
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


@pytest.fixture(scope="module")
def solve_only(docker_client: Any) -> tuple[Any, str]:
    from agentrun.sandbox.images import ensure_task_image

    task = load_task(str(PROBES / "solve-only"))
    image_map = parse_image_map([], [PROBES / "image-map.txt"])
    return task, ensure_task_image(task, image_map=image_map)


def _start(task: Any, image: str, tmp_path: Path, docker_client: Any, run_id: str) -> HarborSandbox:
    return HarborSandbox.for_task(
        task, image, run_id=run_id, root=tmp_path / "sandbox", network=False, client=docker_client
    )


def test_container_gets_the_profile_and_nothing_more(
    solve_only: Any, tmp_path: Path, docker_client: Any
) -> None:
    task, image = solve_only
    with _start(task, image, tmp_path, docker_client, "harbor-profile-test") as box:
        host = box.container.attrs["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and sorted(host["CapAdd"]) == sorted(HARBOR_CAPABILITIES)
        assert "no-new-privileges" in host["SecurityOpt"] and not host["Privileged"]
        assert host["NetworkMode"] == "none" and host["PidsLimit"] > 0 and host["Memory"] > 0
        assert host["ReadonlyRootfs"] is False
        mounts = {m["Destination"]: m for m in box.container.attrs["Mounts"]}
        assert (
            set(mounts) == {"/logs", "/opt/agentrun/tools"} and mounts["/opt/agentrun/tools"]["RW"] is False
        )
        assert not any("docker.sock" in m["Source"] for m in mounts.values())
        assert box.user == "root" and box.workdir == "/app"  # the image's user and WORKDIR, as Harbor
        probe = box.exec(
            "id -u; pwd; touch /usr/local/lib/writable && echo writable; "
            "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=3)' 2>&1 | tail -1; "
            "mknod /tmp/dev c 1 3 2>&1 | tail -1; test -S /var/run/docker.sock || echo no-socket"
        )
        lines = probe.output.splitlines()
        assert lines[:3] == ["0", "/app", "writable"], probe.output
        assert "unreachable" in lines[3].lower() or "error" in lines[3].lower(), probe.output
        assert "not permitted" in lines[4], probe.output  # MKNOD stays dropped
        assert lines[5] == "no-socket"


def test_root_agent_cannot_fake_its_grade(solve_only: Any, tmp_path: Path, docker_client: Any) -> None:
    task, image = solve_only
    box = _start(task, image, tmp_path, docker_client, "harbor-fake-grade-test")
    try:
        cheat = box.exec(
            "mkdir -p /logs/verifier /tests && echo 1 > /logs/verifier/reward.txt; "
            "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh; chmod +x /tests/test.sh; "
            "(setsid sh -c 'while true; do echo 1 > /logs/verifier/reward.txt; sleep 0.05; done' &) ; "
            "nohup sh -c 'sleep 1000' >/dev/null 2>&1 & echo planted"
        )
        assert "planted" in cheat.output
        outcome = verify(
            task, box, run_id="harbor-fake-grade-test", root=tmp_path / "verifier", network=False
        )
    finally:
        box.close()
    # the task's own test.sh ran (hello.txt is missing): Harbor's reward for an unsolved task
    assert outcome.rewards is not None and outcome.rewards.main == 0.0, outcome
    assert (tmp_path / "verifier" / "logs" / "verifier" / "reward.txt").read_text().strip() == "0"
    assert not docker_client.containers.list(
        all=True, filters={"label": "agentrun.run_id=harbor-fake-grade-test"}
    )


@pytest.mark.parametrize(
    ("test_sh", "stop_reason", "error_part"),
    [
        ("#!/bin/sh\necho boom; exit 3\n", "verifier_error", "no reward file"),
        ("#!/bin/sh\necho passed > /logs/verifier/reward.txt\n", "verifier_error", "not a number"),
        (
            '#!/bin/sh\necho \'{"reward": "high"}\' > /logs/verifier/reward.json\n',
            "verifier_error",
            "not a number",
        ),
    ],
)
def test_a_verifier_crash_is_reported_not_scored(
    solve_only: Any, tmp_path: Path, docker_client: Any, test_sh: str, stop_reason: str, error_part: str
) -> None:
    import shutil

    task, image = solve_only
    copy = tmp_path / "solve-only"
    shutil.copytree(task.path, copy)
    (copy / "tests" / "test.sh").write_text(test_sh)
    broken = load_task(str(copy))
    box = _start(broken, image, tmp_path, docker_client, "harbor-crash-test")
    try:
        outcome = verify(broken, box, run_id="harbor-crash-test", root=tmp_path / "verifier", network=False)
    finally:
        box.close()
    assert outcome.rewards is None and outcome.stop_reason == stop_reason
    assert outcome.error is not None and error_part in outcome.error, outcome.error


def test_compose_services_get_an_internal_network_of_their_own_and_are_torn_down(docker_client: Any) -> None:
    from agentrun.harbor.compose import compose_services
    from agentrun.sandbox.images import ensure_task_image

    task = load_task(str(PROBES / "compose-db"))
    image_map = parse_image_map([], [PROBES / "image-map.txt"])
    image = ensure_task_image(task, image_map=image_map)
    run_id = "harbor-compose-test"
    with compose_services(
        task, image, run_id=run_id, network=False, image_map=image_map, on_log=print
    ) as net:
        assert net is not None
        network = docker_client.networks.get(net)
        assert network.attrs["Internal"] is True
        (db,) = docker_client.containers.list(filters={"label": f"agentrun.run_id={run_id}"})
        assert db.labels["com.docker.compose.service"] == "db" and db.labels["agentrun"] == "1"
        from agentrun.liveness import owner_alive

        assert owner_alive(db.labels) is True  # owner labels: prune leaves a live run's service alone
        assert owner_alive(network.attrs["Labels"]) is True  # and its network (a killed run's goes)
        assert db.image.tags[0].startswith("agentrun-svc-compose-db-db:")  # built here, FROM mapped
        host = db.attrs["HostConfig"]  # the service is locked down as the agent's container is
        assert host["CapDrop"] == ["ALL"] and sorted(host["CapAdd"]) == sorted(HARBOR_CAPABILITIES)
        assert host["SecurityOpt"] == ["no-new-privileges:true"] and not host["Privileged"]
        assert host["PidsLimit"] == task.config.agentrun.pids_limit
        assert host["Memory"] == task.config.environment.memory_mb * 2**20
        assert not host["Binds"] and host["NetworkMode"] != "host" and host["PidMode"] == ""
    assert not docker_client.containers.list(all=True, filters={"label": f"agentrun.run_id={run_id}"})
    assert not docker_client.networks.list(names=[net])


def test_collect_hooks_and_artifacts_from_main_and_a_service(docker_client: Any, tmp_path: Path) -> None:
    """Harbor's collection: hooks in main and in a compose service, then every entry copied out
    (the publish folder first, a destination honoured, excludes, a link out of the artifact
    dropped, a missing source failed, an overlap skipped) with manifest.json."""
    import json

    from agentrun.harbor.collect import collect
    from agentrun.harbor.compose import compose_services, project_name
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import ArtifactSection, CollectSection

    task = load_task(str(PROBES / "compose-db"))
    verifier = task.config.verifier.model_copy(
        update={
            "collect": [
                CollectSection(command="mkdir -p /app/out && echo main-hook > /app/out/hook.txt"),
                CollectSection(command="echo db-hook > /tmp/db-state.txt", service="db"),
                CollectSection(command="exit 4"),  # best effort: logged, the rest goes on
            ]
        }
    )
    artifacts = [
        ArtifactSection(source="/app/out", destination="main-out", exclude=["*.tmp"]),
        ArtifactSection(source="/tmp/db-state.txt", service="db"),
        ArtifactSection(source="/app/missing.txt"),
        ArtifactSection(source="/etc/hostname", destination="main-out/hostname"),
    ]
    config = task.config.model_copy(update={"verifier": verifier, "artifacts": artifacts})
    task = task.model_copy(update={"config": config})
    image_map = parse_image_map([], [PROBES / "image-map.txt"])
    image = ensure_task_image(task, image_map=image_map)
    run_id, logs = "harbor-collect-test", []
    with (
        compose_services(task, image, run_id=run_id, network=False, image_map=image_map, on_log=print) as net,
        HarborSandbox.for_task(
            task, image, run_id=run_id, root=tmp_path / "sandbox", network=net or False, client=docker_client
        ) as box,
    ):
        box.exec(
            "mkdir -p /app/out /logs/artifacts && echo keep > /app/out/a.txt && echo x > /app/out/b.tmp "
            "&& ln -s /etc/shadow /app/out/escape && echo published > /logs/artifacts/note.txt"
        )
        manifest = collect(task, box, tmp_path / "artifacts", project=project_name(run_id), log=logs.append)
    out = tmp_path / "artifacts"
    status = {(e["source"], e["status"]) for e in manifest}
    assert manifest[0]["source"] == "/logs/artifacts"
    assert status == {
        ("/logs/artifacts", "ok"),
        ("/app/out", "ok"),
        ("/app/missing.txt", "failed"),
        ("/etc/hostname", "skipped"),  # main-out/hostname lies inside main-out, claimed first
        ("/tmp/db-state.txt", "ok"),
    }
    assert (out / "logs" / "artifacts" / "note.txt").read_text() == "published\n"
    assert sorted(p.name for p in (out / "main-out").iterdir()) == ["a.txt", "hook.txt"]
    assert (out / "tmp" / "db-state.txt").read_text() == "db-hook\n"
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert any("exited 4" in line for line in logs), logs


def test_an_earlier_steps_verifier_leaves_the_agent_container_running(
    solve_only: Any, tmp_path: Path, docker_client: Any
) -> None:
    """A multi-step task's step before the last: graded in a fresh container from a snapshot
    (what the agent left running does not reach it), the agent's own container goes on."""
    task, image = solve_only
    box = _start(task, image, tmp_path, docker_client, "harbor-step-verify-test")
    try:
        box.exec("nohup sh -c 'sleep 1000' >/dev/null 2>&1 & echo hi > /app/kept.txt")
        first = verify(
            task, box, run_id="harbor-step-verify-test", root=tmp_path / "v1", network=False, last=False
        )
        assert first.rewards is not None and first.rewards.main == 0.0
        alive = box.exec(
            "cat /app/kept.txt; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
            " | grep -q '^sleep 1000' && echo running"
        )
        assert alive.output.split() == ["hi", "running"]
        box.exec("echo 'Hello, world!' > /app/hello.txt")
        second = verify(task, box, run_id="harbor-step-verify-test", root=tmp_path / "v2", network=False)
    finally:
        box.close()
    assert second.rewards is not None and second.rewards.main == 1.0, second
    assert not docker_client.containers.list(
        all=True, filters={"label": "agentrun.run_id=harbor-step-verify-test"}
    )


def test_a_steps_agent_user_applies_to_exec_and_tools_then_the_tasks_again(
    solve_only: Any, tmp_path: Path, docker_client: Any
) -> None:
    """``[steps.agent] user``: the step's setup.sh, oracle and tool calls run as that user."""
    from agentrun.messages import ParsedCall

    task, image = solve_only
    with _start(task, image, tmp_path, docker_client, "harbor-step-user-test") as box:
        with box.as_user("nobody"):
            assert box.exec("id -un").output.strip() == "nobody"
            tool = box.call(ParsedCall(id="c1", name="run_shell", arguments={"command": "id -un"}))
            assert "nobody" in tool.output, tool.output
        assert box.exec("id -un").output.strip() == "root"
        tool = box.call(ParsedCall(id="c2", name="run_shell", arguments={"command": "id -un"}))
        assert "root" in tool.output and "nobody" not in tool.output, tool.output


def test_a_call_that_kills_the_runtime_is_not_run_again(
    solve_only: Any, tmp_path: Path, docker_client: Any
) -> None:
    """The runtime dies once it has the request: the call fails, is not sent to a fresh runtime
    (it ran once: one line in the file), and the next call gets a fresh runtime."""
    from agentrun.messages import ParsedCall

    task, image = solve_only
    with _start(task, image, tmp_path, docker_client, "harbor-no-resend-test") as box:
        command = "echo ran >> /tmp/runs; kill -9 $PPID; sleep 5"  # $PPID: the tool runtime
        died = box.call(ParsedCall(id="c1", name="run_shell", arguments={"command": command}))
        after = box.call(ParsedCall(id="c2", name="run_shell", arguments={"command": "cat /tmp/runs"}))
        assert after.ok and after.output.count("ran") == 1, after.output
        assert died.error == "runtime" and "not run again" in died.output, died.output


def test_hostile_arguments_are_tool_errors_not_crashes(
    solve_only: Any, tmp_path: Path, docker_client: Any
) -> None:
    """What a model sent reaches the harbor sandbox bounded too (``sandbox/arguments.py``): a
    timeout of 1e308 is clamped, arguments nested past ``MAX_DEPTH`` are refused, and the box still works."""
    from agentrun.messages import ParsedCall

    deep: list[object] = []
    for _ in range(40):  # a ParsedCall cannot even hold 50,000 (its validator recurses)
        deep = [deep]
    task, image = solve_only
    with _start(task, image, tmp_path, docker_client, "harbor-bounds-test") as box:
        huge = box.call(
            ParsedCall(id="c1", name="run_shell", arguments={"command": "echo ok", "timeout": 1e308})
        )
        assert huge.ok and "ok" in huge.output, huge.output
        nested = box.call(ParsedCall(id="c2", name="write_file", arguments={"path": "a", "content": deep}))
        assert nested.error == "validation" and "nested" in nested.output, nested.output
        assert box.call(ParsedCall(id="c3", name="run_shell", arguments={"command": "echo fine"})).ok
