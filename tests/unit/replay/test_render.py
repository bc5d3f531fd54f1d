"""The replay model writes its scripted steps in the tools a request offers, read off their schemas."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import openai
import pytest

from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.replay.render import render_call, render_turn
from agentrun.toolset import ToolSpec, builtin_specs


def tool(name: str, required: list[str], **properties: str) -> ToolSpec:
    """A tool as an agent offers it: ``properties`` name -> JSON type."""
    props: dict[str, Any] = {p: {"type": t} for p, t in properties.items()}
    return ToolSpec(name=name, parameters={"type": "object", "properties": props, "required": required})


# opencode 1.18.33's own schemas (their types and required lists; descriptions left out)
OPENCODE = [
    tool("bash", ["command"], command="string", timeout="integer", workdir="string"),
    tool(
        "edit",
        ["filePath", "oldString", "newString"],
        filePath="string",
        oldString="string",
        newString="string",
        replaceAll="boolean",
    ),
    tool("grep", ["pattern"], pattern="string", path="string", include="string"),
    tool("glob", ["pattern"], pattern="string", path="string"),
    tool("read", ["filePath"], filePath="string", offset="integer", limit="integer"),
    tool(
        "task",
        ["description", "prompt", "subagent_type"],
        description="string",
        prompt="string",
        subagent_type="string",
    ),
    tool("write", ["content", "filePath"], content="string", filePath="string"),
]
SHELL_ONLY = [tool("bash", ["command"], command="string")]  # mini-swe-agent's one tool
CODEX = [tool("exec_command", ["cmd"], cmd="string", workdir="string", yield_time_ms="number")]

WRITE = ScriptCall(name="write_file", arguments={"path": "pkg/a.py", "content": "x = 1\n"})
EDIT = ScriptCall(name="edit_file", arguments={"path": "pkg/a.py", "old": "x = 1\n", "new": "x = 2\n"})
SHELL = ScriptCall(name="run_shell", arguments={"command": "python3 pkg/a.py", "timeout": 30})
LIST = ScriptCall(name="list_files", arguments={"pattern": "**/*"})


def test_opencode_gets_its_own_file_tools_with_absolute_paths() -> None:
    got = [render_call(c, OPENCODE, "/workspace") for c in (WRITE, EDIT, SHELL, LIST)]
    assert [(c.name, c.arguments) for c in got] == [
        ("write", {"content": "x = 1\n", "filePath": "/workspace/pkg/a.py"}),
        ("edit", {"filePath": "/workspace/pkg/a.py", "oldString": "x = 1\n", "newString": "x = 2\n"}),
        ("bash", {"command": "python3 pkg/a.py"}),  # seconds are not its milliseconds: no timeout
        ("glob", {"pattern": "**/*"}),  # grep takes a pattern too, but it is a search
    ]


def test_a_required_parameter_it_can_give_is_given_and_one_it_cannot_rules_the_tool_out() -> None:
    qwen_shell = tool(
        "run_shell_command", ["command", "is_background", "description"],
        command="string", is_background="boolean", description="string",
    )  # fmt: skip
    got = render_call(SHELL, [qwen_shell], "/app")
    assert got.name == "run_shell_command" and isinstance(got.arguments, dict)
    assert got.arguments["command"] == "python3 pkg/a.py" and got.arguments["is_background"] is False
    assert isinstance(got.arguments["description"], str) and got.arguments["description"]
    picky = tool(
        "write", ["content", "filePath", "encoding"], content="string", filePath="string", encoding="string"
    )
    assert render_call(WRITE, [picky, *SHELL_ONLY]).name == "bash"  # through the shell instead


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("tools", [SHELL_ONLY, CODEX], ids=["bash", "exec_command"])
def test_with_only_a_shell_every_step_runs_there_and_does_what_ours_would(
    tools: list[ToolSpec], tmp_path: Path
) -> None:
    for step in (WRITE, EDIT, SHELL, LIST):
        call = render_call(step, tools, "/workspace")
        assert call.name == tools[0].name and isinstance(call.arguments, dict)
        done = run(next(iter(call.arguments.values())), tmp_path)  # relative paths: run in the workdir
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "pkg/a.py").read_text() == "x = 2\n"
    assert "./pkg/a.py" in done.stdout  # the listing


def test_a_step_is_played_as_written_when_its_own_tool_or_nothing_fitting_is_offered() -> None:
    for step in (WRITE, EDIT, SHELL, LIST):
        assert render_call(step, builtin_specs(), "/w") == step
        assert render_call(step, [tool("webfetch", ["url"], url="string")], "/w") == step
    turn = ScriptTurn(content="done")
    assert render_turn(turn, OPENCODE, "/w") is turn and render_turn(
        ScriptTurn(tool_calls=[WRITE]), None
    ) == (ScriptTurn(tool_calls=[WRITE]))
    assert render_call(ScriptCall(name="write_file", arguments="{broken"), OPENCODE).arguments == "{broken"


def test_the_server_plays_the_step_in_the_requests_tools() -> None:
    script = Script(turns=[ScriptTurn(tool_calls=[WRITE])], workdir="/workspace")
    with ReplayServer(script, ttft=0.0, token_delay=0.0) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30)
        asked = [t.to_openai() for t in OPENCODE]
        reply = client.chat.completions.create(
            model="replay",
            messages=[{"role": "user", "content": "go"}],
            tools=asked,  # type: ignore[arg-type]
        )
        plain = client.chat.completions.create(model="replay", messages=[{"role": "user", "content": "go"}])
    (call,) = reply.choices[0].message.tool_calls or []
    assert call.function.name == "write"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"content": "x = 1\n", "filePath": "/workspace/pkg/a.py"}  # type: ignore[union-attr]
    (as_written,) = plain.choices[0].message.tool_calls or []
    assert as_written.function.name == "write_file"  # type: ignore[union-attr]
