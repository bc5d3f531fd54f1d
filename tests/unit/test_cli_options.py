"""The command line's options land in the fields a run reads: ``agentrun task`` and
``agentrun compare`` through the real typer app (the run itself replaced by a recorder), and
the endpoint checks ``agentrun load`` shares with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentrun.cli import app
from agentrun.commands import load as load_cmd
from agentrun.commands import run as run_cmd
from agentrun.config import RunConfig
from agentrun.errors import UserError

SHARED = [
    "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key", "sk-given",
    "--seed", "7", "--fault-mix", "qwen", "--fault-source", "real",
    "--temperature", "0.3", "--max-turns", "4", "--max-wall", "90", "--base-image", "img:1",
    "--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-protocol", "grpc",
    "--docker-host", "tcp://a:2375", "--docker-host", "tcp://b:2375", "--no-report",
]  # fmt: skip
SHARED_FIELDS = {
    "task": "todo-cli",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "api_key": "sk-given",
    "seed": 7,
    "faults": 0.0,
    "fault_mix": "qwen",
    "fault_source": "real",
    "temperature": 0.3,
    "max_turns": 4,
    "max_wall_s": 90.0,
    "base_image": "img:1",
    "otlp_endpoint": "http://127.0.0.1:4318",
    "otlp_protocol": "grpc",
    "docker_hosts": ["tcp://a:2375", "tcp://b:2375"],
}


def _fields(config: RunConfig, names: Any) -> dict[str, Any]:
    return {name: getattr(config, name) for name in names}


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[tuple[RunConfig, dict[str, Any]]]:
    calls: list[tuple[RunConfig, dict[str, Any]]] = []
    monkeypatch.setattr(run_cmd, "_run_one", lambda config, **kw: calls.append((config, kw)))
    monkeypatch.setattr(run_cmd, "_compare", lambda base, **kw: calls.append((base, kw)))
    return calls


def test_task_options_reach_the_run_config(ran: list[Any], tmp_path: Path) -> None:
    extra = [
        "--mode", "direct", "--agent", "nop", "--results", str(tmp_path), "--server-metrics",
        "http://127.0.0.1:9/metrics", "--capture-content", "--replay-ttft", "0.5",
        "--replay-token-delay", "0.01", "--request-timeout", "30", "--image-map", "python:3=py:3",
    ]  # fmt: skip
    proc = CliRunner().invoke(app, ["task", "todo-cli", *SHARED, *extra])
    assert proc.exit_code == 0, proc.output
    ((config, kw),) = ran
    assert _fields(config, SHARED_FIELDS) == SHARED_FIELDS and kw == {"report": False}
    assert _fields(config, ["mode", "agent", "results_dir", "server_metrics", "capture_content"]) == {
        "mode": "direct",
        "agent": "nop",
        "results_dir": tmp_path,
        "server_metrics": "http://127.0.0.1:9/metrics",
        "capture_content": True,
    }
    assert (config.replay_ttft, config.replay_token_delay, config.request_timeout) == (0.5, 0.01, 30.0)
    assert config.image_map == {"python:3": "py:3"}


def test_compare_options_reach_the_base_config(ran: list[Any], tmp_path: Path) -> None:
    args = ["compare", "todo-cli", *SHARED, "--results", str(tmp_path), "--trials", "2", "--kv-budget", "9"]
    proc = CliRunner().invoke(app, args)
    assert proc.exit_code == 0, proc.output
    ((base, kw),) = ran
    assert _fields(base, SHARED_FIELDS) == SHARED_FIELDS and base.results_dir == tmp_path
    assert kw == {"trials": 2, "concurrency": 1, "kv_budget": 9, "report": False, "runner": None}
    assert (base.mode, base.agent, base.server_metrics, base.capture_content) == (
        "corrected",
        "model",
        None,
        False,
    )


def test_compare_on_the_replay_model_injects_faults_unless_told(ran: list[Any], tmp_path: Path) -> None:
    from agentrun.compare import DEFAULT_REPLAY_FAULTS

    for given, expected in ((None, DEFAULT_REPLAY_FAULTS), ("0", 0.0)):
        faults = [] if given is None else ["--faults", given]
        proc = CliRunner().invoke(app, ["compare", "todo-cli", "--results", str(tmp_path), *faults])
        assert proc.exit_code == 0, proc.output
        assert ran.pop()[0].faults == expected


def test_defaults_when_no_option_is_given(
    ran: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTRUN_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    proc = CliRunner().invoke(app, ["task", "todo-cli", "--results", str(tmp_path)])
    assert proc.exit_code == 0, proc.output
    config = ran.pop()[0]
    assert (config.base_url, config.model, config.api_key, config.docker_hosts) == (
        None,
        None,
        "sk-from-env",
        [],
    )
    assert (config.max_wall_s, config.max_turns, config.image_map, config.faults) == (None, None, {}, 0.0)


@pytest.mark.parametrize("command", ["task", "compare"])
def test_a_base_url_without_a_model_is_refused(ran: list[Any], command: str) -> None:
    proc = CliRunner().invoke(app, [command, "todo-cli", "--base-url", "http://127.0.0.1:9/v1"])
    # the app raises; `agentrun`'s entry point turns a UserError into one line and exit 2
    assert isinstance(proc.exception, UserError) and ran == []
    assert "--base-url needs --model" in str(proc.exception)


@pytest.mark.parametrize("command", ["task", "compare"])
def test_faults_reach_the_replay_model_and_are_refused_for_a_server(
    ran: list[Any], command: str, tmp_path: Path
) -> None:
    proc = CliRunner().invoke(app, [command, "todo-cli", "--faults", "0.25", "--results", str(tmp_path)])
    assert proc.exit_code == 0, proc.output
    assert ran.pop()[0].faults == 0.25
    for endpoint in (["--base-url", "http://127.0.0.1:9/v1", "--model", "m"], ["--model", "local"]):
        proc = CliRunner().invoke(app, [command, "todo-cli", "--faults", "0.25", *endpoint])
        assert isinstance(proc.exception, UserError) and ran == []
        assert "replay model only" in str(proc.exception)


@pytest.mark.parametrize(
    ("endpoint", "ok"),
    [
        ("http://127.0.0.1:4318", True),
        ("https://collector.example:443/v1/traces", True),
        ("localhost:4317", True),  # gRPC exporters take HOST:PORT
        ("notaurl", False),
        ("ftp://collector:4317", False),
        ("http://", False),
        ("http://h:99999", False),
        ("local host:4317", False),
    ],
)
def test_otlp_endpoint_must_be_a_collector_url(
    ran: list[Any], endpoint: str, ok: bool, tmp_path: Path
) -> None:
    for command in ("task", "compare"):
        args = [command, "todo-cli", "--otlp-endpoint", endpoint, "--results", str(tmp_path)]
        proc = CliRunner().invoke(app, args)
        assert (proc.exit_code == 0) is ok, proc.output
        assert ("--otlp-endpoint" in proc.output) is not ok
        if ok:
            assert ran.pop()[0].otlp_endpoint == endpoint


def test_load_targets_share_the_endpoint_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-load-env")
    with pytest.raises(UserError, match="--base-url needs --model"):
        load_cmd._target("http://127.0.0.1:9/v1", None, None)
    with pytest.raises(UserError, match="only --model local starts a server"):
        load_cmd._target(None, "m", None)
    target = load_cmd._target("http://127.0.0.1:9/v1", "m", None, replay_ttft=0.1)
    assert (target.base_url, target.model, target.api_key, target.replay_ttft) == (
        "http://127.0.0.1:9/v1",
        "m",
        "sk-load-env",
        0.1,
    )
