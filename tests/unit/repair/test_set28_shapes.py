"""What set 28 showed (vLLM's Qwen3 XML literal-tag tests, openai/harmony's streamable parser, the AI SDK
middleware's tool-name salvage and relaxed-JSON option tests; read 2026-12-07 15:37 UTC, after set 29 was
named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

F = tool("f", v={"type": "string"})


@pytest.mark.parametrize("inner", ["<tool_call>", "<function=other>"])
def test_an_opening_tag_inside_a_value_that_closes_after_it_is_the_values_text(inner: str) -> None:
    # vllm-project/vllm tests/entrypoints/openai/tool_parsers/test_qwen3xml_tool_parser.py
    # test_opening_structural_tags_are_literal_inside_value
    text = f"<tool_call>\n<function=f>\n<parameter=v>\n{inner}\n</parameter>\n</function>\n</tool_call>"
    assert calls(text, F) == [("f", {"v": inner})]


def test_a_value_whose_close_was_dropped_still_ends_at_the_next_call() -> None:
    # the other side of the rule above: no </parameter> after the tag, so the tag opens the next call
    text = (
        "<tool_call>\n<function=f>\n<parameter=v>\nx\n</function>\n"
        "<tool_call>\n<function=f>\n<parameter=v>\ny\n</parameter>\n</function>\n</tool_call>"
    )
    assert calls(text, F) == [("f", {"v": "x"}), ("f", {"v": "y"})]


def test_a_harmony_message_to_a_recipient_the_request_offered_by_that_name() -> None:
    # openai/harmony tests (tests.rs test_streamable_parser): the client declares browser.search itself
    search = tool(
        "browser.search", query={"type": "string"}, topn={"type": "integer"}, source={"type": "string"}
    )
    text = (
        "<|channel|>analysis<|message|>Let's browse to confirm.<|end|><|start|>assistant<|channel|>commentary "
        'to=browser.search code<|message|>{"query": "current US president July 2025", "topn": 10, '
        '"source": "news"}<|call|><|start|>browser.search to=assistant<|channel|>commentary<|message|>'
        '{"result": "https://openai.com/"}<|end|>'
    )
    assert calls(text, search) == [
        ("browser.search", {"query": "current US president July 2025", "topn": 10, "source": "news"})
    ]
    # the same built-in recipient the request did not offer stays the server's
    assert calls(text, tool("other")) == []


@pytest.mark.parametrize(
    "text",
    [
        '<call="alpha">body</call>',
        "<tool='alpha'>body</tool>",
        "<invoke=alpha>body</invoke>",
        '<function = "alpha">body</function>',
        '<function="  alpha  ">body</function>',
        "<function=alpha>body</function>",
        "<call name='alpha'>body</call>",
    ],
)
def test_a_call_tags_name_as_its_value_and_a_tool_taking_no_input(text: str) -> None:
    # minpeter/ai-sdk-tool-call-middleware tool-name-salvage.test.ts: the tool takes no argument, so the
    # element's text is no input of it
    assert calls(text, tool("alpha")) == [("alpha", {})]


def test_plain_text_under_a_qwen_function_is_a_one_input_tools_input() -> None:
    shell = tool("shell", command={"type": "string"})
    assert calls("<function=shell>\nls -la\n</function>", shell) == [("shell", {"command": "ls -la"})]
    # a tool with two inputs gets no call from one text
    write = tool("write", path={"type": "string"}, content={"type": "string"})
    assert calls("<function=write>\nhello\n</function>", write) == []


def test_markup_metadata_attributes_are_not_arguments() -> None:
    # tool-name-salvage.test.ts "does not treat data-name as the call name attribute"
    text = '<tool_call><function data-name="wrong"><name>right</name></function></tool_call>'
    assert calls(text, tool("right")) == [("right", {})]


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ('name{name:"ok",arguments:{}}END', {}),
        ('name:{name:"ok",arguments:{x:1, name:{a:1}}}END', {"x": 1, "name": {"a": 1}}),
    ],
)
def test_relaxed_json_with_unquoted_keys(text: str, args: dict[str, object]) -> None:
    # the middleware's options.test.ts RJSON tests (custom delimiters "name"/"END" around the call)
    ok = tool("ok", x={"type": "integer"}, name={"type": "object"})
    assert calls(text, ok) == [("ok", args)]


def test_relaxed_json_naming_a_tool_not_offered_is_no_call() -> None:
    assert calls('{name:"other",arguments:{}}', tool("ok")) == []
