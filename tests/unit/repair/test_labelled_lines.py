"""Calls written as labelled lines (ReAct's ``Action:``/``Action Input:``, Qwen-Agent's
``✿FUNCTION✿:``/``✿ARGS✿:``): set 6's LLaMA-Factory default-template outputs (read after it was
measured) as a shape, with the safety rules around it."""

from __future__ import annotations

import pytest

from agentrun.repair import correct
from agentrun.repair.streaming import visible_prefix

# LLaMA-Factory tests/data/test_formatter.py (ff6d4d1) test_default_multi_tool_extractor's text,
# with the tools renamed to agentrun's
REACT = (
    'Action: read_file\nAction Input: {"path": "a.py"}\nAction: list_files\nAction Input: {"pattern": "*.py"}'
)
QWEN = '✿FUNCTION✿: read_file\n✿ARGS✿: {"path": "a.py"}\n✿RESULT✿'


def test_react_lines_run_every_call_in_order(tools, reply) -> None:  # type: ignore[no-untyped-def]
    text = f"Thought: I should look at the code first.\n{REACT}\nObservation:"
    result = correct(reply(text), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("read_file", {"path": "a.py"}),
        ("list_files", {"pattern": "*.py"}),
    ]


def test_qwen_agent_function_lines_run(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(QWEN), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})]


@pytest.mark.parametrize(
    "text",
    [
        'Action: delete_everything\nAction Input: {"path": "/"}',  # not a requested tool
        f"Here is the format to use:\n```text\n{REACT}\n```",  # an example in a fence
        'Reply with Action: read_file Action Input: {"path": "a.py"} when you need a file.',  # in prose
        "Action: read_file\nAction Input: a.py",  # no JSON object: nothing to read
    ],
)
def test_what_only_looks_like_an_action_never_runs(tools, reply, text: str) -> None:  # type: ignore[no-untyped-def]
    assert correct(reply(text), tools).calls == ()


def test_an_action_cut_inside_its_input_never_runs(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for cut in range(REACT.index("{"), REACT.index("}")):
        result = correct(reply(REACT[: cut + 1]), tools)
        assert result.calls == (), REACT[: cut + 1]


OTHER_LABELS = [
    '**Tool:** read_file\n**Arguments:** {"path": "a.py"}',
    'Function call: read_file\nParameters:\n```json\n{"path": "a.py"}\n```',
    "Call: read_file(path='a.py')",  # NexusRaven
    '<<function>>read_file(path="a.py")',  # Gorilla OpenFunctions
]


@pytest.mark.parametrize("text", OTHER_LABELS)
def test_other_labels_for_the_same_shape_run(tools, reply, text: str) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(f"I will read it first.\n{text}"), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})]


@pytest.mark.parametrize("text", [REACT, QWEN, *OTHER_LABELS])
def test_a_streamed_action_is_held_back_from_its_label(text: str) -> None:
    """The gateway shows nothing of the call as prose, however the text arrives."""
    prose = "Thought: reading it.\n"
    whole = prose + text
    shown = 0
    for k in range(len(whole) + 1):
        shown = visible_prefix(whole[:k], shown)
        assert shown <= len(prose), repr(whole[:k])


def test_chatglm3s_name_line_and_tool_call_fence_run(tools, reply) -> None:  # type: ignore[no-untyped-def]
    """ChatGLM3's documented tool-call reply: the tool's name, then ``tool_call(..)`` in a python fence."""
    text = "read_file\n```python\ntool_call(path='a.py')\n```"
    assert [(c.name, c.arguments) for c in correct(reply(text), tools).calls] == [
        ("read_file", {"path": "a.py"})
    ]
    assert correct(reply(text.replace("read_file", "format_disk")), tools).calls == ()
    assert correct(reply(text[:-3]), tools).calls == ()  # the fence never closed
