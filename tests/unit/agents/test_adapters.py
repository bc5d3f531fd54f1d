"""The agent adapters: a step written in an agent's own tools does what agentrun's tool would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentrun import lines
from agentrun.agents import AGENTS, AgentEndpoint, AgentOutcome, get_agent
from agentrun.agents.base import edit_command, write_command
from agentrun.agents.mini_swe_agent import SUBMIT, TRAJECTORY
from agentrun.errors import UserError
from agentrun.replay import Script, ScriptCall, ScriptTurn

TEXTS = [
    "print('hello')\n",
    "no newline at the end",
    "",
    "AGENTRUN_EOF\nthe marker itself, $HOME, `date`, \\n and a tab\t\n",
    "ünïcode ✓\n\n\n",
]


def bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("text", TEXTS)
def test_a_file_written_through_the_shell_is_byte_exact(text: str, tmp_path: Path) -> None:
    assert bash(write_command("sub/dir/f.txt", text), tmp_path).returncode == 0
    assert (tmp_path / "sub/dir/f.txt").read_bytes() == text.encode()


def test_an_edit_through_the_shell_replaces_the_one_occurrence(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\nb = 'x'\n")
    assert bash(edit_command("m.py", "b = 'x'\n", "b = 'x'\nc = \"$y\"\n"), tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text() == "a = 1\nb = 'x'\nc = \"$y\"\n"
    missing = bash(edit_command("m.py", "zzz", "q"), tmp_path)
    assert missing.returncode != 0 and "0 times" in missing.stderr
    assert (tmp_path / "m.py").read_text() == "a = 1\nb = 'x'\nc = \"$y\"\n"


def script() -> Script:
    return Script(
        turns=[
            ScriptTurn(
                reasoning="look", tool_calls=[ScriptCall(name="list_files", arguments={"pattern": "**/*"})]
            ),
            ScriptTurn(
                tool_calls=[
                    ScriptCall(name="write_file", arguments={"path": "a.py", "content": "x = 1\n"}),
                    ScriptCall(
                        name="edit_file", arguments={"path": "a.py", "old": "x = 1\n", "new": "x = 2\n"}
                    ),
                ]
            ),
            ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": "python3 a.py"})]),
            ScriptTurn(content="Done: a.py sets x."),
        ]
    )


def test_mini_swe_agent_does_every_step_in_bash_and_submits(tmp_path: Path) -> None:
    rendered = get_agent("mini-swe-agent").render(script(), str(tmp_path))
    calls = [c for t in rendered.turns for c in t.tool_calls]
    assert {c.name for c in calls} == {"bash"} and len(rendered.turns) == 4
    assert calls[-1].arguments == {"command": SUBMIT} and rendered.turns[-1].content == "Done: a.py sets x."
    for c in calls[1:3]:
        assert isinstance(c.arguments, dict) and bash(c.arguments["command"], tmp_path).returncode == 0
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


def test_qwen_code_gets_absolute_paths_and_its_opening_turn() -> None:
    rendered = get_agent("qwen-code").render(script(), "/app")
    assert len(rendered.turns) == 5 and not rendered.turns[0].tool_calls  # its canned opening reply
    names = [[c.name for c in t.tool_calls] for t in rendered.turns[1:]]
    assert names == [["glob"], ["write_file", "edit"], ["run_shell_command"], []]
    write, edit = rendered.turns[2].tool_calls
    assert write.arguments == {"file_path": "/app/a.py", "content": "x = 1\n"}
    assert edit.arguments == {"file_path": "/app/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}


def test_the_endpoint_and_key_go_where_each_agent_reads_them() -> None:
    endpoint = AgentEndpoint(base_url="http://gw:8010/v1", model="m", api_key="sk-test")
    mini = get_agent("mini-swe-agent").launch("do it", endpoint, prefix="/opt/a", home="/h", workdir="/w")
    assert "model.model_kwargs.api_base=http://gw:8010/v1" in mini.argv and "openai/m" in mini.argv
    assert mini.env["OPENAI_API_KEY"] == "sk-test" and mini.env["MSWEA_CONFIGURED"] == "true"
    qwen = get_agent("qwen-code").launch("do it", endpoint, prefix="/opt/q", home="/h", workdir="/w")
    assert qwen.env["OPENAI_BASE_URL"] == "http://gw:8010/v1" and qwen.env["OPENAI_MODEL"] == "m"
    settings = json.loads(qwen.files[".qwen/settings.json"])
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["memory"]["enableManagedAutoMemory"] is False  # else a second request per run


def test_each_agent_reads_how_it_ended() -> None:
    mini = get_agent("mini-swe-agent")
    traj = {"info": {"exit_status": "RepeatedFormatError", "submission": ""}}
    assert mini.outcome("", {TRAJECTORY: json.dumps(traj)}).submitted is False
    traj = {"info": {"exit_status": "Submitted", "submission": "ok"}}
    assert mini.outcome("", {TRAJECTORY: json.dumps(traj)}).submitted is True
    assert mini.outcome("", {}).exit_status == "no trajectory"
    qwen = get_agent("qwen-code")
    events = [{"type": "system"}, {"type": "result", "subtype": "success", "is_error": False, "result": "hi"}]
    assert qwen.outcome(json.dumps(events), {}).final == "hi"
    assert qwen.outcome("[API Error: Connection error.]", {}).submitted is False
    # a refused request is said as its answer, with subtype "success" (the local model's 8K context)
    refused = "[API Error: 400 request (14764 tokens) exceeds the available context size (8192 tokens)]"
    events[-1]["result"] = refused
    said = qwen.outcome(json.dumps(events), {})
    assert said.submitted is False and said.exit_status == refused


def test_an_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(UserError, match="mini-swe-agent, opencode, qwen-code"):
        get_agent("claude")
    assert all(get_agent(name).name == name for name in AGENTS)


def test_the_agent_layer_installs_as_root_and_gives_the_image_its_user_back() -> None:
    from agentrun.agents.image import PREFIX, agent_image_tag, dockerfile

    mini = get_agent("mini-swe-agent")
    text = dockerfile(mini, "1000:1000")
    lines = text.splitlines()
    assert lines[1] == "FROM ${TASK_IMAGE}" and lines[2] == "USER root" and lines[-1] == "USER 1000:1000"
    assert f"mini-swe-agent=={mini.version}" in text and PREFIX in text
    assert "USER" not in dockerfile(mini, "").splitlines()[-1]  # root stays root
    tag = agent_image_tag(mini, "sha256:0123456789abcdef")
    assert tag.startswith("agentrun-agent-mini-swe-agent:2.4.6-0123456789ab-"), tag
    assert agent_image_tag(mini, "sha256:0123456789abcdef") == tag  # the same commands: the same layer


def test_an_edited_install_command_gets_a_layer_of_its_own() -> None:
    from agentrun.agents.image import agent_image_tag

    qwen = get_agent("qwen-code")
    tag = agent_image_tag(qwen, "sha256:0123456789abcdef")

    class Edited:  # the same agent and version, one install command changed
        def __getattr__(self, name: str) -> object:
            return getattr(qwen, name)

        def image_install_commands(self, prefix: str) -> list[str]:
            commands = list(getattr(qwen, "image_install_commands", qwen.install_commands)(prefix))
            return [*commands[:-1], commands[-1] + " --no-audit"]

    edited = agent_image_tag(Edited(), "sha256:0123456789abcdef")  # type: ignore[arg-type]
    assert edited != tag and edited.rsplit("-", 1)[0] == tag.rsplit("-", 1)[0], (tag, edited)


def test_the_run_figures_are_counted_from_the_gateway_records(tmp_path: Path) -> None:
    from agentrun.agents.figures import gateway_stats
    from agentrun.agents.sandboxed import _stop

    call = {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    rows = [
        {
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "cached_tokens": 4},
            "reply": {"tool_calls": [call, call]},
            "repairs": [{"kind": "text_tool_call"}],
            "attempts": [],
        },
        {
            "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23, "cached_tokens": None},
            "reply": {"tool_calls": []},
            "repairs": [],
            "attempts": [{"cause": "reset"}],
        },
        {
            "usage": {},
            "reply": None,
            "upstream_message": {"tool_calls": [{"name": "bash", "arguments": "{}"}]},
        },
    ]
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stats = gateway_stats(tmp_path / "requests.jsonl")
    assert (stats.requests, stats.turns, stats.tool_calls, stats.retries) == (
        3,
        3,
        3,
        1,
    )  # direct: the upstream's
    assert stats.usage.prompt_tokens == 30 and stats.usage.cached_tokens == 4
    assert dict(stats.repairs) == {"text_tool_call": 1}
    assert gateway_stats(tmp_path / "missing.jsonl").requests == 0
    done = AgentOutcome(submitted=True, exit_status="Submitted")
    gave_up = AgentOutcome(submitted=False, exit_status="RepeatedFormatError")
    assert _stop(done, 0, False, "")[0] == "final_answer"
    assert _stop(gave_up, 0, False, "") == (
        "agent_stopped",
        "the agent ended without finishing: RepeatedFormatError",
    )
    assert _stop(gave_up, 124, False, "")[0] == "max_wall_time"
    assert _stop(gave_up, 1, False, "boom")[0] == "agent_crashed"


def test_a_crash_is_said_in_whole_lines_with_the_line_that_names_it() -> None:
    from agentrun.agents.sandboxed import crash_tail

    trace = "".join(f" {i}: 0x{i:07x}  [/opt/agentrun-agent/bin/node]\n" for i in range(40))
    node = (
        "<--- JS stacktrace --->\n\nFATAL ERROR: Reached heap limit - JavaScript heap out of memory\n" + trace
    )
    said = crash_tail(node)
    first, *rest = lines.split_lines(said)
    assert (
        first.startswith("FATAL ERROR:")
        and rest[0] == "..."
        and rest[-1] == trace.rstrip("\n").rsplit("\n", 1)[-1]
    )
    assert all(row in trace for row in rest[1:]) and len(said) < 800  # whole lines of the trace's end
    python = 'warming up\nTraceback (most recent call last):\n  File "x", line 1\nValueError: bad\n'
    assert crash_tail(python) == python.strip()  # short: all of it, as it was
