"""What set 22 showed (vLLM's Muse Glimmer, MiMo V2 and Solar Open 2 tests, SGLang's multi-format
tests, the AI SDK middleware's YAML-XML and Qwen3-Coder salvage tests, ROLL's MCP tool calls; read
2026-12-07 12:40 UTC, after set 23 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", location={"type": "string"}, unit={"type": "string"})
WRITE = tool("write_file", path={"type": "string"}, content={"type": "string"})


def test_a_tools_element_holding_a_yaml_mapping() -> None:
    # minpeter/ai-sdk-tool-call-middleware src/__tests__/protocols/yaml-xml-protocol/ behavior-matrix
    # and sonnet-block-scalar.regression tests
    text = "<get_weather>\nlocation: New York\nunit: celsius\n</get_weather>"
    assert calls(text, WEATHER) == [("get_weather", {"location": "New York", "unit": "celsius"})]
    block = "<write_file>\npath: a.html\ncontent: |\n  <html>\n    <body>Hi</body>\n  </html>\n</write_file>"
    assert calls(block, WRITE) == [
        ("write_file", {"path": "a.html", "content": "<html>\n  <body>Hi</body>\n</html>\n"})
    ]
    zip_code = tool("mail", zip={"type": "string"}, count={"type": "integer"})
    assert calls("<mail>\nzip: 02139\ncount: 3\n</mail>", zip_code) == [
        ("mail", {"zip": "02139", "count": 3})
    ]


def test_text_that_is_not_a_mapping_is_no_call_of_a_tool_that_takes_several() -> None:
    # the middleware's behavior-matrix "should emit original text when YAML is not a mapping"
    assert calls("<get_weather>\n- just a list\n- not an object\n</get_weather>", WEATHER) == []
    assert calls("<get_weather>\n[invalid: yaml: syntax:\n</get_weather>", WEATHER) == []
    assert calls("Use <get_weather>location: Paris</get_weather> to ask", WEATHER) == []  # in a sentence


def test_qwen3_coder_functions_with_their_parameters_as_elements() -> None:
    # the middleware's qwen3coder live-variant-salvage.test.ts (Qwen2.5; GLM-4.7 dropping the "<")
    text = (
        "<tool_call>\n<function=write_file>\n<path>\na.py\n</path>\n<content>\nx = 1\n</content>\n</function>"
    )
    assert calls(text, WRITE) == [("write_file", {"path": "a.py", "content": "x = 1"})]
    dropped = "<tool_call>function=write_file>\n<parameter=path>\na.py\n</parameter>\n</function>"
    assert calls(dropped, WRITE) == [("write_file", {"path": "a.py"})]


def test_parameters_written_before_their_function() -> None:
    # vllm tests/tool_parsers/test_mimov2_flash_tool_parser.py test_extract_multiple_tool_calls
    files = tool("list_files", command={"type": "string"})
    text = (
        "<tool_call>\n<parameter=command>ls -la</parameter>\n<function=list_files>\n</function>\n</tool_call>"
    )
    assert calls(text, files) == [("list_files", {"command": "ls -la"})]


def test_a_name_written_twice_and_prefixed_argument_keys() -> None:
    # vllm tests/tool_use/test_muse_glimmer_toolname_normalize.py test_doubled_bare_name_collapses
    city = tool("get_weather", city={"type": "string"})
    text = '<tool_call>{"name": "get_weather.get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    assert calls(text, city) == [("get_weather", {"city": "Paris"})]
    # alibaba/ROLL tests/agentic/tools/test_mcp_tools.py: {"tool_name", "tool_params"}
    add = tool("add", a={"type": "integer"})
    assert calls('<tool_call>{"tool_name": "add", "tool_params": {"a": 1}}</tool_call>', add) == [
        ("add", {"a": 1})
    ]


def test_values_between_tokens_are_text_as_written() -> None:
    # vllm tests/tool_parsers/test_solar_open2_tool_parser.py test_null_and_null_prefix_strings_stay_atomic,
    # test_partial_string_json_escaping_matches_non_stream (U+2028 and U+2029 are text, not spaces)
    search = tool("search", query={"type": "string"})
    block = "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>{v}<|tool_arg:end|>\n<|tool_call:end|>"
    assert calls(block.format(v=" NULL "), search) == [("search", {"query": " NULL "})]
    assert calls(block.format(v="a \u2028 b \u2029"), search) == [("search", {"query": "a \u2028 b \u2029"})]
