"""Every native format, on the engines' own test outputs (engine_outputs.py): the calls come
out exactly, and a cut-off copy of each output never runs a call."""

from __future__ import annotations

from typing import Any

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec
from tests.unit.repair.engine_outputs import CASES

_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def tools_for(expected: list[tuple[str, dict[str, Any]]]) -> list[ToolSpec]:
    """The tools an engine test declares, typed from the values it expects (as its request would)."""
    props: dict[str, dict[str, Any]] = {}
    for name, args in expected:
        for key, value in args.items():
            kind = _TYPES.get(type(value))
            props.setdefault(name, {})[key] = {"type": kind} if kind else {}
    names = dict.fromkeys(n for n, _ in expected)
    return [
        ToolSpec(name=n, description="", parameters={"type": "object", "properties": props.get(n, {})})
        for n in names
    ]


def run(text: str, expected: list[tuple[str, dict[str, Any]]], **kw: Any) -> Any:
    return correct(Message(role="assistant", content=text), tools_for(expected), **kw)


@pytest.mark.parametrize(
    ("family", "source", "text", "expected"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_engine_output_is_recovered_exactly(family: str, source: str, text: str, expected: list) -> None:
    result = run(text, expected)
    assert [(c.name, c.arguments) for c in result.calls] == expected, source
    assert all(e.kind != "truncated" for e in result.events)


def _cut_points(text: str) -> list[int]:
    """Where to cut: inside the last argument value and inside the closing markup."""
    points = set()
    for marker in ("</", "<|call|>", "<tool_call|>", "<end_function_call>", "}", "]", ")"):
        at = text.rfind(marker)
        if at > 0:
            points.add(at)
    last_value = max(text.rfind("Tokyo"), text.rfind("London"), text.rfind("celsius"), text.rfind("query1"))
    if last_value > 0:
        points.add(last_value + 2)  # mid-word
    points.update(range(1, len(text), max(1, len(text) // 25)))  # and anywhere at all
    return sorted(points)


@pytest.mark.parametrize(
    ("family", "source", "text", "expected"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_cut_off_engine_output_never_runs_a_partial_call(
    family: str, source: str, text: str, expected: list
) -> None:
    for cut in _cut_points(text):
        head = text[:cut]
        result = run(head, expected)
        whole = {(c.name, str(c.arguments)) for c in run(text, expected).calls}
        for call in result.calls:  # only calls that were already complete before the cut may run
            assert (call.name, str(call.arguments)) in whole, (source, head)
        # and with the limit reached, nothing runs at all
        assert run(head, expected, finish_reason="length").calls == ()


def test_xml_values_are_typed_through_anyof_schemas() -> None:
    # vLLM test_qwen3coder_tool_parser.py::test_extract_tool_calls_anyof_type_conversion (Pydantic v2 Optional[T])
    props = {
        "anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "type_as_array": {"type": ["integer", "null"]},
        "float_param": {"type": "float"},
    }
    spec = ToolSpec(name="test_anyof", description="", parameters={"type": "object", "properties": props})
    params = {
        "anyof_int": "5",
        "anyof_str": "5",
        "anyof_obj": '{"k": 1}',
        "type_as_array": "7",
        "float_param": "3.14",
    }
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    text = f"<tool_call>\n<function=test_anyof>\n{body}</function>\n</tool_call>"
    (call,) = correct(Message(role="assistant", content=text), [spec]).calls
    assert call.arguments == {
        "anyof_int": 5,
        "anyof_str": "5",
        "anyof_obj": {"k": 1},
        "type_as_array": 7,
        "float_param": 3.14,
    }


def _spec(name: str, *props: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="",
        parameters={"type": "object", "properties": {p: {"type": "string"} for p in props}},
    )


def test_kimi_bare_counter_id_names_the_one_tool_its_arguments_fit() -> None:
    # vLLM test_kimi_k2_tool_parser.py: "<|tool_call_begin|>0 <|tool_call_argument_begin|>{..}" names no tool
    text = (
        "Let me check. <|tool_calls_section_begin|><|tool_call_begin|>0 <|tool_call_argument_begin|>"
        '{"city": "Tokyo", "unit": "celsius"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    weather, read, flight = (
        _spec("get_weather", "city", "unit"),
        _spec("read_file", "path"),
        _spec("book_flight", "city"),
    )
    for tools in ([weather], [read, weather]):
        (call,) = correct(Message(role="assistant", content=text), tools).calls
        assert (call.name, call.arguments) == ("get_weather", {"city": "Tokyo", "unit": "celsius"})
    ambiguous = text.replace(', "unit": "celsius"', "")
    result = correct(Message(role="assistant", content=ambiguous), [weather, flight])
    assert result.calls == () and [r.reason for r in result.rejected] == ["unknown_tool"]
