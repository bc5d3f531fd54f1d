"""Harbor task.toml fields (honoured or named), agentrun settings under [metadata.agentrun],
profiles, --image-map rewriting and Harbor's env templates."""

import tomllib
from pathlib import Path

import pytest

from agentrun.errors import TaskError, UserError
from agentrun.harbor.fields import unsupported_fields
from agentrun.harbor.imagemap import parse_image_map, rewrite_dockerfile
from agentrun.harbor.sandbox import resolve_env
from agentrun.tasks import load_task

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


def make_task(root: Path, toml: str, *, dockerfile: bool = True) -> Path:
    task = root / "demo"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "instruction.md").write_text("Do it.")
    if dockerfile:
        (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "tests" / "test.sh").write_text("true\n")
    (task / "task.toml").write_text(toml)
    return task


def test_agentrun_settings_under_metadata_and_our_tasks_are_strict():
    task = load_task("todo-cli")
    assert task.config.agentrun.own_tests_command
    assert task.config.profile == "strict"


def test_a_foreign_task_gets_the_harbor_profile(tmp_path):
    task = load_task(str(make_task(tmp_path, 'version = "1.0"\n')))
    assert task.config.profile == "harbor"
    assert task.config.environment.network is False  # Harbor defaults to public; agentrun does not


def test_settings_in_both_places_are_refused(tmp_path):
    toml = "[agentrun]\nmax_turns = 3\n[metadata.agentrun]\nmax_turns = 4\n"
    with pytest.raises(TaskError, match="both"):
        load_task(str(make_task(tmp_path, toml)))


def test_network_mode_and_legacy_allow_internet(tmp_path):
    for toml, expected in [
        ('[environment]\nnetwork_mode = "public"\n', True),
        ('[environment]\nnetwork_mode = "no-network"\nallow_internet = true\n', False),
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n', False),
        ("[environment]\nallow_internet = true\n", True),
    ]:
        folder = make_task(tmp_path / str(abs(hash(toml))), toml)
        assert load_task(str(folder)).config.environment.network is expected, toml


def test_terminal_bench_memory_string(tmp_path):
    task = load_task(str(make_task(tmp_path, '[environment]\nmemory = "2G"\nstorage = "10G"\n')))
    assert task.config.environment.memory_mb == 2048


def test_compose_file_instead_of_a_dockerfile():
    task = load_task(str(PROBES / "compose-only"))
    assert task.compose_file is not None and not (task.environment_dir / "Dockerfile").exists()


def test_docker_image_instead_of_a_dockerfile(tmp_path):
    folder = make_task(tmp_path, '[environment]\ndocker_image = "busybox:1"\n', dockerfile=False)
    assert load_task(str(folder)).config.environment.docker_image == "busybox:1"
    (folder / "task.toml").write_text('version = "1.0"\n')
    with pytest.raises(TaskError, match="Dockerfile"):
        load_task(str(folder))


def test_every_field_is_honoured_or_named_once():
    raw = tomllib.loads(
        """
        version = "1.0"
        steps = [{name = "one", healthcheck = {command = "true"}, agent = {user = "x", network_mode = "public"}}]
        surprise = 1
        [task]
        name = "org/demo"
        [agent]
        timeout_sec = 10.0
        user = "agent"
        [verifier]
        environment_mode = "separate"
        [environment]
        cpus = 1
        gpus = 1
        storage_mb = 100
        network_mode = "allowlist"
        allowed_hosts = ["example.com"]
        [metadata.agentrun]
        max_turns = 2
        """
    )
    notes = unsupported_fields(raw)
    named = sorted(n.split(":")[0] for n in notes)
    assert named == sorted(
        [
            "surprise",
            "task",
            "environment.gpus",
            "environment.storage_mb",
            "environment.network_mode",
            "environment.allowed_hosts",
        ]
    )
    assert any("not a Harbor 0.25 task.toml field" in n for n in notes if n.startswith("surprise"))


def test_probe_tasks_name_only_disk_quotas_as_unsupported():
    for folder in sorted(p for p in PROBES.iterdir() if (p / "task.toml").is_file()):
        notes = unsupported_fields(tomllib.loads((folder / "task.toml").read_text()))
        assert all(n.startswith("environment.storage:") for n in notes), (folder.name, notes)


def test_image_map_rewrites_from_lines_only():
    text = (
        "# FROM python:3.12-slim in a comment stays\n"
        "FROM --platform=linux/amd64 docker.io/library/python:3.12-slim AS build\n"
        "RUN echo FROM python:3.12-slim\n"
        "from ubuntu:24.04\n"
        "FROM build\n"
    )
    mapping = parse_image_map(
        ["python:3.12-slim=agentrun-sandbox:base", "ubuntu:24.04=agentrun-base:bookworm"]
    )
    out, done = rewrite_dockerfile(text, mapping)
    assert out.splitlines() == [
        "# FROM python:3.12-slim in a comment stays",
        "FROM --platform=linux/amd64 agentrun-sandbox:base AS build",
        "RUN echo FROM python:3.12-slim",
        "from agentrun-base:bookworm",
        "FROM build",
    ]
    assert [(d.original, d.replacement) for d in done] == [
        ("docker.io/library/python:3.12-slim", "agentrun-sandbox:base"),
        ("ubuntu:24.04", "agentrun-base:bookworm"),
    ]


def test_image_map_file_and_bad_entries(tmp_path):
    mapping_file = tmp_path / "map.txt"
    mapping_file.write_text("# comment\n\npython:3.12-slim=agentrun-sandbox:base\n")
    assert parse_image_map([], [mapping_file]) == {"python:3.12-slim": "agentrun-sandbox:base"}
    with pytest.raises(UserError, match="FROM=TO"):
        parse_image_map(["python:3.12-slim"])
    with pytest.raises(UserError, match=r"missing\.txt"):
        parse_image_map([], [tmp_path / "missing.txt"])


def test_env_templates_resolve_like_harbor():
    values = {"A": "literal", "B": "${HOME_X}", "C": "${UNSET_X:-dflt}", "D": "x${HOME_X}"}
    assert resolve_env(values, {"HOME_X": "/h"}) == {
        "A": "literal",
        "B": "/h",
        "C": "dflt",
        "D": "x${HOME_X}",
    }
    with pytest.raises(TaskError, match="UNSET_Y"):
        resolve_env({"E": "${UNSET_Y}"}, {})


def test_find_tasks_takes_tasks_and_datasets_once_each(tmp_path):
    from agentrun.batch import find_tasks

    tasks = find_tasks([PROBES, PROBES / "ctrf"])
    names = [t.name for t in tasks]
    assert names == sorted(names) and names[:5] == [
        "agent-network",
        "app-result",
        "compose-db",
        "compose-main",
        "compose-only",
    ]
    assert (
        len(tasks)
        == len({t.name for t in tasks})
        == len([p for p in PROBES.iterdir() if (p / "task.toml").is_file()])
    )
    with pytest.raises(TaskError, match="neither a task"):
        find_tasks([tmp_path])
    with pytest.raises(TaskError, match="no such folder"):
        find_tasks([tmp_path / "missing"])
