"""What sets 18 and 19 showed (llama.cpp's test-chat texts, vLLM's Gemma 4, CWM, Granite 4 and
Poolside tests, SGLang's Qwen3-Coder cases; read 2026-12-07 12:20 UTC, after sets 20 and 21 were
named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

BASH = tool("bash", command={"type": "string"})


def test_gemma4_calls_without_their_start_token() -> None:
    # vllm-project/vllm tests/tool_parsers/test_gemma4_regex_and_bare_calls.py TestGemma4FallbackFormats
    after_thought = '<|channel>thought\nI need to read it.\n<channel|>call:bash{command:<|"|>cat /w/e.c<|"|>}'
    assert calls(after_thought, BASH) == [("bash", {"command": "cat /w/e.c"})]
    assert calls('some prose\ncall:bash{command:<|"|>make -j8<|"|>}', BASH) == [
        ("bash", {"command": "make -j8"})
    ]
    assert calls('<|tool_call>:call:bash{command:<|"|>pytest<|"|>}', BASH) == [
        ("bash", {"command": "pytest"})
    ]
    weather = tool("get_weather", city={"type": "string"})
    assert calls('<call>get_weather{city:<|"|>Paris<|"|>}', weather) == [("get_weather", {"city": "Paris"})]
    search, read = tool("web-search", query={"type": "string"}), tool("fs.read_file", path={"type": "string"})
    assert calls('call:web-search{query:<|"|>gemma<|"|>}', search) == [("web-search", {"query": "gemma"})]
    assert calls('call:fs.read_file{path:<|"|>/w/M<|"|>}', read) == [("fs.read_file", {"path": "/w/M"})]


def test_a_bare_gemma4_call_needs_a_requested_tool_and_a_whole_body() -> None:
    assert calls('call:rm_all{path:<|"|>/<|"|>}', BASH) == []  # not a tool the request offered
    assert calls('call:bash{command:<|"|>make -j8', BASH) == []  # cut inside the string
    assert calls("Then call:bash{command:make} again", BASH) == []  # no Gemma 4 token, and words around it
    # vllm tests/tool_parsers/test_gemma4_utils.py test_strict_mode_ignores_fallback: the whole reply
    assert calls("call:bash{command:make}", BASH) == [("bash", {"command": "make"})]
    assert calls('to run it, `call:bash{command:<|"|>ls<|"|>}` works', BASH) == []  # quoted in prose


def test_code_world_model_tool_blocks() -> None:
    # vllm tests/tool_parsers/test_cwm_tool_parser.py test_extract_tool_calls_multiple_tools,
    # test_csm_tool_parser.py test_extract_tool_calls_shorthand_missing_gt_uses_label_as_tool_name
    terminal, python = (
        tool("terminal", command={"type": "string"}),
        tool("python", command={"type": "string"}),
    )
    two = "preamble\n<tool: function>\nterminal echo hi\n</tool>\n<tool: function>\nterminal echo bye\n</tool>\n"
    assert calls(two, terminal) == [
        ("terminal", {"command": "echo hi"}),
        ("terminal", {"command": "echo bye"}),
    ]
    shorthand = 'prefix\n</think> <tool: python import os; print(os.listdir("_p")) </tool>\n'
    assert calls(shorthand, python) == [("python", {"command": 'import os; print(os.listdir("_p"))'})]
    assert calls("<tool: python>\nimport os\n</tool>", python) == [("python", {"command": "import os"})]
    assert calls("<tool: function>\nterminal echo hi\n", terminal) == []  # never closed: cut off?
    assert calls("```html\n<tool: function>\nterminal echo hi\n</tool>\n```", terminal) == []  # shown


def test_an_indented_line_keeps_its_layout_in_an_arg_value() -> None:
    # vllm tests/tool_parsers/test_poolside_v1_tool_parser.py test_responses_extract_tool_calls_with_flat_tools
    write = tool("write_file", content={"type": "string"})
    text = "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>  x = 1\n</arg_value>\n</tool_call>"
    assert calls(text, write) == [("write_file", {"content": "  x = 1\n"})]
    padded = (
        "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>  x = 1  </arg_value>\n</tool_call>"
    )
    assert calls(padded, write) == [("write_file", {"content": "x = 1"})]  # xLLM's padding is layout


def test_parameters_closed_by_the_next_tag() -> None:
    # sgl-project/sglang test/registered/function_call/test_qwen3_coder_detector/test_cases.py
    # test_implicit_parameter_close
    weather = tool("get_weather", location={"type": "string"}, days={"type": "integer"})
    text = "Text\n\n<function=get_weather>\n<parameter=location>Paris\n<parameter=days>3\n</function>"
    assert calls(text, weather) == [("get_weather", {"location": "Paris", "days": 3})]


def test_kimi_k2_calls_while_it_thinks() -> None:
    # ggml-org/llama.cpp tests/test-chat.cpp streaming_kimi_k2_call_in_think_then_content
    fn = tool("f", name={"type": "string"})
    call = '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"name": "J"}'
    text = (
        f"<think>I'm thinking{call}<|tool_call_end|><|tool_calls_section_end|>I'm still thinking</think>Hello"
    )
    assert calls(text, fn) == [("f", {"name": "J"})]
    assert calls(f"<think>I'm thinking{call}", fn, finish_reason=None) == []  # cut inside the arguments


def test_functionary_python_takes_the_code() -> None:
    # llama.cpp tests/test-chat.cpp functionary_v32 "python\n# This is a program:\nprint('hey')"
    python = tool("python", code={"type": "string"})
    text = "python\n# This is a program:\nprint('hey')"
    assert calls(text, python) == [("python", {"code": "# This is a program:\nprint('hey')"})]
    assert calls(text, python, finish_reason=None) == []  # the code may go on: not yet whole
    assert calls(text, tool("run", code={"type": "string"})) == []  # no tool named python
