"""Tool calls written as text inside a model family's *native* envelope.

When a server's tool parser fails (or none is configured), the raw call lands in
``content`` or in the reasoning text. Each extractor below reads one family's format, as
its chat template and vLLM's tool parser define it; an envelope makes the intent certain,
so its candidates are ``strict``. Every extractor returns ``Found`` spans and never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from agentrun.repair.candidates import Found, RawText, balanced_end, strip_fence
from agentrun.repair.formats.jsonlist import json_calls
from agentrun.repair.formats.pythonic import parse_calls
from agentrun.repair.jsonfix import looks_cut_off
from agentrun.repair.qwen_coder import ESCAPED_BLANKS, leftover_args, param_values, qwen_functions
from agentrun.repair.structural.values import kv_value, past_open_value

__all__ = ["ENVELOPE_EXTRACTORS", "WRAPPER_TOKENS"]

_B = r"[|｜]"  # DeepSeek writes full-width bars; tokenizer round trips sometimes give ASCII ones
_DB = r"[|｜]{1,2}"  # DSML's bars, doubled in a reply Zed's tracker shows (``<｜｜DSML｜｜invoke``)
_S = r"[▁_ ]"
_DS_BEGIN = rf"<{_B}tool{_S}call{_S}begin{_B}>"
_DS_SEP = rf"<{_B}tool{_S}sep{_B}>"
_DS_END = rf"<{_B}tool{_S}call{_S}end{_B}>"
_DS_CALL_RE = re.compile(
    rf"{_DS_BEGIN}(.*?){_DS_SEP}(.*?)(?:{_DS_END}|(?={_DS_BEGIN})|(?={_B}?<{_B}tool{_S}calls{_S}end)|\Z)",
    re.DOTALL,
)

WRAPPER_TOKENS = re.compile(
    rf"<{_B}tool{_S}calls{_S}(?:begin|end){_B}>|<{_B}end{_S}of{_S}sentence{_B}>|<{_B}tool{_S}calls{_B}>"
    rf"|<{_B}tool{_S}call{_S}(?:begin|end){_B}>|(?:function)?<{_B}tool{_S}sep{_B}>(?:[\w.\-]+\n)?"
    r"|</?seed:tool_call>|</?tool_calls>|</?function_calls>|<\|tool_call_(?:start|end)\|>"
    rf"|</?{_DB}DSML{_DB}(?:function_calls|tool_calls)>"
    r"|<\|tool_calls_section_(?:begin|end)\|>|<\|eom_id\|>|<\|eot_id\|>|<\|im_end\|>"
    r"|</?minimax:tool_call>|<\|action_end\|>"
)


def extract_deepseek(text: str) -> list[Found]:
    """DeepSeek V3/R1 ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json{..}```<｜tool▁call▁end｜>``
    and V3.1 ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{..}<｜tool▁call▁end｜>``."""
    found: list[Found] = []
    for m in _DS_CALL_RE.finditer(text):
        if "<steptml:" in m.group(0):
            continue  # Step-3 wraps its XML calls in the same special tokens (repair.structural)
        head, body = m.group(1).strip(), m.group(2)
        closed = bool(re.search(rf"{_DS_END}$", m.group(0)))
        if head in ("function", "") and "\n" in body.lstrip():
            name, _, args = body.lstrip().partition("\n")
        else:
            name, args = head, body
        args = strip_fence(args.strip()).strip()
        found.append(Found(name.strip(), args, m.start(), m.end(), "deepseek", closed=closed))
    return found


_DSML_INVOKE_RE = re.compile(
    rf"<{_DB}DSML{_DB}invoke\s+name=\"([^\"]*)\"\s*>(.*?)(?:</{_DB}DSML{_DB}invoke>|\Z)", re.DOTALL
)
_DSML_EMPTY_RE = re.compile(rf"<{_DB}DSML{_DB}invoke\s+name=\"([^\"]*)\"\s*/>")  # a tool taking none (V4)
_DSMLPARAM_RE = re.compile(
    rf"<{_DB}DSML{_DB}parameter\s+name=\"([^\"]*)\"(?:\s+string=\"(true|false)\")?\s*>(.*?)</{_DB}DSML{_DB}parameter>",
    re.DOTALL,
)


def extract_dsml(text: str) -> list[Found]:
    """DeepSeek V3.2 / V4 DSML: ``<｜DSML｜invoke name="x"><｜DSML｜parameter name="p" string="true">v...``.

    ``string="true"`` values are kept as written; ``string="false"`` ones are JSON. A body that is
    one JSON object and no parameter is the arguments (as under any other invoke wrapper).
    """
    if "DSML" not in text:
        return []
    found = [Found(m.group(1), {}, m.start(), m.end(), "dsml") for m in _DSML_EMPTY_RE.finditer(text)]
    for m in _DSML_INVOKE_RE.finditer(text):
        closed = m.group(0).rstrip().endswith("invoke>")
        body = m.group(2).strip()
        if body.startswith("{") and "DSML" not in body:
            whole = closed and not looks_cut_off(body)
            found.append(Found(m.group(1), body, m.start(), m.end(), "dsml", closed=whole))
            continue
        args: dict[str, object] = {}
        for p in _DSMLPARAM_RE.finditer(m.group(2)):
            name, is_string, value = p.group(1), p.group(2), p.group(3)
            if is_string == "false":
                try:
                    args[name] = json.loads(value)
                    continue
                except ValueError:
                    pass
            args[name] = value if is_string == "true" else RawText(value)
        found.append(Found(m.group(1), args, m.start(), m.end(), "dsml", closed=closed))
    return sorted(found, key=lambda f: f.start)


_TOOL_CALL_END_RE = re.compile(r"</tool_call>|<tool_call>")
_TOOL_CALL_OPEN_RE = re.compile(r"<tool_call>")
_GLM_ARG_RE = re.compile(
    r"<arg_key>(.*?)</arg_key>(?:\s|\\[nrt])*<arg_value>(.*?)(?:</arg_value>|\Z)", re.DOTALL
)


_JSON_BODY_END_RE = re.compile(r"\s*(</tool_call>)")


def _end_in_json_string(text: str, body_start: int, tag: int) -> re.Match[str] | None:
    """The ``</tool_call>`` after a JSON body whose string holds the tag itself (``"cmd":
    "echo '</tool_call>'"``: the middleware's JSON-string boundary tests), when the first one met
    falls inside an open string (an odd count of unescaped quotes before it)."""
    if (text.count('"', body_start, tag) - text.count('\\"', body_start, tag)) % 2 == 0:
        return None
    j = body_start
    while j < tag and text[j] in " \t\r\n":
        j += 1
    if j >= tag or text[j] not in "{[" or (close := balanced_end(text, j)) is None or close <= tag:
        return None
    return _JSON_BODY_END_RE.match(text, close)


def _tool_call_blocks(text: str) -> Iterator[tuple[int, str, int, bool]]:
    """(start, body, end, closed) of each ``<tool_call>`` block: it ends at its ``</tool_call>``
    (not one inside a value that closes after it), at the next ``<tool_call>``, or at the end."""
    pos = 0
    while (start := text.find("<tool_call>", pos)) >= 0:
        body_start = start + len("<tool_call>")
        m = _TOOL_CALL_END_RE.search(text, body_start)
        if m is not None and (inside := _end_in_json_string(text, body_start, m.start())) is not None:
            m = inside
        while m is not None:  # a tag inside a value that closes after it is the value's text
            past = past_open_value(text, body_start, m.start(), _TOOL_CALL_OPEN_RE)
            if past == -1 or (past == -2 and m.group(0) == "<tool_call>"):
                break
            m = _TOOL_CALL_END_RE.search(text, past) if past >= 0 else None
        if m is None:
            yield start, text[body_start:], len(text), False
            return
        closed = m.group(0) == "</tool_call>"
        yield start, text[body_start : m.start()], m.end() if closed else m.start(), closed
        pos = m.end() if closed else m.start()


_PY_CALL_RE = re.compile(r"\[?\s*[A-Za-z_][\w.\-]*\s*\(")


def extract_tool_call_tags(text: str) -> list[Found]:
    """``<tool_call>`` bodies in five dialects: Hermes/Qwen2.5 JSON, Granite JSON lists, a
    closed pythonic call (``<tool_call>add(a=1)</tool_call>``),
    Qwen3-Coder ``<function=name><parameter=p>v</parameter></function>``, GLM 4.x
    ``name<arg_key>k</arg_key><arg_value>v</arg_value>`` (``<invoke name=..>`` bodies, MiniMax's
    among them, are ``repair.structural``'s)."""
    found: list[Found] = []
    for start, body, end, closed in _tool_call_blocks(text):
        stripped = body.strip()
        # servers often strip </tool_call> as a stop string: a whole body is still a whole call
        if stripped.startswith(("{", "[", "```")):
            whole = closed or not looks_cut_off(strip_fence(stripped))
            found.extend(json_calls(stripped, start, end, "hermes", strict=True, closed=whole))
        elif closed and _PY_CALL_RE.match(stripped) and (py := parse_calls(stripped)):
            found.extend(Found(n, a, start, end, "pythonic") for n, a in py)
        elif "<function=" in body or body.lstrip().startswith("function="):
            if body.lstrip().startswith(
                "function="
            ):  # its "<" dropped (GLM-4.7, the AI SDK middleware's tests)
                body = body.replace("function=", "<function=", 1)
            inner = qwen_functions(body, 0, True, outer_end=closed)
            lead = body[: body.find("<function=")]  # parameters written before their function (MiMo V2)
            if len(inner) == 1 and isinstance(args := inner[0].arguments, dict) and "<parameter=" in lead:
                inner = [replace(inner[0], arguments={**param_values(lead), **args})]
            found.extend(Found(f.name, f.arguments, start, end, f.family, closed=f.closed) for f in inner)
        else:
            head = stripped.split("<arg_key>", 1)[0]
            name = ESCAPED_BLANKS.sub(" ", head).strip()
            if not re.fullmatch(r"[\w.\-]+", name):
                continue
            glm = {k.strip(): kv_value(v) for k, v in _GLM_ARG_RE.findall(body)}
            rest = stripped[len(head) :]
            found.append(
                Found(name, leftover_args(rest, _GLM_ARG_RE, dict(glm)), start, end, "glm", closed=closed)
            )
    return found


def extract_bare_functions(text: str) -> list[Found]:
    """Qwen3-Coder / OpenHands ``<function=name><parameter=p>v</parameter></function>`` without a wrapper."""
    return qwen_functions(text, 0, True) if "<function=" in text else []


_KIMI_RE = re.compile(
    r"<\|tool_call_begin\|>\s*([^<{]+?)\s*(?:<\|tool_call_argument_begin\|>|(?=\{))(.*?)"
    r"(?:<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|\Z)",
    re.DOTALL,
)


def extract_kimi(text: str) -> list[Found]:
    """Kimi K2 ``<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{..}<|tool_call_end|>``."""
    found: list[Found] = []
    for m in _KIMI_RE.finditer(text):
        name = re.sub(r"^functions\.", "", m.group(1).strip())
        name = re.sub(r":\d+$", "", name)
        closed = m.group(0).endswith("<|tool_call_end|>")
        found.append(Found(name, m.group(2).strip(), m.start(), m.end(), "kimi_k2", closed=closed))
    return found


_PY_TAG_RE = re.compile(
    r"<\|python_tag\|>(.*?)(?:<\|eom_id\|>|<\|eot_id\|>|(?=<\|python_tag\|>)|\Z)", re.DOTALL
)
_ACTION_RE = re.compile(r"<\|action_start\|>\s*<\|plugin\|>(.*?)(?:<\|action_end\|>|\Z)", re.DOTALL)


def extract_python_tag(text: str) -> list[Found]:
    """Llama 3.x ``<|python_tag|>{"name": .., "parameters": {..}}`` (several joined by ``;``), its
    built-in tool syntax ``<|python_tag|>python.call(code="..")`` (llama.cpp test-chat), and a
    pythonic list after the tag."""
    found: list[Found] = []
    for m in _PY_TAG_RE.finditer(text):
        body = m.group(1).strip()
        pythonic = not body.startswith(("{", "[")) or _PY_CALL_RE.match(body) is not None
        calls = parse_calls(body) if pythonic else None  # [add(a=1)] too (Llama 4's list)
        if calls:
            found.extend(Found(n, a, m.start(), m.end(), "llama3_builtin") for n, a in calls)
            continue
        found.extend(json_calls(m.group(1), m.start(), m.end(), "llama3_json", strict=True))
    return found


def extract_internlm(text: str) -> list[Found]:
    """InternLM2 ``<|action_start|><|plugin|>{"name": .., "parameters": {..}}<|action_end|>``."""
    found: list[Found] = []
    for m in _ACTION_RE.finditer(text):
        closed = m.group(0).endswith("<|action_end|>")
        found.extend(json_calls(m.group(1), m.start(), m.end(), "internlm", strict=True, closed=closed))
    return found


_CALL_JSON_RE = re.compile(r"\[\s*\{|\{\s*\"")


def _json_after(text: str, pos: int, start: int, family: str, *, skip_junk: bool = False) -> list[Found]:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if skip_junk and pos < len(text) and text[pos] not in "{[":
        # "[TOOL_CALLS]  junk [{..}]" (vLLM mistral tests): the call list starts further on the line
        line_end = text.find("\n", pos)
        m = _CALL_JSON_RE.search(text, pos, line_end if line_end >= 0 else len(text))
        pos = m.start() if m else pos
    if pos >= len(text) or text[pos] not in "{[":
        return []
    end = balanced_end(text, pos)
    closed = end is not None
    stop = end if end is not None else len(text)
    return json_calls(text[pos:stop], start, stop, family, strict=True, closed=closed)


_GRANITE_RE = re.compile(r"<\|tool_call\|>")
_MISTRAL_RE = re.compile(
    r"\[TOOL_CALLS\]\s*(?:([\w.\-]+)\s*(?:\[CALL_ID\]\s*\w+\s*)?"
    r"(?:\[ARGS\](?=\s*(?:\{|</s>|<\|im_end\|>|<\|eot_id\|>|<\|end\|>))|(?=\s*\{)))?"
)


def extract_granite(text: str) -> list[Found]:
    """IBM Granite ``<|tool_call|>[{"name": .., "arguments": {..}}]``."""
    found: list[Found] = []
    for m in _GRANITE_RE.finditer(text):
        found.extend(_json_after(text, m.end(), m.start(), "granite"))
    return found


_EOS = ("</s>", "<|im_end|>", "<|eot_id|>", "<|end|>")


def extract_mistral(text: str) -> list[Found]:
    """Mistral ``[TOOL_CALLS][{"name": .., "arguments": {..}}]`` and v11+ ``[TOOL_CALLS]name[ARGS]{..}``."""
    found: list[Found] = []
    for m in _MISTRAL_RE.finditer(text):
        if m.group(1) is None:
            found.extend(_json_after(text, m.end(), m.start(), "mistral", skip_junk=True))
            continue
        pos = m.end()
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if text.startswith(_EOS, pos):  # [ARGS] and the end of the turn: no arguments (Devstral)
            found.append(Found(m.group(1), "{}", m.start(), pos, "mistral"))
            continue
        end = balanced_end(text, pos) if pos < len(text) and text[pos] == "{" else None
        stop = end if end is not None else len(text)
        found.append(Found(m.group(1), text[pos:stop], m.start(), stop, "mistral", closed=end is not None))
    return found


ENVELOPE_EXTRACTORS: tuple[Callable[[str], list[Found]], ...] = (
    extract_deepseek,
    extract_dsml,
    extract_kimi,
    extract_tool_call_tags,
    extract_bare_functions,
    extract_python_tag,
    extract_internlm,
    extract_granite,
    extract_mistral,
)
