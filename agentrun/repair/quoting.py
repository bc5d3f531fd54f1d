"""Is a call found in text one the model *made*, or tool syntax it is *talking about*?

Engines' tests show real calls either on their own line or after a finished sentence
("Let me check. <tool_call>..", Gemma 4, Hunyuan, Kimi, Mistral), and at most trailing prose
after a loose JSON call (Llama 3: "Here is the result: {..} Would you like to know more?").
Text that discusses the syntax looks different: backticks around it, an envelope set apart by
spaces in the middle of a sentence that talks about it ("Command R calls tools like
<|START_ACTION|>[..]<|END_ACTION|> and then .."; a generated one is glued to the text before it, or
follows a finished sentence: SGLang's "User wants the weather. <|python_start|>[..]<|python_end|> In
this way .."), a sentence running through it that says what a model could write ("you could call
<tool_call>.. to list files"), or an example marker right before it ("e.g.", "for example:", "the
format is"). Those are never run. A call between plain filler words ("before <tool_call>..
</tool_call> after", "Some text <get_weather>..</get_weather> more text") is made: twelve projects'
tests say so (the AI SDK middleware, SGLang, mistral.rs, xinference, slime, sgl-router, dynamo,
kilocode's Kimi K2 parser among them).
A call block of several lines is not a quote however it sits ("prefix <tool_call>name\n<arg_key>..
</tool_call> suffix", TensorRT-LLM's tests) unless the sentence around it talks about it ("Maybe I
call <atem:function_calls>\n.. — no.", SGLang's Muse Glimmer tests): a sentence quoting a call keeps
it on its line.
A message whose header addresses the user (`` to=user<|message|>``, Ollama's Glimmer tests) is
content: a call in it is run only when the message holds nothing else (a fumbled recipient), never
when prose is written beside it.
"""

from __future__ import annotations

import re

__all__ = ["quoted"]

_EXAMPLE = (
    "example:", "example,", "e.g.", "e.g.,", "e.g.:", "for instance:", "for instance,", "for example",
    "such as", "looks like", "look like", "like this:", "format:", "format is", "syntax:", "syntax is",
    "would be", "could be", "might be", "something like",
)  # fmt: skip
_OPENING_RE = re.compile(r"\s*(?:<[^>\n]{1,60}>|\[[A-Z_]+\]|functools|>>>)+")  # the envelope's own opening
# a sentence that talks about the syntax says so: what a model could or would write, a format, an example
# (engines' and middlewares' tests run calls set between plain filler words: "before <tool_call>.. after")
_DISCUSSING_RE = re.compile(
    r"(?i)\b(?:could|would|should|might|may|can|must|writes?|wrote|written|emits?|outputs?|produces?|"
    r"format|syntax|examples?|like|such as|use|using|reply with|respond with|the model|maybe|perhaps|whether|consider|hypothetical)\b"
)


_PREDICATE_RE = re.compile(r"(?i)(?:is|are|was|looks|would|could|means)\b")  # "{..} is what you would send"


_ABOUT_RE = re.compile(
    r"(?i)\b(?:format|syntax|examples?|like|such as|hypothetical)\b"
)  # "[..] in the format .."


def _discussing(before: str, after: str) -> bool:
    """The sentence around a call talks about it: before it, or right after it ("{..} is what you would
    send", "in the format the server expects"; not "you should visit these places")."""
    return (
        _DISCUSSING_RE.search(before) is not None
        or _PREDICATE_RE.match(after) is not None
        or _ABOUT_RE.search(after) is not None
    )


_FENCE_OPENING_RE = re.compile(
    r"\s*```[\w-]*\s*"
)  # the call's own fence, opened on its line ("```json{..}```")
_MARKUP_RE = re.compile(r"<[|｜]?[\w:/▁.|｜ -]{1,40}[|｜]?>|\[/?[A-Z_]+\]")


def _between(text: str, lo: int, hi: int, spans: list[tuple[int, int]]) -> str:
    """``text[lo:hi]`` without other candidates' spans."""
    pieces, pos = [], lo
    for s, e in sorted(spans):
        if e <= lo or s >= hi:
            continue
        pieces.append(text[pos : max(pos, s)])
        pos = max(pos, min(e, hi))
    pieces.append(text[pos:hi])
    return "".join(pieces)


def _outside(text: str, lo: int, hi: int, spans: list[tuple[int, int]]) -> str:
    """``text[lo:hi]`` without other candidates' spans and special-token markup."""
    return _MARKUP_RE.sub(" ", _between(text, lo, hi, spans)).strip()


_TO_USER_RE = re.compile(r"\bto=user\s*(?:<\|constrain\|>\S*\s*)?<\|message\|>")
_MESSAGE_END_RE = re.compile(r"<\|(?:eot|eom|end|start|call|return)\|>")


_ENDED_RE = re.compile(r"<\|(?:eot|eom|end|call|return)\|>")


def _in_user_message_with_prose(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """The candidate sits in a message addressed to the user that also holds prose of its own, or
    after a header of another message written into it (a message runs to its end token: SGLang's Muse
    Glimmer test of a quoted header in the answer)."""
    last = None
    for last in _TO_USER_RE.finditer(text, 0, start):  # noqa: B007 (the last one is wanted)
        pass
    if last is None or _ENDED_RE.search(text, last.end(), start):
        return False
    if (header := text.find("<|start|>", last.end(), start)) >= 0:
        # a new message opened inside the answer: handed on after a finished sentence (vLLM's Muse
        # Glimmer "The answer tail.<|start|>assistant to=.."), quoted otherwise ("after prose:\n<|start|>..")
        return not _outside(text, last.end(), header, spans).endswith((".", "!", "?"))
    close = _MESSAGE_END_RE.search(text, end)
    return bool(_outside(text, last.end(), close.start() if close else len(text), spans))


_OPENERS_RE = re.compile(r"(?:```|~~~)[\w+.-]*\s*\Z|`\s*\Z")  # a fence or code span opened before it


def _wrapper_after_example(text: str, line_start: int) -> bool:
    """The lines before open a wrapper, a fence or a code span right after an example marker ("The
    format is <seed:tool_call>", "Example:\n```xml", "Example: `<｜DSML｜tool_calls>" and the call on
    the next line: SGLang's DeepSeek V4 quoted-DSML tests): the call inside is the example."""
    if line_start == 0:
        return False
    prev = _MARKUP_RE.sub(" ", text[max(0, line_start - 300) : line_start]).rstrip()
    while (opener := _OPENERS_RE.search(prev)) is not None and opener.start() < len(prev):
        prev = prev[: opener.start()].rstrip()
    return prev.lower().endswith(_EXAMPLE)


def quoted(
    text: str,
    start: int,
    end: int,
    spans: list[tuple[int, int]],
    *,
    strict: bool,
    closed: bool,
    ended: bool = True,
) -> bool:
    """True when the candidate at ``text[start:end]`` is only being talked about (or, before the
    reply ``ended``, may turn out so: words run into it and the text ends with it)."""
    if "to=user" in text and _in_user_message_with_prose(text, start, end, spans):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    lead = _between(text, line_start, start, spans)
    fenced = _FENCE_OPENING_RE.fullmatch(lead) is not None  # "```json{..}```": its own fence
    if lead.count("`") % 2 == 1 and not fenced:
        return True  # inside a `code span` (the fence of a call before it on the line is not one)
    before = "" if fenced else _outside(text, line_start, start, spans)
    if before.lower().endswith(_EXAMPLE) or (not before and _wrapper_after_example(text, line_start)):
        return True
    runs_on = bool(before) and (before[-1].isalnum() or before[-1] in "\"'(,")
    if strict and not closed:
        # a span cut at the end of the text: judge by what follows its opening marker
        line_end = text.find("\n", start)
        rest = text[start : line_end if line_end >= 0 else len(text)]
        opening = _OPENING_RE.match(rest)
        rest = rest[opening.end() :] if opening else rest
        last = max(rest.rfind(">"), rest.rfind("]"), rest.rfind("}"), rest.rfind(")"))
        after = _MARKUP_RE.sub("", rest[last + 1 :] if last >= 0 else rest).strip()
        return runs_on and bool(after)
    line_end = text.find("\n", end)
    after = _outside(text, end, line_end if line_end >= 0 else len(text), spans)
    after = after.removeprefix("```").strip() if fenced else after
    block = "\n" in text[start:end].strip() and (strict or text.startswith("```", start))
    if block and not _discussing(before, after):
        return False  # a block of lines (or a fenced one) no sentence talks about around it is made
    if strict:
        # a generated envelope is glued to the text before it ("some prefix text<｜tool▁calls▁begin｜>",
        # vLLM deepseekv31 tests) or follows a finished sentence; a quoted one sits between words
        spaced = start > line_start and text[start - 1] in " \t"
        pending = not ended and line_end < 0 and not text[end:].strip()  # the words after may come yet
        return runs_on and spaced and (bool(after) or pending) and _discussing(before, after)
    # a loose call too: one glued to the words around it (AutoGPT's "sentence1{..}sentence2") was
    # generated there, not quoted in a sentence
    glued = not fenced and text[start - 1] not in " \t\"'(,"
    return runs_on and bool(after) and not glued and _discussing(before, after)
