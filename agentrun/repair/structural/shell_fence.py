"""A reply whose one code block is a shell command, when the only tool offered is a shell.

Agents that act through a shell only (mini-swe-agent, SWE-agent) ask the model for its command in a
fenced block (```bash, or their own tag such as ```mswea_bash_command), and small models do the same
when a shell tool is offered and they forget the call. That block is the call when everything says
so: the only tool the request offers is named as a shell (``bash``, ``shell``, ``run_shell``, ...),
the reply holds exactly one fence, in a shell's language, and the fence is closed. Two blocks, a
fence of another language beside it, or one left open are not a call (mini-swe-agent calls them a
format error); the command goes to the tool as its one input. Where other tools are offered (an
editor's agent, agentrun's own loop) a shell block is an answer shown to the user and stays text.
"""

from __future__ import annotations

from agentrun.repair.candidates import Found, LoneInput
from agentrun.repair.names import normalize_name
from agentrun.repair.structural.names import Names, code_spans

__all__ = ["extract_shell_fence"]

SHELL_TOOLS = frozenset(
    {
        "bash",
        "sh",
        "shell",
        "run_shell",
        "run_bash",
        "execute_bash",
        "bash_command",
        "shell_command",
        "run_command",
        "execute_command",
        "run_terminal_cmd",
        "terminal",
    }
)
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh"})


def _shell_language(lang: str) -> bool:
    return lang in _SHELL_LANGS or "bash" in lang


def extract_shell_fence(text: str, known: Names) -> list[Found]:
    """The call the module docstring describes, or nothing; never raises."""
    if known is None or "```" not in text:
        return []
    shells = [k for k in known if normalize_name(k) in SHELL_TOOLS]
    spans = code_spans(text)
    if len(known) != 1 or len(shells) != 1 or len(spans) != 1:
        return []
    start, end, lang = spans[0]
    fence = text[start:end]
    if not _shell_language(lang) or not fence.rstrip().endswith("```") or fence.count("```") != 2:
        return []
    body = fence.split("\n", 1)[1].rstrip().removesuffix("```").strip("\n")
    return [Found(shells[0], LoneInput(body), start, end, "shell_fence")] if body.strip() else []
