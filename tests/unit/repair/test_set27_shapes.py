"""What set 27 showed (vLLM-Ascend's MiniMax M3 parser tests, transformers' response-parsing tests; read
2026-12-07 13:24 UTC, after set 28 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

SEP = "]<]minimax[>["
ORDER = tool(
    "create_order",
    user_id={"type": "integer"},
    shipping={"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
    items={
        "type": "array",
        "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}},
    },
)


def test_minimax_m3_separator_tokens_between_tags() -> None:
    # vllm-project/vllm-ascend tests/ut/patch/.../test_patch_minimax_m3_tool_call_parser.py (unmerged PR 11420)
    weather = tool("get_weather", city={"type": "string"})
    text = (
        f'Let me check. {SEP}<tool_call>\n{SEP}<invoke name="get_weather">{SEP}<city>Seattle{SEP}</city>'
        f"{SEP}</invoke>\n{SEP}</tool_call>"
    )
    assert calls(text, weather) == [("get_weather", {"city": "Seattle"})]


def test_an_array_items_fields_without_their_item_element() -> None:
    # the same file's TestRoundtrip test_complete_tool_call_roundtrip
    text = (
        '<tool_call>\n<invoke name="create_order"><user_id>42</user_id><shipping><city>Singapore</city>'
        "<zip>018956</zip></shipping><items><sku>book-001</sku><qty>2</qty></items></invoke>\n</tool_call>"
    )
    assert calls(text, ORDER) == [
        (
            "create_order",
            {
                "user_id": 42,
                "shipping": {"city": "Singapore", "zip": 18956},
                "items": [{"sku": "book-001", "qty": 2}],
            },
        )
    ]


def test_key_value_lines_in_a_qwen3_coder_function() -> None:
    # huggingface/transformers tests/utils/test_chat_parsing.py test_kv_lines_string_args_are_coerced
    alarm = tool("set_alarm", hour={"type": "integer"}, enabled={"type": "boolean"})
    text = "<tool_call>\n<function=set_alarm>\nhour: 7\nenabled: true\n</tool_call>"
    assert calls(text, alarm) == [("set_alarm", {"hour": 7, "enabled": True})]
