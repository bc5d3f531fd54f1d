"""While a reply streams: how much of its text can be shown now, because no tool call can begin in it.

``visible_prefix(text)`` answers the question a streaming gateway asks at every content chunk:
"may this text still become a tool call?". The text before the returned index is shown to the
client at once; the rest is held back until more text decides it, or until the reply ends and
``correct`` (the same pipeline as the agent loop) reads the whole reply. So what is shown early
is never a call, and what ``correct`` later finds as a call was never shown as prose.

What holds text back, from the first place it starts:

* a candidate the repair pipeline already finds in the text (``find_text_calls``, loose too);
* a ``<`` tag not yet closed (``<tool_ca`` may become ``<tool_call>``), a special token
  (``<|...|>``, ``<｜...｜>``) and any tag whose name is one the call formats use (``tool``,
  ``function``, ``invoke``, ``DSML``, ``think``...);
* a ``{`` or ``[`` not yet closed (bare JSON, JSON lists, pythonic lists), and bracket tokens
  (``[TOOL_CALLS]``, ``[ARGS]``, ``[THINK]``);
* a code fence not yet closed whose language may hold JSON (```json, a bare ```);
* a word some formats open with (``functools``, ``Action:``, ``function call``) with nothing
  or an opener after it.

A closed bracket, tag or fence that the pipeline does not read as a call is released. Pure,
never raises.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import balanced_end
from agentrun.repair.extract import find_text_calls

__all__ = ["HOLD_CHARS", "may_start_call", "visible_prefix"]

# with nothing held, a chunk without any of these cannot start a call: the gateway's fast path
HOLD_CHARS = frozenset("<>[]{}`:")

_CALL_TAG_RE = re.compile(
    r"</?\s*(?:[\w:\-]*(?:tool|function|invoke|call|dsml|action|plugin|think|channel|start|minimax|"
    r"steptml|python|response|json|xml|toolcall)[\w:\-=]*)",
    re.IGNORECASE,
)
_SPECIAL_RE = re.compile(r"<\s*[|｜]")
_BRACKET_TOKEN_RE = re.compile(r"\[/?[A-Z_]{3,}\]")  # [TOOL_CALLS], [ARGS], [THINK] (Mistral, Magistral)
_FENCE_OPEN_RE = re.compile(r"```[ \t]*([\w+-]*)")
_JSON_FENCE_LANGS = frozenset(
    {"", "json", "json5", "jsonc", "tool_call", "tool_calls", "tool", "function_call", "javascript", "js"}
)
_WORD_MARKERS = ("functools", "Action:", "✿FUNCTION✿", "<<function>>", "TOOL_NAME:", "function call", ">>>")
_SYMBOL_MARKERS = ("```", ">>>")  # a fence, Functionary v3.2's call prefix
_WORD_RE = re.compile("|".join(re.escape(w) for w in _WORD_MARKERS))
_LABELS = (
    *(
        f"{word}{sep}{part}"
        for word in ("tool", "function")
        for sep in (" ", "_")
        for part in ("call", "name")
    ),
    "action",
    "call",
    "✿function✿",
    "<<function>>",
)
# a line that opens with a call label (structural/labelled.py) and may still become a call: the
# tool's name, then a pythonic call in progress or the start of an arguments line
_LABELLED_SO_FAR_RE = re.compile(
    r"[ \t]*(?:\*{0,2}(?:Action|Tool(?:[ _](?:call|name))?|Function(?:[ _](?:call|name))?|Call|✿FUNCTION✿)"
    r"\*{0,2}[ \t]*[:：]\*{0,2}|<<function>>)[ \t]*`?[\w.\-]*`?[ \t]*"
    r"(?:\(.*|\[.*|\r?\n[ \t]*\*{0,2}[A-Za-z_✿ ]*\*{0,2}[ \t]*[:：]?\*{0,2}\s*(?:`{1,3}[ \t]*[a-z]*[ \t]*\n?)?)?",
    re.IGNORECASE,
)


def visible_prefix(text: str, start: int = 0) -> int:
    """The length of the prefix of ``text`` in which no tool call can begin, whatever follows.

    ``start`` is what was already shown (the answer is never less than it: shown text cannot
    be taken back). Never raises; on any internal failure nothing more is released.
    """
    try:
        return max(start, _hold_point(text, start))
    except Exception:  # a reader bug must not break a stream: hold what is not yet shown
        return start


def may_start_call(piece: str) -> bool:
    """Whether a new piece of text may start a call (else, with nothing held, it is shown at once)."""
    return not HOLD_CHARS.isdisjoint(piece) or any(w in piece for w in _WORD_MARKERS)


def _hold_point(text: str, start: int) -> int:
    limit = len(text)
    for marker in _SYMBOL_MARKERS + _WORD_MARKERS:  # the text may end in the first characters of one
        for k in range(len(marker) - 1, 0, -1):
            if text.endswith(marker[:k]) and len(text) - k >= start:
                limit = min(limit, len(text) - k)
                break
    groups = find_text_calls(text, loose=True)
    if groups:
        limit = min(limit, groups[0][0].start)
    limit = min(limit, _open_structure(text, start, limit))
    limit = min(limit, _word_marker(text, start, len(text)))
    return limit


def _open_structure(text: str, start: int, limit: int) -> int:
    """The first bracket, tag or fence at or after ``start`` (before ``limit``) that may still be a call."""
    fences = _fences(text)
    i = start
    while i < limit:
        ch = text[i]
        if ch == "`" and text.startswith("```", i):
            held, i = _fence(text, i, fences)
            if held:
                return i
            continue
        if _inside_code(i, fences):
            i += 1
            continue
        if ch in "{[" and (balanced_end(text, i) is None or _BRACKET_TOKEN_RE.match(text, i)):
            return i
        if ch == "<" and _tag_may_be_call(text, i):
            return i
        i += 1
    return limit


def _fences(text: str) -> list[tuple[int, int, str]]:
    """Each ``` fence as (start, end, language); an unclosed fence ends at the end of the text."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while (m := _FENCE_OPEN_RE.search(text, pos)) is not None:
        close = text.find("```", m.end())
        end = len(text) if close < 0 else close + 3
        out.append((m.start(), end, m.group(1).lower()))
        pos = end
    return out


def _fence(text: str, i: int, fences: list[tuple[int, int, str]]) -> tuple[bool, int]:
    """(held, next index) for the fence opening at ``i``: an unclosed one that may hold JSON is held."""
    for begin, end, lang in fences:
        if begin == i:
            line_done = "\n" in text[i:end]
            unclosed = end == len(text) and not text.endswith("```", max(i + 3, end - 3))
            if unclosed and (not line_done or lang in _JSON_FENCE_LANGS):
                return True, i
            return False, i + 3 if lang in _JSON_FENCE_LANGS else end
    return False, i + 3


def _inside_code(i: int, fences: list[tuple[int, int, str]]) -> bool:
    """Inside a fence whose language is code, not JSON: loose calls there are code shown."""
    return any(begin < i < end and lang not in _JSON_FENCE_LANGS for begin, end, lang in fences)


def _tag_may_be_call(text: str, i: int) -> bool:
    close = text.find(">", i)
    if close < 0:
        return len(text) - i < 64  # may still grow into an envelope tag; a long '<' run is prose
    if _SPECIAL_RE.match(text, i):
        return True
    m = _CALL_TAG_RE.match(text, i)
    return m is not None and m.end() <= close + 1


def _word_marker(text: str, start: int, limit: int) -> int:
    """A word some formats open with, followed by nothing yet or by an opener."""
    for m in _WORD_RE.finditer(text, start, limit):
        rest = text[m.end() :].lstrip(" \t\n")
        if not rest or rest[0] in "[{`<" or m.group() in (">>>", "TOOL_NAME:"):  # a name follows
            return m.start()
    return min(limit, _labelled_line(text, start, limit))


def _labelled_line(text: str, start: int, limit: int) -> int:
    """The start of one of the last four lines, when it opens with a call label (``Action:``,
    ``Tool call:``...) and the text from there may still become a call (labelled.py reads it)."""
    starts = [text.rfind("\n") + 1]
    while len(starts) < 4 and starts[-1] > 0:  # the label, the arguments' label, a fence, a blank
        starts.append(text.rfind("\n", 0, starts[-1] - 1) + 1)
    last = starts[0]
    for at in sorted(set(starts)):
        if start <= at < limit and _LABELLED_SO_FAR_RE.fullmatch(text, at):
            return at
    word = text[last:].lstrip(" \t*").lower()
    if start <= last < limit and (not word or any(label.startswith(word) for label in _LABELS)):
        return last  # a label being written
    return limit
