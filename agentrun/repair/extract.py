"""Find tool calls in free text: native envelopes first, then (optionally) loose JSON/pythonic.

The result is a list of candidate groups: one group per text span (a ``<tool_call>`` body or
a JSON list can hold several calls). Loose candidates inside a non-JSON code fence
(```python, ```bash ...) are code the model is showing, never calls; so is an envelope
*quoted* in prose (inside backticks, or in the middle of a sentence that goes on after it:
"you could call <tool_call>{..}</tool_call> to read it").
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found
from agentrun.repair.envelopes import ENVELOPE_EXTRACTORS, WRAPPER_TOKENS
from agentrun.repair.formats import FORMAT_EXTRACTORS, FORMAT_TOKENS
from agentrun.repair.formats.harmony import split_harmony
from agentrun.repair.loose import LOOSE_EXTRACTORS
from agentrun.repair.quoting import quoted
from agentrun.repair.structural import LOOSE_READERS, STRICT_READERS, Names
from agentrun.repair.structural.names import offered

__all__ = ["drop_separator_tokens", "emitted_at_end", "find_text_calls", "remove_spans", "split_think"]

_CODE_FENCE_RE = re.compile(r"```[ \t]*([\w+-]+)[ \t]*\n.*?(?:\n[ \t\r]*```|\Z)", re.DOTALL)
_NOT_JSON = {"json", "json5", "jsonc", "tool_call", "tool_calls", "tool", "function_call", "javascript", "js"}
_STRICT = (*ENVELOPE_EXTRACTORS, *FORMAT_EXTRACTORS)


def _groups(found: list[Found]) -> list[list[Found]]:
    by_span: dict[tuple[int, int], list[Found]] = {}
    for f in found:
        by_span.setdefault((f.start, f.end), []).append(f)
    return [by_span[k] for k in sorted(by_span, key=lambda s: (s[0], -(s[1] - s[0])))]


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def _in_inline_code(text: str, start: int) -> bool:
    """An odd number of backticks before ``start`` on its line: inside a `code span`."""
    line_start = text.rfind("\n", 0, start) + 1
    return text.count("`", line_start, start) % 2 == 1


def _kept(
    text: str, groups: list[list[Found]], spans: list[tuple[int, int]], ended: bool
) -> list[list[Found]]:
    """The groups that are calls being made, not tool syntax being discussed (see ``quoting``)."""
    return [
        g
        for g in groups
        if not quoted(
            text,
            g[0].start,
            g[0].end,
            spans,
            strict=g[0].strict,
            closed=all(f.closed for f in g),
            ended=ended,
        )
    ]


def _sound(group: list[Found], known: Names) -> bool:
    """Every call of the group is whole and names a requested tool."""
    return all(f.closed and f.name and offered(f.name, known) for f in group)


def _structural(text: str, groups: list[list[Found]], readers: tuple, known: Names) -> list[list[Found]]:
    """Add what the structural readers find where no family reader found anything; where one
    did but read it unsoundly (a name the request did not offer, a call left open), or read
    only a part of it (AutoGPT's call inside its ``{"thoughts", "command"}`` reply: whole or cut
    off, the part is the whole's), and the structural reading is sound, the structural reading wins."""
    for group in _groups([f for read in readers for f in read(text, known)]):
        span = (group[0].start, group[0].end)
        clashes = [g for g in groups if _overlaps(span, [(g[0].start, g[0].end)])]
        inside = all(
            span[0] <= g[0].start and g[0].end <= span[1] and span != (g[0].start, g[0].end) for g in clashes
        )
        if not clashes:
            groups.append(group)
        elif known is not None and (
            (
                inside and all(f.name and offered(f.name, known) for f in group)
            )  # whole or cut: the part is its
            or (_sound(group, known) and not any(_sound(g, known) for g in clashes))
        ):
            groups = [g for g in groups if g not in clashes] + [group]
    return groups


def find_text_calls(text: str, *, loose: bool, known: Names = None, ended: bool = True) -> list[list[Found]]:
    """Candidate calls in ``text``, grouped by span, in order of appearance; never raises.

    ``known`` (the requested tool names) anchors the structural readers; without it they read
    only the shapes that mark a call by themselves. Until the reply ``ended``, a call that words
    run into and the text ends with may still become a quote (the words after it not come yet).
    """
    if not text:
        return []
    taken: list[tuple[int, int]] = []
    groups: list[list[Found]] = []
    strict: list[Found] = [f for ex in _STRICT for f in ex(text)]
    for group in _groups(strict):
        span = (group[0].start, group[0].end)
        if not _overlaps(span, taken):
            taken.append(span)
            groups.append(group)
    groups = _structural(text, groups, STRICT_READERS, known)
    taken = [(g[0].start, g[0].end) for g in groups]
    if loose:
        code = [
            (m.start(), m.end()) for m in _CODE_FENCE_RE.finditer(text) if m.group(1).lower() not in _NOT_JSON
        ]
        found = [f for ex in LOOSE_EXTRACTORS for f in ex(text)]
        for group in _groups(found):
            span = (group[0].start, group[0].end)
            if not _overlaps(span, taken) and not _overlaps(span, code):
                taken.append(span)
                groups.append(group)
        groups = _structural(text, groups, LOOSE_READERS, known)
        taken = [(g[0].start, g[0].end) for g in groups]
    return sorted(_kept(text, groups, taken, ended), key=lambda g: g[0].start)


def _only_markup(piece: str) -> bool:
    return not WRAPPER_TOKENS.sub("", FORMAT_TOKENS.sub("", piece)).strip()


def emitted_at_end(text: str, groups: list[list[Found]], *, ended: bool = False) -> list[list[Found]]:
    """The groups a reasoning text ends with: calls the model *made* before closing its thinking
    (DeepSeek V4, Qwen3.5, GLM on vLLM), not ones it merely wrote about on the way.

    Once the reply ``ended`` with no call outside the thinking, a call in a tool-call envelope
    (``strict``: special tokens, ``<tool_call>``) was made wherever it sits in the thinking, more
    thought after it or not (models that call tools while they think: llama.cpp's Kimi K2
    call-in-think tests, vLLM's Trinity test of a call wrapped in think tags); before it ended, a call
    may still come after the thinking and make that one a draft. Otherwise the run of calls must start a line (or follow a finished sentence) and be followed by
    nothing but markup; a loose call with prose after it was part of the thinking.
    """
    run: list[list[Found]] = []
    pos = len(text)
    interleaved = [g for g in groups if all(f.strict for f in g)] if ended else []
    if interleaved:
        return interleaved
    for group in reversed(groups):
        if not _only_markup(text[group[0].end : pos]):
            break
        run.insert(0, group)
        pos = group[0].start
    if not run:
        return []
    line_start = text.rfind("\n", 0, pos) + 1
    before = WRAPPER_TOKENS.sub("", FORMAT_TOKENS.sub("", text[line_start:pos])).strip()
    if before and not before.endswith((".", "!", "?", ":")):
        return []
    return run


def remove_spans(text: str, spans: list[tuple[int, int]]) -> str | None:
    """``text`` without the given spans and leftover envelope tokens; None if nothing visible is left."""
    if not spans:
        return text
    out, pos = [], 0
    for start, end in sorted(spans):
        out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    rest = FORMAT_TOKENS.sub("", WRAPPER_TOKENS.sub("", "".join(out)))
    rest = re.sub(r"\n{3,}", "\n\n", rest).strip()
    return rest or None


# <think>, and the same under a family prefix and with a mode (Seed-OSS <seed:think>, K2 V3 <ifm|think_fast>)
_OPEN = r"<think>|<\w+[:|]think(?:_\w+)?>|<\|START_THINKING\|>|\[THINK\]"
_CLOSE = r"</think>|</\w+[:|]think(?:_\w+)?>|<\|END_THINKING\|>|\[/THINK\]"
_THINK_RE = re.compile(rf"^\s*(?:{_OPEN})?(.*?)(?:{_CLOSE})", re.DOTALL)
_THINK_CLOSE_RE = re.compile(_CLOSE)
_THINK_OPEN_RE = re.compile(rf"^\s*(?:{_OPEN})")


_GEMMA_THOUGHT_RE = re.compile(r"<\|channel>(?:thought\n)?(.*?)<channel\|>", re.DOTALL)


def _gemma_thoughts(content: str) -> tuple[str, str]:
    """Gemma 4's ``<|channel>thought\n..<channel|>`` blocks; a bare ``<channel|>`` with no opening
    ends thinking that began in the prompt (Ollama gemma4 parser tests)."""
    if "<|channel>" not in content:
        thought, _, rest = content.partition("<channel|>")
        return rest, thought
    thoughts = [m.group(1) for m in _GEMMA_THOUGHT_RE.finditer(content)]
    return _GEMMA_THOUGHT_RE.sub("", content), "".join(thoughts)


_SEPARATOR_TOKEN_RE = re.compile(r"\]<\][a-z_]{1,20}\[>\[")


def drop_separator_tokens(content: str | None) -> str | None:
    """MiniMax M3's ``]<]minimax[>[`` token before each tag of its calls (vLLM-Ascend's MiniMax M3
    parser tests): markup between the tags, not text, so the calls read as plain XML."""
    if not content or "]<]" not in content:
        return content
    return _SEPARATOR_TOKEN_RE.sub("", content)


def split_think(content: str | None, *, ended: bool = True) -> tuple[str | None, str]:
    """Split thinking that a server without a reasoning parser left in content: ``<think>..
    </think>`` (or only the close), Seed-OSS ``<seed:think>``, Command R ``<|START_THINKING|>``,
    Magistral ``[THINK]..[/THINK]``.

    Returns (visible content, reasoning text). A raw gpt-oss harmony reply is split by channel.
    MiniMax M3's separator tokens between tags are dropped first (``drop_separator_tokens``).
    """
    content = drop_separator_tokens(content)
    if content and "<channel|>" in content:
        content, thought = _gemma_thoughts(content)
        visible, more = split_think(content, ended=ended)
        return visible, "\n".join(t for t in (thought, more) if t)
    harmony = split_harmony(content) if content else None
    if harmony is not None:
        visible, thought = harmony
        return visible.strip() or None, thought
    if not content or not (("think" in content or "THINK" in content) and _THINK_CLOSE_RE.search(content)):
        if content and not ended and (opened := _THINK_OPEN_RE.match(content)) is not None:
            # thinking not closed, and the reply may go on: all of it is still thinking (a call in it
            # may be one the model only thinks about, as Kimi K2's in llama.cpp's tests). Once the
            # server says the reply ended, a call in it ended the thinking (GLM-4.7 on LMDeploy, Laguna)
            return None, content[opened.end() :]
        return content, ""
    m = _THINK_RE.match(content)
    if m is None:
        return content, ""
    return content[m.end() :].strip() or None, m.group(1)
