"""``repair.streaming.visible_prefix``: text streamed early is never part of a call.

The strong check replays every text-call family the fault injector renders, token by token as
the replay model streams it, and asserts that at no point is anything of the call shown, and
that what was shown is where ``correct`` puts the reply's visible text.
"""

from __future__ import annotations

import pytest

from agentrun.gateway.reply import unshown
from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.repair.streaming import may_start_call, visible_prefix
from agentrun.replay.script import tokenize
from agentrun.replay.textcalls import FAMILIES, render_text_calls
from agentrun.toolset import ToolSpec

TOOLS = [
    ToolSpec(
        name="write_file",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    ),
    ToolSpec(name="run_shell", parameters={"type": "object", "properties": {"command": {"type": "string"}}}),
]
PROSE = "I will write the file and then run it."


def _stream(text: str) -> list[int]:
    """What a gateway shows after each token: the visible prefix, never moving back."""
    shown, steps, so_far = 0, [], ""
    for token in tokenize(text):
        caught_up = shown == len(so_far)
        so_far += token
        shown = len(so_far) if caught_up and not may_start_call(token) else visible_prefix(so_far, shown)
        steps.append(shown)
    return steps


@pytest.mark.parametrize("family", FAMILIES)
def test_no_family_shows_any_of_its_call_early(family: str) -> None:
    calls = [
        ("write_file", {"path": "a.py", "content": "print('hi')\n"}),
        ("run_shell", {"command": "python a.py"}),
    ]
    # gpt-oss's harmony carries its own visible channel: prose before its header is not shown
    prose = "" if family == "gpt_oss" else PROSE
    text = f"{prose}\n\n{render_text_calls(family, calls)}" if prose else render_text_calls(family, calls)
    steps = _stream(text)
    fixed = correct(Message(role="assistant", content=text), TOOLS)
    assert [c.name for c in fixed.calls] == ["write_file", "run_shell"], family
    assert max(steps) <= len(text[: len(prose) + 2]), (family, text[: max(steps)])
    shown = text[: steps[-1]]
    assert prose.startswith(shown.strip())
    rest, diverged = unshown(shown, fixed.content)
    assert diverged == 0
    assert (shown + rest).split() == (fixed.content or "").split()  # the same text, whitespace aside


def test_plain_prose_streams_whole() -> None:
    text = "Sure. The answer is 42, and the file is fine as it is."
    assert _stream(text)[-1] == len(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ok <tool_ca", "ok "),  # a tag still growing may become an envelope
        ("a <b>bold</b> c", "a <b>bold</b> c"),  # an ordinary tag is released once closed
        ("use {a: 1} ok", "use {a: 1} ok"),  # a closed brace that is no call is released
        ('then {"name": "wr', "then "),  # an open brace is held
        ("see [TOOL_CALLS]", "see "),  # Mistral's marker
        ("x <|python_tag|>", "x "),  # a special token
        ("code:\n```python\nx = {1: 2\n", "code:\n```python\nx = {1: 2\n"),  # code shown, never a call
        ('```json\n{"na', ""),  # an unclosed JSON fence
        ("so. functools", "so. "),  # Phi-4's opening word
        ("I <think>hmm", "I "),  # thinking left in content
    ],
)
def test_what_is_held(text: str, shown: str) -> None:
    assert text[: visible_prefix(text)] == shown


def test_shown_text_is_never_taken_back() -> None:
    assert visible_prefix('abc {"name": "x"', start=4) == 4
    assert visible_prefix("abc", start=2) == 3


def test_unshown_counts_what_differs() -> None:
    assert unshown("Hello ", "Hello world") == ("world", 0)
    assert unshown("I will.\n\n", "I will.") == ("", 0)
    assert unshown("I will.\n\n", "I will.\n\nMore") == ("More", 0)
    assert unshown("read_file\n", "Done") == ("Done", 10)
