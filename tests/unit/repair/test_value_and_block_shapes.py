"""What TensorRT-LLM's parser tests showed (set 3, read after it was measured), as shapes and not
as one spelling: a wrapper's closing tag written inside a value, a call block that spans lines
between words, the fence of one call read as an open code span before the next, an invoke whose
body is a JSON object, a tool's name with its arguments as attributes in the body."""

from __future__ import annotations

import pytest

from agentrun.repair import correct

END_IN_VALUE = {
    "glm": (
        "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a.md</arg_value>\n"
        "<arg_key>content</arg_key>\n<arg_value>close with </tool_call> here</arg_value>\n</tool_call>"
    ),
    "invoke": (
        '<function_calls><invoke name="write_file"><parameter name="path">a.md</parameter>'
        '<parameter name="content">close with </invoke> here</parameter></invoke></function_calls>'
    ),
}


@pytest.mark.parametrize("family", sorted(END_IN_VALUE))
def test_a_closing_tag_inside_a_value_is_the_values_text(tools, reply, family) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(END_IN_VALUE[family]), tools)
    closing = "</tool_call>" if family == "glm" else "</invoke>"
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("write_file", {"path": "a.md", "content": f"close with {closing} here"})
    ]


@pytest.mark.parametrize("family", sorted(END_IN_VALUE))
def test_a_value_cut_after_a_closing_tag_inside_it_never_runs(tools, reply, family) -> None:  # type: ignore[no-untyped-def]
    text = END_IN_VALUE[family]
    cut = text[: text.index(" here")]  # the value's own close never came
    assert correct(reply(cut), tools).calls == ()


def test_a_value_whose_close_was_dropped_does_not_swallow_the_next_call(tools, reply) -> None:  # type: ignore[no-untyped-def]
    text = (
        "<tool_call>\n<function=read_file>\n<parameter=path>\na.py\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=read_file>\n<parameter=path>\nb.py\n</parameter>\n</function>\n</tool_call>"
    )
    result = correct(reply(text), tools)
    assert [c.arguments for c in result.calls] == [{"path": "a.py"}, {"path": "b.py"}]


def test_a_call_block_of_several_lines_between_words_runs(tools, reply) -> None:  # type: ignore[no-untyped-def]
    block = "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n</tool_call>"
    result = correct(reply(f"prefix {block} suffix"), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})]
    # on one line, between words, it is quoted: never run
    inline = '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>'
    assert correct(reply(f"You could call {inline} to read it."), tools).calls == ()


def test_the_fence_of_a_call_is_not_an_open_code_span_for_the_next(tools, reply) -> None:  # type: ignore[no-untyped-def]
    one = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜>"
    text = (
        "<｜tool▁calls▁begin｜>"
        + one.format(name="read_file", args='{"path": "a.py"}')
        + "<｜tool▁calls▁begin｜>"
        + one.format(name="list_files", args='{"pattern": "*.py"}')
        + "<｜tool▁calls▁end｜>"
    )
    result = correct(reply(text), tools)
    assert [c.name for c in result.calls] == ["read_file", "list_files"]
    # a real code span before a call on its line still marks it quoted
    assert (
        correct(reply("Write `" + one.format(name="read_file", args='{"path": "a.py"}') + "`"), tools).calls
        == ()
    )


def test_an_invoke_body_that_is_a_json_object_is_the_arguments(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for text in (
        '<｜DSML｜tool_calls> <｜DSML｜invoke name="read_file"> { "path": "a.py" } </｜DSML｜invoke> </｜DSML｜tool_calls>',
        '<function_calls><invoke name="read_file">{"path": "a.py"}</invoke></function_calls>',
    ):
        result = correct(reply(text), tools)
        assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})], text
    cut = '<｜DSML｜tool_calls> <｜DSML｜invoke name="read_file"> { "path": "a.py"'
    assert correct(reply(cut), tools).calls == ()


def test_a_tool_name_with_attribute_arguments_as_the_body(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply("<tool_call>read_file path=a.py start_line=3</tool_call>"), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py", "start_line": 3})]
    # not a requested tool: not a call
    assert correct(reply("<tool_call>fetch url=x</tool_call>"), tools).calls == ()


def test_an_indented_block_value_loses_its_layout_and_nothing_else(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # LocalAI's tests (set 4): the call laid out with indentation, the closing tag indented
    text = (
        "<tool_call>\n  <function=write_file>\n    <parameter=path>\n      a.md\n    </parameter>\n"
        "    <parameter=content>\n      # Title\n        indented line\n    </parameter>\n  </function>\n</tool_call>"
    )
    result = correct(reply(text), tools)
    assert [c.arguments for c in result.calls] == [{"path": "a.md", "content": "# Title\n  indented line"}]
    # not indented: a value's own last newline stays (a file's last line); a one-line value's is
    # layout (Tiny Aya's template writes <parameter=city>Paris\n</parameter>)
    flat = "<tool_call>\n<function=write_file>\n<parameter=path>a.md\n</parameter>\n<parameter=content>x = 1\ny = 2\n</parameter>\n</function>\n</tool_call>"
    assert [c.arguments for c in correct(reply(flat), tools).calls] == [
        {"path": "a.md", "content": "x = 1\ny = 2\n"}
    ]


def test_whitespace_around_a_one_line_key_value_is_layout(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # xLLM's GLM tests (set 4): "<arg_value>  Beijing  </arg_value>" is "Beijing"
    text = "<tool_call>read_file<arg_key>\tpath\r\n</arg_key><arg_value>  a.py  </arg_value></tool_call>"
    assert [c.arguments for c in correct(reply(text), tools).calls] == [{"path": "a.py"}]
    # a value of several lines keeps its whitespace
    text = (
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value>"
        "<arg_key>content</arg_key><arg_value>x = 1\ny = 2\n</arg_value></tool_call>"
    )
    assert [c.arguments for c in correct(reply(text), tools).calls] == [
        {"path": "a.py", "content": "x = 1\ny = 2\n"}
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('read_file<｜tool▁sep｜>{"path": "a.py"}', [("read_file", {"path": "a.py"})]),
        (
            'function<｜tool▁sep｜>  read_file \n```json\n{"path": "a.py"}\n```',
            [("read_file", {"path": "a.py"})],
        ),
        ('read_file<｜tool▁sep｜>{"path": "a.p', []),  # cut inside its object
        ('function<｜tool▁sep｜>read_file\n```json\n{"path": "a.py"}', []),  # fence never closed
        ('deploy<｜tool▁sep｜>{"path": "a.py"}', []),  # not a requested tool
        ('<tool_call>read_file\n{"path": "a.py"}</tool_call>', [("read_file", {"path": "a.py"})]),
        ('<tool_call>read_file\n{"path": "a.py"}', []),  # the wrapper never closed
        (
            '<tool_call>read_file\n{"path": "a.py"}\n<tool_call>read_file\n{"path": "a.py"}</tool_call>',
            [("read_file", {"path": "a.py"})],
        ),  # a duplicated opening: one call (Ollama's Laguna tests)
    ],
)
def test_a_body_marked_by_one_token_is_a_call_only_when_whole(text: str, expected: list, tools) -> None:  # type: ignore[no-untyped-def, type-arg]
    """DeepSeek bodies without their begin/end tokens and ``<tool_call>`` name lines (Ollama's
    DeepSeek 3, Cogito and Laguna tests, set 5, read after it was measured)."""
    from agentrun.messages import Message

    got = correct(Message(role="assistant", content=text), tools)
    assert [(c.name, c.arguments) for c in got.calls] == expected
