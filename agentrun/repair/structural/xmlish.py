"""XML-ish invocations under any wrapper: ``<invoke name="search"><parameter name="q">..``.

What is read, whatever the wrapper around it (``<function_calls>``, ``<tool_calls>``, none):

* the element that is the call: a call-like tag (``invoke``, ``function``, ``tool_call``,
  ``tool_use``, ...) naming the tool in an attribute or in a ``<name>`` child, any tag whose
  ``name=`` attribute is a requested tool, or a tag that *is* a requested tool's name
  (``<search><query>..</query></search>``, read only when its body is nothing but arguments);
* its arguments: the tag's other attributes, ``<parameter name=k>`` (or ``param``/``arg``/
  ``argument``) children, ``<parameter=k>`` children, ``<arg_key>``/``<arg_value>`` pairs, an
  ``<arguments>`` child holding JSON or more children, a JSON object as the whole body, or
  children named after the arguments themselves.

A call whose element (or one of its parameters) never closes is not ``closed``: it was cut
off, and the pipeline never runs it. Invocations side by side share one span, grown to the
wrapper around them, so several calls in one block come out in order.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from agentrun.repair.candidates import Found, LoneInput, OpenEndedArgs, RawText, Repeated, SoleInput
from agentrun.repair.jsonfix import looks_cut_off
from agentrun.repair.structural.names import Names, code_spans, in_code, names_tool, offered
from agentrun.repair.structural.namespaces import namespaced
from agentrun.repair.structural.values import kv_value, param_value, trim_value
from agentrun.repair.structural.xml_element import element
from agentrun.repair.structural.yaml_body import yaml_mapping

__all__ = ["extract_invocations"]

_ATTR_RE = re.compile(r"""([\w:.\-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'/]+))""")
_ATTRS = r"""(?:\s+[\w:.\-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"'/]+))*"""
_SHORT_RE = re.compile(r"""\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'/]+))""")  # <call="NAME">: the tag's value
_OPEN_RE = re.compile(
    rf"""<([A-Za-z_][\w:.\-]*)((?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"'/]+))?{_ATTRS})\s*(/?)>"""
)
_EQ_RE = re.compile(r"<(parameter|param|arg|argument)=([^>\n]+)>")
# GLM's pairs, and the same pairs under a family prefix (LongCat's <longcat_arg_key>)
_NS = r"(?:[\w.\-]+:)?"  # a namespace (see namespaces.namespaced)
_KV_RE = re.compile(
    rf"<({_NS}(?:[a-z]+_)?arg_key|key)>(.*?)</\1>\s*(?:<{_NS}arg_type>[^<]*</{_NS}arg_type>\s*)?"
    rf"<({_NS}(?:[a-z]+_)?arg_value|value)>(.*?)(</\3>|(?=<{_NS}(?:[a-z]+_)?arg_key>)|\Z)",
    re.DOTALL,
)  # a value whose close was dropped ends where the next key opens (Ollama's GLM-4.6 tests)


def _kv_closed(kv: re.Match[str]) -> bool:
    """The pair's value closed: by its tag, or by the next pair's key (not by the text's end)."""
    return bool(kv.group(5)) or kv.end() < len(kv.string)


_KV_OPEN_RE = re.compile(rf"<{_NS}(?:[a-z]+_)?arg_key>")
_CALL_TAGS = frozenset(
    [
        "invoke",
        "function",
        "tool",
        "call",
        "tool_call",
        "toolcall",
        "function_call",
        "functioncall",
        "tool_use",
        "use_tool",
        "tool_request",
        "invocation",
    ]
)
_PARAM_TAGS = frozenset({"parameter", "param", "arg", "argument", "property"})
_ARGS_TAGS = frozenset(
    {"arguments", "parameters", "args", "params", "input", "tool_input", "kwargs", "tool_arguments"}
)
_NAME_TAGS = frozenset(
    {"name", "tool_name", "function_name", "tool", "function", "request"}
)  # Langroid: request
# elements that hold calls: a requested tool's own element directly inside one may hold its one input as text
_WRAPPER_RE = re.compile(
    r"<(?:[\w.\-]+:)?(?:tool|tool[-_]?use|tool_calls?|function_calls|tool[-_]?calls?)>\s*$", re.I
)
_NAME_ATTRS = ("name", "tool_name", "function", "tool")
_SKIP_ATTRS = frozenset({*_NAME_ATTRS, "id", "type", "index", "call_id"})
_META_ATTR_RE = re.compile(r"(?:data|aria)-")  # markup's own metadata (data-name=..), never an argument


def _attrs(text: str) -> dict[str, str]:
    out = {m.group(1): next(g for g in m.groups()[1:] if g is not None) for m in _ATTR_RE.finditer(text)}
    if (short := _SHORT_RE.match(text)) is not None:  # the AI SDK middleware's tool-name salvage tests
        out["name"] = next(g for g in short.groups() if g is not None)
    return out


def _local(tag: str) -> str:
    return tag.rpartition(":")[2].lower()


class _Args:
    """Arguments read from one call's body."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.json: str | None = None  # the whole body was one JSON object
        self.closed = True
        self.leftover = False  # text outside any argument: the body is not only arguments
        self.stray_lines_only = True  # every such text is lines of its own between tags (no odd tag)


def _put(args: _Args, key: str, value: Any) -> None:
    """A parameter written again in the same call adds a value: a list (``Repeated``) for the schema."""
    before = args.values.get(key)
    if before is None or not isinstance(value, RawText) or not isinstance(before, RawText | Repeated):
        args.values[key] = value
    elif isinstance(before, Repeated):
        before.append(value)
    else:
        args.values[key] = Repeated([before, value])


def _child(body: str, m: re.Match[str], args: _Args) -> int:
    """Read the child element at ``m`` into ``args``; returns where reading goes on."""
    tag, attrs = m.group(1), _attrs(m.group(2))
    inner, end, closed = element(body, m, last_close=True)
    args.closed = args.closed and closed
    local = _local(tag)
    key = attrs.get("name", attrs.get("key"))  # Kimi K3 names an argument by key=
    if local in _PARAM_TAGS and key is not None:
        _put(args, key.strip(), param_value(inner, attrs))
    elif local in _ARGS_TAGS and key is None:
        _read_into(inner, args)
    else:
        _put(args, tag, param_value(inner, attrs))
    return end


def _eq_param(body: str, m: re.Match[str], args: _Args) -> int:
    """``<parameter=k>v</parameter>`` (Qwen3-Coder's spelling, seen under other wrappers); a value the
    next parameter or the call's close ends without its own close loses the newline before that tag
    (layout, as before a close: SGLang's Qwen3-Coder implicit-close test)."""
    close = re.compile(rf"</{m.group(1)}>|(?=<{m.group(1)}=)|(?=</(?:function|invoke|tool_call)>)")
    c = close.search(body, m.end())
    end = c.start() if c else len(body)
    args.closed = args.closed and c is not None
    value = body[m.end() : end]
    if c is not None and not c.group(0) and value.endswith("\n"):
        value = value[:-1]
    args.values[m.group(2).strip()] = param_value(value, {})
    return c.end() if c else len(body)


def _read_into(body: str, args: _Args) -> None:
    stripped = body.strip()
    if stripped.startswith("{") and not args.values:
        args.json = stripped
        args.closed = args.closed and not looks_cut_off(stripped)
        return
    pos = 0
    while pos < len(body):
        lt = body.find("<", pos)
        if (between := body[pos : lt if lt >= 0 else len(body)]).strip():
            args.leftover = True
            own_lines = re.fullmatch(r"[ \t]*\n[^<>]*\n\s*", between) is not None and lt >= 0
            args.stray_lines_only = args.stray_lines_only and own_lines
        if lt < 0:
            return
        if lt + 1 < len(body) and not _TAG_START_RE.match(body, lt + 1):  # "x < 10": not markup
            args.leftover, pos = True, lt + 1
            continue
        if (kv := _KV_RE.match(body, lt)) is not None:
            args.values[kv.group(2).strip()] = kv_value(kv.group(4))
            args.closed = args.closed and _kv_closed(kv)
            pos = kv.end()
        elif (eq := _EQ_RE.match(body, lt)) is not None:
            pos = _eq_param(body, eq, args)
        elif (m := _OPEN_RE.match(body, lt)) is not None:
            pos = _child(body, m, args)
        else:
            close = body.find(">", lt)
            if close < 0:  # a tag cut before its '>': the text ended inside markup
                args.closed = False
                return
            odd = not body.startswith("</", lt)
            args.leftover, args.stray_lines_only = args.leftover or odd, args.stray_lines_only and not odd
            pos = close + 1


def _named_child(body: str) -> tuple[str, str] | None:
    """``<name>add</name>`` (or ``<tool_name>``...) first in a call's body: (name, rest of body)."""
    m = re.match(r"\s*<(\w+)>\s*([\w.\-]+)\s*</\1>", body)
    if m is None or m.group(1).lower() not in _NAME_TAGS:
        return None
    return m.group(2), body[m.end() :]


_TEXT_NAME_RE = re.compile(
    r"""\s*([A-Za-z_][\w.\-]*)((?:\s+[\w.\-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s<>"']+))+)\s*"""
)


def _text_named(body: str, known: Names) -> tuple[str, dict[str, str]] | None:
    """``<tool_call>multiply a=12 b=34</tool_call>``: a requested tool's name as the body's text,
    its arguments as attributes after it (mlx-lm's GLM tests)."""
    m = _TEXT_NAME_RE.fullmatch(body)
    if m is None or not names_tool(m.group(1), known):
        return None
    return m.group(1), _attrs(m.group(2))


def _standing(text: str, start: int, end: int) -> bool:
    """A requested tool's element holding its input as text is a call inside a wrapper, or one not
    nested in another element: on its own line (SkyRL's ``<search>q</search> <answer>..``) or among
    words (open-instruct's ``I need to search. <search>python tutorials</search>``; a sentence that
    talks about the syntax is a quote, judged with every call)."""
    if _WRAPPER_RE.search(text, 0, start):
        return True
    before = text[text.rfind("\n", 0, start) + 1 : start].rstrip()
    if before and _HTML_RE.search(text):  # <code>ls</code> among words of an HTML answer is markup
        return False
    inside = text[end:].lstrip().startswith("</")  # the next tag closes an element around it
    opened = re.search(r"<[A-Za-z_][^<>]*(?<!/)>\Z", before) is not None  # an element opened right before
    return not (inside or opened)


def _call(text: str, m: re.Match[str], known: Names) -> Found | None:
    tag, attrs = m.group(1), _attrs(m.group(2))
    local = _local(tag)
    name = next((attrs[a].strip() for a in _NAME_ATTRS if a in attrs), "")
    if (
        local in _PARAM_TAGS
        or local in _ARGS_TAGS
        or not (name or local in _CALL_TAGS or names_tool(tag, known))
    ):
        return None
    body, end, closed = element(text, m)
    anchored_only = False  # nothing but the tool's name says this element is a call
    if name:
        if local not in _CALL_TAGS:
            if not offered(name, known):
                return None
            anchored_only = True
    elif local in _CALL_TAGS and (child := _named_child(body)) is not None:
        name, body = child
    elif local in _CALL_TAGS and closed and (inline := _text_named(body, known)) is not None:
        name, attrs, body = inline[0], inline[1], ""
    elif "call" in local and closed and names_tool(only := _SEP_RE.sub("", body).strip(), known):
        # <tool_call>get_time</tool_call> (not <tool>NAME</tool>: LangChain's XML agent names the
        # tool there and writes its input after; HY v3 ends the name with <tool_sep>); inside a
        # wrapper, the wrapper must close
        return Found(only, {}, m.start(), end, "xmlish_name")
    elif names_tool(tag, known):  # closed or not: an open one was cut off (judged below)
        name, anchored_only = tag, True
    else:
        return None
    if anchored_only and closed and (mapping := yaml_mapping(body)) is not None:
        return Found(name, mapping, m.start(), end, "xmlish_yaml")  # <get_weather>\ncity: Paris\n</..>
    args = _Args()
    for key, value in attrs.items():
        if key not in _SKIP_ATTRS and not _META_ATTR_RE.match(key):
            args.values[key] = param_value(value, {})
    _read_into(body, args)
    lone = bool(args.leftover and not args.values and args.json is None and body.strip())
    lone = lone and not _TAG_RE.search(body)
    if anchored_only and args.leftover and not (lone and closed and _standing(text, m.start(), end)):
        return None  # <search> in prose, or markup that is not only arguments
    if lone and closed:  # <invoke name="shell">\necho hi\n</invoke>: the one input of a one-input tool
        alone = anchored_only and not _WRAPPER_RE.search(text, 0, m.start())
        return Found(name, (SoleInput if alone else LoneInput)(trim_value(body)), m.start(), end, "xmlish")
    if anchored_only and not (closed and args.closed):
        # a requested tool's element opened and never closed: cut off, and a call quoted inside
        # its value (<execute_command><command>echo '<read_file>..') is part of that value
        return Found(name, body, m.start(), end, "xmlish", closed=False)
    raw: str | dict[str, Any] = args.json if args.json is not None else args.values
    fixes: tuple[str, ...] = ()
    if args.leftover and not isinstance(raw, str):
        if anchored_only or not (args.values and args.stray_lines_only and closed and args.closed):
            raw = body  # never drop words the model wrote: the body goes back as it is
        else:  # a line of stray text between a named invoke's parameters (vLLM's and SGLang's MiniMax
            fixes = ("stray_text",)  # readers skip it); the event keeps the source text
    return Found(name, raw, m.start(), end, "xmlish", closed=closed and args.closed, fixes=fixes)


def _wrapped(text: str, found: list[Found]) -> list[Found]:
    """Calls side by side share one span, grown to the wrapper element around them."""
    out: list[Found] = []
    i = 0
    while i < len(found):
        j = i
        while j + 1 < len(found) and not text[found[j].end : found[j + 1].start].strip():
            j += 1
        start, end = found[i].start, found[j].end
        opening = re.search(r"<([A-Za-z_][\w:.\-]*)>\s*$", text[max(0, start - 200) : start])
        closing = None
        if opening is not None:
            closing = re.match(rf"\s*</{re.escape(opening.group(1))}>", text[end:])
            start -= len(text[max(0, start - 200) : start]) - opening.start()
            end += closing.end() if closing else 0
        # key/value pairs have no end of their own: inside a wrapper the wrapper must close, and
        # without one something must follow them (at the end of the text another pair may be due,
        # so there they run only when the server said the reply ended: OpenEndedArgs)
        cut = closing is None and opening is not None
        at_end = closing is None and opening is None and not text[end:].strip()
        for f in found[i : j + 1]:
            kv = f.family == "xmlish_kv"
            args = (
                OpenEndedArgs(f.arguments) if kv and at_end and isinstance(f.arguments, dict) else f.arguments
            )
            open_ended = kv or f.family == "xmlish_name"  # nothing of its own says no more is due
            out.append(
                Found(
                    f.name,
                    args,
                    start,
                    end,
                    f.family,
                    closed=f.closed and not (cut and open_ended),
                    fixes=f.fixes,
                )
            )
        i = j + 1
    return out


_HTML_RE = re.compile(
    r"</?(?:p|div|span|br|li|ul|ol|b|i|em|strong|a|h[1-6]|table|tr|td|pre|html|body)\b[^<>]*>", re.I
)
_TAG_START_RE = re.compile(r"[A-Za-z_/!?]")
_TAG_RE = re.compile(r"<[A-Za-z_/!?]")
_SEP_RE = re.compile(rf"<{_NS}\w*sep>\s*\Z")
_KV_NAME_RE = re.compile(rf"([A-Za-z_][\w.\-]*)\s*(?:<{_NS}\w*sep>\s*)?$")  # HY v3's NAME<tool_sep>


def _kv_calls(text: str, known: Names, taken: list[Found]) -> list[Found]:
    """``NAME<arg_key>k</arg_key><arg_value>v</arg_value>..`` with no envelope around it (GLM's
    body, its ``<tool_call>`` dropped or never written)."""
    found: list[Found] = []
    pos = 0
    while (opened := _KV_OPEN_RE.search(text, pos)) is not None:
        at = opened.start()
        pos = at + 1
        name = _KV_NAME_RE.search(text, max(0, at - 80), at)
        if name is None or any(f.start <= at < f.end for f in taken):
            continue
        if known is not None and not offered(name.group(1), known):
            continue
        args, end, closed = {}, at, True
        while (kv := _KV_RE.match(text, end)) is not None:
            args[kv.group(2).strip()] = kv_value(kv.group(4))
            closed, end = _kv_closed(kv), kv.end()
            while end < len(text) and text[end] in " \t\r\n":
                end += 1
        if not args:
            continue
        rest = text[end : end + 80]
        if _KV_OPEN_RE.match(rest) or (rest.startswith("<") and ">" not in rest):
            closed = False  # a pair begun and cut off, or a tag the text ends inside
        found.append(Found(name.group(1), args, name.start(), end, "xmlish_kv", closed=closed))
        pos = end
    return found


@lru_cache(maxsize=64)
def _candidate_re(known: Names) -> re.Pattern[str]:
    """Where a call may open: a call-like tag, a tag with a name attribute, a tool's own tag."""
    calls = "|".join(sorted(_CALL_TAGS, key=len, reverse=True))
    alts = [
        rf"(?:[\w.\-]+:)?(?:{calls})(?:[\s/>]|=\s*[\"']|(?<!function)=)",  # <function=NAME> is Qwen's
        rf"[A-Za-z_][\w:.\-]*\s[^<>]*?\b(?:{'|'.join(_NAME_ATTRS)})\s*=",
    ]
    if known:
        words = sorted({w for k in known for w in (k, k.lower())}, key=len, reverse=True)
        alts.append(r"(?i:" + "|".join(re.escape(w) for w in words) + r")[\s/>]")
    return re.compile(r"<(?=" + "|".join(alts) + ")")


def extract_invocations(text: str, known: Names) -> list[Found]:
    """XML-ish calls in ``text`` (see the module docstring); never raises."""
    if "<" not in text or ">" not in text:
        return []
    text = namespaced(text)
    fences = code_spans(text)
    found: list[Found] = []
    pos = 0
    candidates = _candidate_re(known)
    while (at := candidates.search(text, pos)) is not None:
        m = _OPEN_RE.match(text, at.start())
        if m is None:
            pos = at.start() + 1
            continue
        call = _call(text, m, known)
        if call is None or in_code(m.start(), fences):
            pos = m.end()
            continue
        found.append(call)
        pos = max(call.end, m.end())
    if "arg_key>" in text:
        found = sorted(found + _kv_calls(text, known, found), key=lambda f: f.start)
    return _wrapped(text, found)
