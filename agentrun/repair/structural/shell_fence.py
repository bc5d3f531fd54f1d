"""A reply whose one code block is tagged as a shell command, when the only tool offered is a shell.

mini-swe-agent asks the model for its action in a fence of its own tag (```mswea_bash_command): a tag
that names a command, not a language, marks a call as ```tool_code does. It is the call when
everything says so: the only tool the request offers is named as a shell (``bash``, ``shell``,
``run_shell``, ...), the reply holds exactly one fence, its tag names a shell command
(``mswea_bash_command``, ``bash_command``, ``shell_cmd``: a shell's name and more), and the fence is
closed; the command goes to the tool as its one input. A plain ```bash block is code shown to the
user ("You can run this command manually: ```bash ..", vLLM's RWKV tests, which measured the looser
rule of set 14 at two false calls), and stays text, as two blocks or an open fence do.
"""

from __future__ import annotations

from agentrun.repair.candidates import Found, LoneInput, OpenEndedInput
from agentrun.repair.names import normalize_name
from agentrun.repair.structural.names import Names, code_spans

__all__ = ["extract_shell_fence", "extract_tool_fence"]

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
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session"})


def _command_tag(lang: str) -> bool:
    """A fence tag that names a shell command, not a language: ``mswea_bash_command``."""
    return lang not in _SHELL_LANGS and any(word in lang for word in ("bash", "shell"))


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
    if not _command_tag(lang) or not fence.rstrip().endswith("```") or fence.count("```") != 2:
        return []
    body = _fence_body(fence, closed=True)
    return [Found(shells[0], LoneInput(body), start, end, "shell_fence")] if body.strip() else []


def _fence_body(fence: str, *, closed: bool) -> str:
    """The lines of a fence after its opening line, without its closing ``` (if it came)."""
    body = fence.split("\n", 1)[1] if "\n" in fence else ""
    return body.rstrip().removesuffix("```").strip("\n") if closed else body.strip("\n")


# tags that name a language or a data format: a fence so tagged is code shown, whatever tool shares the name
_LANGS = frozenset(
    {"python", "py", "bash", "sh", "shell", "zsh", "js", "javascript", "ts", "typescript", "json", "yaml",
     "sql", "html", "xml", "text", "txt", "markdown", "md", "console", "diff", "c", "cpp", "go", "rust",
     "java", "ruby", "php", "swift", "kotlin", "r", "lua", "perl", "toml", "ini", "csv"}
)  # fmt: skip


def _tool_for_tag(lang: str, known: frozenset[str]) -> str | None:
    """The one requested tool a fence tag names: the tool's name, or its last part (``execute`` for
    goose's ``code_execution__execute``)."""
    tag = normalize_name(lang)
    named = [
        k
        for k in known
        if tag in (normalize_name(k), normalize_name(k.replace("__", ".").rpartition(".")[2]))
    ]
    return named[0] if len(named) == 1 else None


def extract_tool_fence(text: str, known: Names) -> list[Found]:
    """A fence tagged with a requested one-input tool's own name (goose's emulated tools: ```execute
    for ``code_execution__execute``): the tool's input, closed, or open at the reply's end (then only
    once the server says the reply ended); never raises."""
    if not known or "```" not in text:
        return []
    found = []
    for start, end, lang in code_spans(text):
        tool = _tool_for_tag(lang, known) if lang and lang.lower() not in _LANGS else None
        if tool is None:
            continue
        fence = text[start:end]
        closed = fence.rstrip().endswith("```") and fence.count("```") == 2
        body = _fence_body(fence, closed=closed)
        if body.strip():
            found.append(
                Found(tool, (LoneInput if closed else OpenEndedInput)(body), start, end, "tool_fence")
            )
    return found
