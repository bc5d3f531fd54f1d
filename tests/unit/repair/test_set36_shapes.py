"""What set 36 showed (SGLang's compatibility and Kimi K2 inference tests; read 2026-12-07 18:45 UTC,
after set 37 was named), as shapes."""

from __future__ import annotations

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec
from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, days={"type": "integer"})


def test_a_stray_line_between_a_named_invokes_parameters_is_skipped_and_kept_in_an_event() -> None:
    # sgl-project/sglang test/registered/unit/function_call/test_function_call_compatibility.py
    # test_skipped_garbage_inside_m2_invoke_recovers_and_records (vLLM's MiniMax M2 reader skips it too)
    text = (
        '<minimax:tool_call>\n<invoke name="get_weather">\nJUNK that matches no tag\n'
        '<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>'
    )
    result = correct(Message(role="assistant", content=text), [WEATHER], finish_reason="stop")
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Paris"})]
    fixed = [e for e in result.events if e.detail == "stray_text"]
    assert fixed and "JUNK that matches no tag" in (fixed[0].before or "")


def test_words_on_a_parameters_line_or_in_a_cut_call_still_send_the_body_back() -> None:
    # not skipped: text on a parameter's own line, a call cut before its close
    for text in (
        '<invoke name="get_weather">note <parameter name="city">Paris</parameter>\n</invoke>',
        '<invoke name="get_weather">\nJUNK\n<parameter name="city">Paris</parameter>\n',
    ):
        assert calls(text, WEATHER) == []


def test_a_call_under_an_id_is_not_named_by_a_tool_whose_schema_points_at_nothing() -> None:
    # test_kimik2_inference.py test_unresolvable_call_is_skipped_without_losing_next_explicit_call: the
    # one tool the arguments fit has a $ref to a missing $defs entry, so what it takes is not known
    broken = ToolSpec(
        name="delete",
        description="",
        parameters={
            "$ref": "#/$defs/missing",
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    )
    weather = tool("weather", city={"type": "string"})
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>call_3<|tool_call_argument_begin|>"
        '{"path":"/x"}<|tool_call_end|><|tool_call_begin|>functions.weather:4<|tool_call_argument_begin|>'
        '{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    assert calls(text, broken, weather) == [("weather", {"city": "Paris"})]
    whole = ToolSpec(
        name="delete", description="", parameters={**broken.parameters, "$defs": {"missing": {}}}
    )
    assert calls(text, whole, weather) == [("delete", {"path": "/x"}), ("weather", {"city": "Paris"})]
