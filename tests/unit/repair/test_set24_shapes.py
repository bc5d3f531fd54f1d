"""What set 24 showed (SGLang's Kimi K2 detector tests of client-style call ids; read 2026-12-07 12:47 UTC,
after set 25 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

READ = tool("ReadFile", path={"type": "string"})
WEATHER = tool("get_weather", city={"type": "string"})
SECTION = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"
CALL = "<|tool_call_begin|>{}<|tool_call_argument_begin|>{}<|tool_call_end|>"


def test_kimi_k2_calls_under_a_client_style_id_are_named_by_their_arguments() -> None:
    # sgl-project/sglang test/registered/function_call/test_kimik2_detector.py TestKimiK2ClientStyleIdFallback
    for call_id in ("call_3", "toolu_01AkmjoowNgNx2qNfJzc8z2F", "0b3d1c2e-4f5a-6b7c-8d9e-0f1a2b3c4d5e"):
        text = SECTION.format(CALL.format(call_id, '{"path": "/a.py"}'))
        assert calls(text, READ, WEATHER) == [("ReadFile", {"path": "/a.py"})]
    mixed = SECTION.format(
        CALL.format("call_3", '{"path": "/a.py"}')
        + CALL.format("functions.get_weather:4", '{"city": "Paris"}')
    )
    assert calls(mixed, READ, WEATHER) == [
        ("ReadFile", {"path": "/a.py"}),
        ("get_weather", {"city": "Paris"}),
    ]


def test_arguments_that_fit_no_tool_or_several_name_none() -> None:
    # test_streaming_client_id_unresolvable_skips_only_that_section, TestKimiK2ToolNameInferenceStrictness
    unknown = SECTION.format(
        CALL.format("call_3", '{"unknown_key": 1}') + CALL.format("call_4", '{"city": "Paris"}')
    )
    assert calls(unknown, READ, WEATHER) == [("get_weather", {"city": "Paris"})]
    both = tool("Glob", path={"type": "string"})
    assert calls(SECTION.format(CALL.format("call_3", '{"path": "/x"}')), READ, both) == []  # two fit
