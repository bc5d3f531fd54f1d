"""What set 11 showed (DSPy's chat adapter, griptape's Actions, vLLM-Ascend's DSML patch; read after
it was measured and set 12 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"})
# stanfordnlp/dspy tests/adapters/test_chat_adapter.py::test_chat_adapter_toolcalls_vague_match
DSPY = "[[ ## tool_calls ## ]]\n[{'name': 'get_weather', 'args': {'city': 'Paris'}]"


def test_a_lists_close_ends_the_call_left_open_in_it() -> None:
    assert calls(DSPY, WEATHER) == [("get_weather", {"city": "Paris"})]
    for cut in range(1, len(DSPY)):  # before the list's close, the call is still open: nothing runs
        assert calls(DSPY[:cut], WEATHER, finish_reason=None) == [], DSPY[:cut]
        assert calls(DSPY[:cut], WEATHER, finish_reason="length") == []


MOCK = tool("MockTool_test", test={"type": "string"})
# griptape-ai/griptape tests/unit/tasks/test_actions_subtask.py::test_input_with_multiline_actions
GRIPTAPE = (
    "Thought: need to test\nActions:\nFoobarfoobar baz}!@#$%^&*()123(*!378934)\n\n```json\n"
    '[{"tag": "foo", "name": "MockTool",\n"path": "test",\n\n"input": \n{"test":\n"test\n\ninput\n\nwith\nnewlines"}}]'
    "```!@#$%^&*()123(*!378934)Response: test response\nAnswer: test output"
)


def test_a_toolkits_activity_is_named_by_both_keys_and_a_fence_closes_after_its_json() -> None:
    assert calls(GRIPTAPE, MOCK) == [("MockTool_test", {"test": "test\n\ninput\n\nwith\nnewlines"})]
    one_line = 'Actions: [{"tag": "foo", "name": "MockTool", "path": "test", "input": {"test": "value"}}]'
    assert calls(one_line, MOCK) == [("MockTool_test", {"test": "value"})]


def test_a_path_beside_a_name_is_never_a_call_to_the_name_alone() -> None:
    """A flattened call whose argument is ``path`` names no requested tool with the path joined on,
    and another activity of the toolkit is not the offered one (beyond the name rules' one-letter
    typo: ``MockTool_tests`` would be)."""
    read = tool("read_file", path={"type": "string"})
    assert calls('{"name": "read_file", "path": "notes.txt"}', read) == []
    assert calls('{"name": "MockTool", "path": "remove", "input": {"test": "x"}}', MOCK) == []


PLAN = tool("plan_trip", days={"type": "integer"}, cities={"type": "array", "items": {"type": "string"}})
# vllm-project/vllm-ascend tests/ut/patch/platform/test_patch_deepseek_v4_tool_call_parser.py
# ::test_streaming_wrapper_param_arguments_fragment (its arguments shortened)
DSML = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="plan_trip">\n'
    '<｜DSML｜parameter name="__vllm_param_arguments__" string="false">{"days":3,"cities":["Beijing","Tokyo"]}'
    "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)


def test_one_undeclared_key_around_the_declared_arguments_is_a_wrapper() -> None:
    assert calls(DSML, PLAN) == [("plan_trip", {"days": 3, "cities": ["Beijing", "Tokyo"]})]
    other = DSML.replace('"days":3', '"weeks":3')  # not all declared: the object is an argument
    assert calls(other, PLAN) != [("plan_trip", {"weeks": 3, "cities": ["Beijing", "Tokyo"]})]
