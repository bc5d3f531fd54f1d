"""What set 33 showed (SGLang's ``test/registered/unit/function_call/`` tests; read 2026-12-07 16:04 UTC,
after set 34 was named), as shapes."""

from __future__ import annotations

from agentrun.toolset import ToolSpec
from tests.unit.repair.shapes import calls, tool


def test_a_property_by_local_reference() -> None:
    # sglang test_iquest_q1_detector.py test_schema_reference_preserves_numeric_string (pydantic's $defs)
    run = ToolSpec(
        name="run",
        parameters={
            "$defs": {"code": {"type": "string"}},
            "type": "object",
            "properties": {"code": {"$ref": "#/$defs/code"}},
        },
    )
    assert calls("<tool_call>run<arg_key>code</arg_key><arg_value>42</arg_value></tool_call>", run) == [
        ("run", {"code": "42"})
    ]


def test_a_composed_top_level_types_by_the_branch_the_arguments_pick() -> None:
    # test_root_combinator_tool_parsers.py (a const-marked oneOf whose first branch is a $ref), and
    # test_hunyuan_detector.py test_top_level_composed_schema_args (anyOf)
    acme = ToolSpec(
        name="acme",
        parameters={
            "type": "object",
            "$defs": {
                "Payload": {"type": "object", "properties": {"value": {"type": "string"}}},
                "Acme": {
                    "type": "object",
                    "properties": {"kind": {"const": "acme"}, "count": {"type": "integer"}},
                    "required": ["kind"],
                },
            },
            "oneOf": [
                {"$ref": "#/$defs/Acme"},
                {"type": "object", "properties": {"kind": {"const": "other"}}},
            ],
        },
    )
    text = "<tool_call>acme<arg_key>kind</arg_key><arg_value>acme</arg_value><arg_key>count</arg_key><arg_value>7</arg_value></tool_call>"
    assert calls(text, acme) == [("acme", {"kind": "acme", "count": 7})]
    composed = ToolSpec(
        name="composed",
        parameters={"anyOf": [{"type": "object", "properties": {"value": {"type": "integer"}}}]},
    )
    text = "<tool_call>composed<arg_key>value</arg_key><arg_value>7</arg_value></tool_call>"
    assert calls(text, composed) == [("composed", {"value": 7})]


def test_a_references_cycle_stops() -> None:
    node = ToolSpec(
        name="tree",
        parameters={
            "type": "object",
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
            "properties": {"root": {"$ref": "#/$defs/Node"}},
        },
    )
    text = '<tool_call>tree<arg_key>root</arg_key><arg_value>{"child": {"child": {}}}</arg_value></tool_call>'
    assert calls(text, node) == [("tree", {"root": {"child": {"child": {}}}})]


def test_a_drifted_parameter_close() -> None:
    # test_qwen3_coder_detector.py TestQwen3CoderDetectorMalformedParameterEnd
    weather = tool("get_weather", city={"type": "string"}, days={"type": "integer"})
    for drift in ("</parameter1>", "</parameter_function>", "</parameter"):
        text = (
            f"<tool_call>\n<function=get_weather>\n<parameter=city>\nShanghai\n{drift}\n<parameter=days>\n3\n"
            "</parameter>\n</function>\n</tool_call>"
        )
        assert calls(text, weather) == [("get_weather", {"city": "Shanghai", "days": 3})], drift


def test_thinking_under_a_family_prefix_and_a_mode() -> None:
    # test_k2_v3_detector.py: <ifm|think_fast>..</ifm|think_fast>, a call the thought only considers
    weather = tool("get_weather", city={"type": "string"})
    call = "<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>{}</ifm|arg_value></ifm|tool_call>"
    thought = f"<ifm|think_fast>Consider {call.format('Boston')} as hypothetical text.</ifm|think_fast>"
    assert calls(f" \n{thought}\nThe answer is 42.", weather) == []
    made = thought + "\n<ifm|tool_calls>\n" + call.format("Tokyo") + "\n</ifm|tool_calls>"
    assert calls(made, weather) == [("get_weather", {"city": "Tokyo"})]
