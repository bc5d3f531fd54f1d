"""mini-swe-agent (PyPI), in its own venv: one ``bash`` tool, a finish by ``echo`` of a marker.

Non-interactive (``-y --exit-immediately``), offline: ``MSWEA_CONFIGURED`` skips its setup
wizard, ``MSWEA_COST_TRACKING=ignore_errors`` its cost check of an unknown model (else a
RuntimeError), ``LITELLM_LOCAL_MODEL_COST_MAP`` LiteLLM's cost-map download. Its rc is 0
whether it submitted or gave up (3 replies without a call: ``RepeatedFormatError``), so the
ending is read from the trajectory's ``info.exit_status``. A reply without a call is not kept
in its history: it sends the same history again with a format error appended.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agentrun.agents.base import (
    AgentEndpoint,
    AgentOutcome,
    Launch,
    arguments,
    edit_command,
    render_turns,
    write_command,
)
from agentrun.replay.script import Script, ScriptCall, ScriptTurn

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
TRAJECTORY = "mini-trajectory.json"
RETURNCODE = re.compile(r'^\s*\{\s*"returncode":\s*(-?\d+)')  # its observation_template's opening


@dataclass(frozen=True)
class MiniSweAgent:
    name: str = "mini-swe-agent"
    version: str = "2.4.6"
    package: str = "pypi:mini-swe-agent"
    result_files: tuple[str, ...] = (TRAJECTORY,)
    step_limit: int = 50

    def install_commands(self, prefix: str) -> list[str]:
        return [
            f"python3 -m venv {prefix}",
            f"{prefix}/bin/pip install -q --no-cache-dir mini-swe-agent=={self.version}",
            f"{prefix}/bin/mini --help > /dev/null",
        ]

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        argv = [
            f"{prefix}/bin/mini",
            "-y",
            "--exit-immediately",
            "-m",
            f"openai/{endpoint.model}",
            "-t",
            instruction,
            "-c",
            "mini.yaml",
            "-c",
            f"model.model_kwargs.api_base={endpoint.base_url}",
            "-c",
            f"agent.step_limit={self.step_limit}",
            "-o",
            posixpath.join(home, TRAJECTORY),
        ]
        env = {
            "HOME": home,
            "OPENAI_API_KEY": endpoint.api_key,
            "MSWEA_CONFIGURED": "true",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
        }
        return Launch(argv=argv, env=env, files={}, home=home, workdir=workdir)

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        try:
            info = json.loads(files.get(TRAJECTORY) or "{}").get("info") or {}
        except ValueError:
            info = {}
        status = str(info.get("exit_status") or "no trajectory")
        return AgentOutcome(
            submitted=status == "Submitted", exit_status=status, final=str(info.get("submission") or "")
        )

    def tool_failed(self, text: str) -> bool:
        """A command's result (``{"returncode": N, "output": ...}``) failed when N is not 0."""
        found = RETURNCODE.match(text)
        return found is not None and found.group(1) != "0"

    def render(self, script: Script, workdir: str) -> Script:
        """Every step through ``bash`` (a file written through a heredoc, an edit by a short
        Python program); a final answer becomes the submit command, its text kept."""

        def call(c: ScriptCall) -> ScriptCall:
            a = arguments(c)
            if c.name == "write_file":
                command = write_command(str(a["path"]), str(a["content"]))
            elif c.name == "edit_file":
                command = edit_command(str(a["path"]), str(a["old"]), str(a["new"]))
            elif c.name == "list_files":
                command = "find . -type f -not -path './.git/*' | sort | head -200"
            else:  # run_shell, and anything else a script may hold, as a command
                command = str(a.get("command", c.arguments_text()))
            return ScriptCall(name="bash", arguments={"command": command})

        def final(turn: ScriptTurn) -> ScriptTurn:
            return turn.model_copy(
                update={"tool_calls": [ScriptCall(name="bash", arguments={"command": SUBMIT})]}
            )

        return render_turns(script, call, final)


ADAPTER = MiniSweAgent()
