"""Calls written as labelled lines: a line naming the tool, then its arguments.

* ReAct (the agent prompt LangChain, LLaMA-Factory's default tool template and many
  fine-tunes teach): ``Action: NAME`` then ``Action Input: {..}``, often after a
  ``Thought:`` line and before an ``Observation:`` the model wrote for itself; the same
  with other labels (``Tool: NAME`` / ``Arguments: {..}``, ``Function call:`` / ``Parameters:``,
  in bold or not) and the arguments bare or in a ```json fence;
* Qwen-Agent's function-call prompt: ``✿FUNCTION✿: NAME`` then ``✿ARGS✿: {..}``;
* ChatGLM3's: a line that is the tool's name, then a ```python fence holding
  ``tool_call(k=v)``;
* LangChain's docstore ReAct, ``Action: Search[query]``, and its XML agent,
  ``<tool>search</tool><tool_input>foo</tool_input>``;
* Continue's system-message tools: ``TOOL_NAME: NAME`` then ``BEGIN_ARG: k`` / value /
  ``END_ARG`` blocks, in a ```tool fence or not (an argument whose END_ARG never came was cut off);
* a label and a pythonic call on one line: ``Call: NAME(k=v)`` (NexusRaven),
  ``<<function>>NAME(k=v)`` (Gorilla OpenFunctions).

Where the input is not a JSON object it is one text (``LoneInput``: the argument of a tool
that takes one); after ``Action Input:`` it runs to the next step's label or the reply's end,
so it is whole only when the server says the reply ended (``OpenEndedInput``).

The label is the evidence of intent and the name must be a requested tool's (the labels also
open the worked examples of prompts and docs). A line inside a fence of code is shown, not
run; arguments that never close were cut off. With no names at hand (the streaming gateway's
"may this become a call?") any name is read: the labels mark intent by themselves.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, LoneInput, OpenEndedArgs, OpenEndedInput, RawText, balanced_end
from agentrun.repair.formats.pythonic import parse_calls
from agentrun.repair.structural.names import Names, code_spans, in_code, offered

__all__ = ["LABEL_WORDS", "extract_labelled"]

_NAME_LABELS = r"Action|Tool|Tool[ _]call|Tool[ _]name|Function|Function[ _]call|Function[ _]name|✿FUNCTION✿"
_ARGS_LABELS = (
    r"Action[ _]Input|Tool[ _]input|Tool[ _]arguments|Arguments|Args|Input|Parameters"
    r"|Function[ _]arguments|✿ARGS✿"
)
_B = r"(?:\*\*)?"  # markdown bold around a label
_SEP = rf"{_B}[ \t]*[:：]{_B}[ \t]*"
_PAIR_RE = re.compile(  # the name may carry a note in parentheses; blank lines may come between
    rf"^[ \t]*{_B}(?:{_NAME_LABELS}){_SEP}`?(?P<name>[\w.\-]+)`?[ \t]*(?:\([^()\n]*\))?[ \t]*\r?\n"
    rf"(?:[ \t]*\r?\n)*[ \t]*{_B}(?:{_ARGS_LABELS}){_SEP}",
    re.MULTILINE | re.IGNORECASE,
)
# where a plain-text input ends: the next step's label (ReAct's Observation the model wrote itself)
_INPUT_END_RE = re.compile(
    r"^[ \t]*(?:\*\*)?(?:Observation|Thought|Action|Final Answer|✿RESULT✿|✿RETURN✿)(?:\*\*)?[ \t]*[:：]",
    re.MULTILINE | re.IGNORECASE,
)
_BRACKET_RE = re.compile(  # LangChain's docstore ReAct: Action: Search[query]
    r"^[ \t]*Action[ \t]*[:：][ \t]*(?P<name>[\w.\-]+)\[(?P<input>[^\[\]\n]+)\][ \t]*$", re.MULTILINE
)
_TAG_PAIR_RE = re.compile(  # LangChain's XML agent: <tool>search</tool><tool_input>foo</tool_input>
    r"<(?P<nt>tool|tool_name|function|function_name)>[ \t]*(?P<name>[\w.\-]+)[ \t]*</(?P=nt)>\s*"
    r"<(?P<it>tool_input|input|arguments|args|parameters)>(?P<input>.*?)(?P<close></(?P=it)>|\Z)",
    re.DOTALL,
)
_ONE_LINE_RE = re.compile(
    rf"^[ \t]*(?:{_B}(?:Call|Action|Tool[ _]call|Function[ _]call){_SEP}|<<function>>[ \t]*)"
    r"(?P<call>[A-Za-z_][\w.\-]*\(.*\))[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)
_GLM3_RE = re.compile(
    r"^[ \t]*(?P<name>[A-Za-z_][\w.\-]*)[ \t]*\r?\n```[ \t]*python[ \t]*\r?\n[ \t]*(?P<call>tool_call\(.*?\))[ \t]*\r?\n```",
    re.MULTILINE | re.DOTALL,
)
_CONTINUE_RE = re.compile(  # Continue's system-message tools: TOOL_NAME, then BEGIN_ARG .. END_ARG blocks
    r"^[ \t]*TOOL_NAME:[ \t]*(?P<name>[\w.\-]+)[ \t]*$(?P<body>(?:\r?\n(?!```|TOOL_NAME:).*$)*)", re.MULTILINE
)
_ARG_BLOCK_RE = re.compile(
    r"^[ \t]*BEGIN_ARG:[ \t]*(?P<key>[\w.\-]+)[ \t]*\r?\n(?P<value>.*?)(?:\r?\n[ \t]*END_ARG[ \t]*$|(?P<open>\Z))",
    re.MULTILINE | re.DOTALL,
)
_INPUT_FENCE_RE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n?")
LABEL_WORDS = ("Action", "Tool", "Function", "Call", "✿FUNCTION✿", "<<function>>")
"""Words one of these shapes starts with (the streaming gateway holds text back from them)."""
_ANY_LABEL_RE = re.compile("|".join(re.escape(w) for w in LABEL_WORDS), re.IGNORECASE)


def _unquoted(body: str) -> str:
    """The input without the quotes put around it (CrewAI's tests)."""
    if len(body) >= 2 and body[0] == body[-1] == '"':
        return body[1:-1]
    return body[1:] if body.startswith('"') and body.count('"') == 1 else body


def _plain_input(text: str, pos: int) -> tuple[str, int, bool] | None:
    """A plain-text input from ``pos`` to the next step's label or the end of the reply."""
    end = _INPUT_END_RE.search(text, pos)
    stop = end.start() if end else len(text)
    body = _unquoted(text[pos:stop].strip())
    return (OpenEndedInput(body), stop, True) if body else None


def _arguments(text: str, pos: int) -> tuple[str, int, bool] | None:
    """The JSON object at ``pos`` (bare or in a ```json fence), else the plain text there:
    (body, end, closed)."""
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if text.startswith("**", pos) and text[pos + 2 : pos + 64].lstrip().startswith("{"):
        pos += 2  # a stray bold mark before the arguments (``Action Input: ** {..}``)
    fence = _INPUT_FENCE_RE.match(text, pos)
    at = fence.end() if fence else pos
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if not text.startswith("{", at):
        return _plain_input(text, pos)
    end = balanced_end(text, at)
    if end is None:
        return text[at:], len(text), False
    stop = end
    if fence is not None:
        close = text.find("```", end)
        if close < 0 or text[end:close].strip():
            return text[at:], len(text), False
        stop = close + 3
    return text[at:end], stop, True


def _anchored(name: str, known: Names) -> bool:
    return known is None or offered(name, known)


_FINAL_RE = re.compile(r"^[ \t]*(?:\*\*)?Final Answer(?:\*\*)?[ \t]*[:：]", re.MULTILINE | re.IGNORECASE)


def _pairs(text: str, known: Names, fences: list[tuple[int, int, str]]) -> list[Found]:
    final = _FINAL_RE.search(text)  # a step after the final answer is not taken (LangChain's MRKL)
    found: list[Found] = []
    for m in _PAIR_RE.finditer(text):
        if in_code(m.start(), fences) or not _anchored(m.group("name"), known):
            continue
        if final is not None and final.start() < m.start():
            continue
        got = _arguments(text, m.end())
        if got is not None:
            body, end, closed = got
            found.append(
                Found(m.group("name"), body, m.start(), end, "labelled", strict=False, closed=closed)
            )
    return found


def _one_line(text: str, known: Names, fences: list[tuple[int, int, str]]) -> list[Found]:
    found: list[Found] = []
    for m in _ONE_LINE_RE.finditer(text):
        if in_code(m.start(), fences):
            continue
        calls = parse_calls(m.group("call"))
        if calls and all(isinstance(a, dict) and _anchored(n, known) for n, a in calls):
            found.extend(Found(n, a, m.start(), m.end(), "labelled", strict=False) for n, a in calls)
    return found


def _glm3(text: str, known: Names) -> list[Found]:
    if known is None or "tool_call(" not in text:
        return []
    found: list[Found] = []
    for m in _GLM3_RE.finditer(text):
        calls = parse_calls(m.group("call"))
        if calls and len(calls) == 1 and isinstance(calls[0][1], dict) and offered(m.group("name"), known):
            found.append(Found(m.group("name"), calls[0][1], m.start(), m.end(), "labelled", strict=False))
    return found


def _bracketed(text: str, known: Names, fences: list[tuple[int, int, str]]) -> list[Found]:
    return [
        Found(m.group("name"), LoneInput(m.group("input")), m.start(), m.end(), "labelled", strict=False)
        for m in _BRACKET_RE.finditer(text)
        if not in_code(m.start(), fences) and _anchored(m.group("name"), known)
    ]


def _tag_pairs(text: str, known: Names, fences: list[tuple[int, int, str]]) -> list[Found]:
    found: list[Found] = []
    for m in _TAG_PAIR_RE.finditer(text):
        if in_code(m.start(), fences) or not _anchored(m.group("name"), known):
            continue
        body, closed = m.group("input").strip(), bool(m.group("close"))
        if body.startswith("<"):
            continue  # child elements: an invocation's arguments, xmlish's to read
        args = body if body.startswith("{") else LoneInput(body)
        found.append(
            Found(m.group("name"), args, m.start(), m.end(), "labelled", strict=False, closed=closed)
        )
    return found


def _continue_closed(after: str) -> bool:
    """What follows the last ``END_ARG`` closes the call: the fence, or a whole line of other text
    (nothing, or the start of another ``BEGIN_ARG``, may be a reply cut there)."""
    rest = after.lstrip()
    if rest.startswith("```"):
        return True
    first = rest.split("\n", 1)[0]
    return "\n" in rest and not first.startswith("BEGIN_ARG")


def _continue_calls(text: str, known: Names, fences: list[tuple[int, int, str]]) -> list[Found]:
    found: list[Found] = []
    for m in _CONTINUE_RE.finditer(text):
        if in_code(m.start(), fences) or not _anchored(m.group("name"), known):
            continue
        args: dict[str, RawText] = {}
        closed, last = True, 0
        for block in _ARG_BLOCK_RE.finditer(m.group("body")):
            args[block.group("key")] = RawText(block.group("value"))
            closed, last = closed and block.group("open") is None, block.end()
        if not args:
            continue
        after = m.group("body")[last:] + text[m.end() :]
        whole = args if _continue_closed(after) else OpenEndedArgs(args)
        found.append(
            Found(m.group("name"), whole, m.start(), m.end(), "labelled", strict=False, closed=closed)
        )
    return found


def extract_labelled(text: str, known: Names) -> list[Found]:
    """Labelled calls to requested tools (see the module docstring); never raises."""
    found = _glm3(text, known)
    fences = code_spans(text)
    if "<" in text:
        found += _tag_pairs(text, known, fences)
    if "TOOL_NAME:" in text:
        found += _continue_calls(text, known, fences)
    if _ANY_LABEL_RE.search(text):
        found += (
            _pairs(text, known, fences) + _one_line(text, known, fences) + _bracketed(text, known, fences)
        )
    return sorted(found, key=lambda f: f.start)
