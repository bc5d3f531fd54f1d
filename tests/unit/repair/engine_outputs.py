"""Real model-output shapes, copied from the inference engines' own tool-parser tests.

Each entry: (family, source, text, expected calls). ``source`` names the test file the shape
comes from; tool names and arguments are the engines' (get_weather & co), and the tests give
the corrector a matching tool list typed from the expected values.
"""

from __future__ import annotations

from typing import Any

Q = '<|"|>'
VT = "vllm tests/tool_parsers/"
W = {"city": "Tokyo"}
H = "<|start|>assistant<|channel|>commentary to=functions."
HARMONY_ANALYSIS = (
    '<|channel|>analysis<|message|>User asks: "What is the weather in Tokyo?" We need to use '
    "get_current_weather tool.<|end|>"
)

CASES: list[tuple[str, str, str, list[tuple[str, dict[str, Any]]]]] = [
    # --- gpt-oss harmony (vLLM test_openai_tool_parser.py renders these with openai_harmony)
    (
        "gpt_oss",
        VT + "test_openai_tool_parser.py",
        HARMONY_ANALYSIS
        + H
        + 'get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>',
        [("get_current_weather", {"location": "Tokyo"})],
    ),
    (
        "gpt_oss",
        VT + "test_openai_tool_parser.py",
        HARMONY_ANALYSIS
        + H
        + 'get_current_weather <|constrain|>json<|message|>{\n"location": "Tokyo"\n}<|call|>',
        [("get_current_weather", {"location": "Tokyo"})],
    ),
    (
        "gpt_oss",
        VT + "test_openai_tool_parser.py (multiple, one without content type, one empty)",
        HARMONY_ANALYSIS
        + H
        + 'get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
        + H
        + 'get_user_location <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
        + H
        + 'no_content_type<|message|>{"location": "Tokyo"}<|call|>'
        + H
        + "empty_args <|constrain|>json<|message|>{}<|call|>",
        [
            ("get_current_weather", {"location": "Tokyo"}),
            ("get_user_location", {"location": "Tokyo"}),
            ("no_content_type", {"location": "Tokyo"}),
            ("empty_args", {}),
        ],
    ),
    (
        "gpt_oss",
        "openai/harmony README (recipient in the header, before the channel)",
        '<|start|>assistant to=functions.get_current_weather<|channel|>commentary json<|message|>{"location": '
        '"San Francisco"}<|call|>',
        [("get_current_weather", {"location": "San Francisco"})],
    ),
    (
        "gpt_oss",
        VT + "test_openai_tool_parser.py (with final content)",
        HARMONY_ANALYSIS + H + 'get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>This tool call will get the weather.<|return|>",
        [("get_current_weather", {"location": "Tokyo"})],
    ),
    # --- Gemma 4 (vLLM test_gemma4_tool_parser.py)
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"<|tool_call>call:get_weather{{location:{Q}London{Q}}}<tool_call|>",
        [("get_weather", {"location": "London"})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"<|tool_call>call:get_weather{{location:{Q}San Francisco{Q},unit:{Q}celsius{Q}}}<tool_call|>",
        [("get_weather", {"location": "San Francisco", "unit": "celsius"})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"Let me check the weather for you. <|tool_call>call:get_weather{{location:{Q}Paris{Q}}}<tool_call|>",
        [("get_weather", {"location": "Paris"})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"<|tool_call>call:get_weather{{location:{Q}London{Q}}}<tool_call|>"
        f"<|tool_call>call:get_time{{location:{Q}London{Q}}}<tool_call|>",
        [("get_weather", {"location": "London"}), ("get_time", {"location": "London"})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"<|tool_call>call:complex_function{{nested:{{inner:{Q}value{Q}}},list:[{Q}a{Q},{Q}b{Q}]}}<tool_call|>",
        [("complex_function", {"nested": {"inner": "value"}, "list": ["a", "b"]})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        "<|tool_call>call:set_status{is_active:true,count:42,score:3.14}<tool_call|>",
        [("set_status", {"is_active": True, "count": 42, "score": 3.14})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        "<|tool_call>call:get_status{}<tool_call|>",
        [("get_status", {})],
    ),
    (
        "gemma4",
        VT + "test_gemma4_tool_parser.py",
        f"<|tool_call>call:edit{{record_map:{{{Q}3{Q}:{Q}new text{Q}}}}}<tool_call|>",
        [("edit", {"record_map": {"3": "new text"}})],
    ),
    # --- FunctionGemma (vLLM test_functiongemma_tool_parser.py)
    (
        "functiongemma",
        VT + "test_functiongemma_tool_parser.py",
        "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>",
        [("get_weather", {"location": "London"})],
    ),
    (
        "functiongemma",
        VT + "test_functiongemma_tool_parser.py",
        "Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>Paris<escape>}"
        "<end_function_call>",
        [("get_weather", {"location": "Paris"})],
    ),
    (
        "functiongemma",
        VT + "test_functiongemma_tool_parser.py",
        "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>"
        "<start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>",
        [("get_weather", {"location": "London"}), ("get_time", {"timezone": "UTC"})],
    ),
    (
        "functiongemma",
        VT + "test_functiongemma_tool_parser.py",
        "<start_function_call>call:search{query:<escape>python<escape>limit:<escape>10<escape>}<end_function_call>",
        [("search", {"query": "python", "limit": 10})],
    ),
    # --- StepFun Step-3 (vLLM test_step3_tool_parser.py)
    (
        "step3",
        VT + "test_step3_tool_parser.py",
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">'
        "Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        [("get_weather", W)],
    ),
    (
        "step3",
        VT + "test_step3_tool_parser.py",
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">'
        "Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜>"
        '<steptml:invoke name="get_time"><steptml:parameter name="timezone">Asia/Tokyo</steptml:parameter>'
        "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "step3",
        VT + "test_step3_tool_parser.py",
        'Let me check the weather for you.\n\n<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather">'
        '<steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>'
        "\n\nI'll get that information.",
        [("get_weather", W)],
    ),
    (
        "step3",
        VT + "test_step3_tool_parser.py",
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="refresh"></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>",
        [("refresh", {})],
    ),
    (
        "step3",
        VT + "test_step3_tool_parser.py (whitespace is data)",
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n"
        '<steptml:invoke name="edit_file"><steptml:parameter name="old_string">    if x:\n        return 1\n'
        '</steptml:parameter><steptml:parameter name="indent"> 4 </steptml:parameter>'
        "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        [("edit_file", {"old_string": "    if x:\n        return 1\n", "indent": 4})],
    ),
    # --- Mistral (vLLM test_mistral_tool_parser.py, pre-v11 and v11+ tokenizers)
    (
        "mistral",
        VT + "test_mistral_tool_parser.py",
        '[TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5, "b": 4}}]',
        [("add", {"a": 3.5, "b": 4})],
    ),
    (
        "mistral",
        VT + "test_mistral_tool_parser.py",
        '[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}',
        [("add_this_and_that", {"a": 3.5, "b": 4})],
    ),
    (
        "mistral",
        VT + "test_mistral_tool_parser.py",
        '[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}',
        [("add", {"a": 3.5, "b": 4}), ("multiply", {"a": 3, "b": 6})],
    ),
    (
        "mistral",
        VT + "test_mistral_tool_parser.py",
        '[TOOL_CALLS]get_current_weather[ARGS]{"city": "San Francisco", "state": "CA", "unit": "celsius"}',
        [("get_current_weather", {"city": "San Francisco", "state": "CA", "unit": "celsius"})],
    ),
    # --- Command R7B / Command A (vLLM test_cohere_command_tool_parser.py)
    (
        "command_r",
        VT + "test_cohere_command_tool_parser.py",
        "<|START_THINKING|> i will call foo with query1<|END_THINKING|><|START_ACTION|>\n[\n"
        '    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}}\n]\n<|END_ACTION|>',
        [("foo", {"query": "query1"})],
    ),
    (
        "command_r",
        VT + "test_cohere_command_tool_parser.py",
        "<|START_THINKING|>first I think about foo<|END_THINKING|><|START_ACTION|>\n[\n"
        '    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}},\n'
        '    {"tool_call_id": "1", "tool_name": "bar", "parameters": {"x": 42}}\n]\n<|END_ACTION|>',
        [("foo", {"query": "query1"}), ("bar", {"x": 42})],
    ),
    # --- Apertus (vLLM test_apertus_tool_parser.py)
    (
        "apertus",
        VT + "test_apertus_tool_parser.py",
        '<|tools_prefix|>[{"get_weather": {"location": "London"}}]<|tools_suffix|>',
        [("get_weather", {"location": "London"})],
    ),
    (
        "apertus",
        VT + "test_apertus_tool_parser.py",
        'Let me check the weather for you. <|tools_prefix|>[{"get_weather": {"location": "Paris"}}]<|tools_suffix|>',
        [("get_weather", {"location": "Paris"})],
    ),
    (
        "apertus",
        VT + "test_apertus_tool_parser.py",
        '<|tools_prefix|>[{"get_weather": {"location": "London"}}, {"get_time": {"location": "London"}}]<|tools_suffix|>',
        [("get_weather", {"location": "London"}), ("get_time", {"location": "London"})],
    ),
    (
        "apertus",
        VT + "test_apertus_tool_parser.py (missing suffix)",
        '<|tools_prefix|>[{"get_weather": {"location": "San Francisco", "unit": "celsius"}}]',
        [("get_weather", {"location": "San Francisco", "unit": "celsius"})],
    ),
    (
        "apertus",
        VT + "test_apertus_tool_parser.py",
        '<|tools_prefix|>[{"complex_function": {"nested": {"inner": "value"}, "list": ["a", "b"]}}]<|tools_suffix|>',
        [("complex_function", {"nested": {"inner": "value"}, "list": ["a", "b"]})],
    ),
    # --- OLMo 3 (vLLM test_olmo3_tool_parser.py)
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py",
        "<function_calls>get_weather(city='San Francisco', metric='celsius')</function_calls>",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"})],
    ),
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py",
        "<function_calls>register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, "
        "role=null, passed_test=true, aliases=['John', 'Johnny'])</function_calls>",
        [
            (
                "register_user",
                {
                    "name": "John Doe",
                    "age": 37,
                    "address": {"city": "San Francisco", "state": "CA"},
                    "role": None,
                    "passed_test": True,
                    "aliases": ["John", "Johnny"],
                },
            )
        ],
    ),
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py",
        "<function_calls>get_weather(city='Martha\\'s Vineyard', metric='\\\"cool units\\\"')</function_calls>",
        [("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
    ),
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py",
        "<function_calls>get_weather(city='San Francisco', metric='celsius')\nget_weather()\n"
        "do_something_cool(steps=[])</function_calls>",
        [
            ("get_weather", {"city": "San Francisco", "metric": "celsius"}),
            ("get_weather", {}),
            ("do_something_cool", {"steps": []}),
        ],
    ),
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py (bad sibling)",
        "<function_calls>bad(x=b'z')\nget_weather(city='San Francisco', metric='celsius')</function_calls>",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"})],
    ),
    (
        "olmo3",
        VT + "test_olmo3_tool_parser.py (non-finite)",
        "<function_calls>calc(x=1e999)\nget_weather(city='San Francisco', metric='celsius')</function_calls>",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"})],
    ),
    # --- Seed-OSS (vLLM test_seed_oss_tool_parser.py)
    (
        "seed_oss",
        VT + "test_seed_oss_tool_parser.py",
        "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n"
        "</seed:tool_call>",
        [("get_weather", {"location": "Barcelona, Spain"})],
    ),
    (
        "seed_oss",
        VT + "test_seed_oss_tool_parser.py (a call quoted in the thinking)",
        "<seed:think>\nGot it. The format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, "
        "Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. Wait, let me go with "
        "that.</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n"
        "<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>",
        [("get_weather", {"location": "Barcelona, Spain", "unit": "celsius"})],
    ),
    # --- Jamba, Hunyuan A13B (<tool_calls>[..]</tool_calls>)
    (
        "jamba",
        VT + "test_jamba_tool_parser.py",
        ' Sure! let me call the tool for you.<tool_calls>[\n    {"name": "get_current_weather", "arguments": '
        '{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n]</tool_calls>',
        [("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})],
    ),
    (
        "jamba",
        VT + "test_jamba_tool_parser.py",
        ' <tool_calls>[\n    {"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": '
        '"fahrenheit"}},\n    {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": '
        '"fahrenheit"}}\n]</tool_calls>',
        [
            ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}),
            ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
        ],
    ),
    (
        "hunyuan",
        VT + "test_hunyuan_a13b_tool_parser.py",
        'I will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>',
        [("get_weather", {"city": "Boston"})],
    ),
    (
        "hunyuan",
        VT + "test_hunyuan_a13b_tool_parser.py",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]</tool_calls>\nThank you!',
        [("get_weather", {"city": "Seattle"})],
    ),
    (
        "hunyuan",
        VT + "test_hunyuan_a13b_tool_parser.py",
        '<tool_calls>[{"name": "complex_tool", "arguments": {"level1": {"level2": {"level3": {"value": 123}}}}}]'
        "</tool_calls>",
        [("complex_tool", {"level1": {"level2": {"level3": {"value": 123}}}})],
    ),
    (
        "hunyuan",
        VT + "test_hunyuan_a13b_tool_parser.py",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "北京"}}]</tool_calls>',
        [("get_weather", {"city": "北京"})],
    ),
    (
        "hunyuan",
        VT + "test_hunyuan_a13b_tool_parser.py",
        '<tool_calls>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 42}}]</tool_calls>',
        [("a", {}), ("b", {"x": 42})],
    ),
    # --- MiniCPM 5 (vLLM test_minicpm5xml_tool_parser.py)
    (
        "minicpm",
        VT + "test_minicpm5xml_tool_parser.py",
        'Intro before.\n<function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27'
        "</param></function>\nOutro after.\n",
        [("get_weather", {"city": "上海", "date": "2024-06-27"})],
    ),
    (
        "minicpm",
        VT + "test_minicpm5xml_tool_parser.py",
        '<function name="get_weather"><param name="city"><![CDATA[北\n京]]></param><param name="date">2024-06-27</param>'
        "</function>\n",
        [("get_weather", {"city": "北\n京", "date": "2024-06-27"})],
    ),
    (
        "minicpm",
        VT + "test_minicpm5xml_tool_parser.py",
        '<function\u0120name="get_weather"><param\u0120name="city">上海</param></function>\n',
        [("get_weather", {"city": "上海"})],
    ),
    (
        "minicpm",
        VT + "test_minicpm5xml_tool_parser.py",
        '<functionname="get_current_weather"><paramname="city">Dallas</param><paramname="state">TX</param>'
        '<paramname="unit">fahrenheit</param></function>',
        [("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})],
    ),
    (
        "minicpm",
        VT + "test_minicpm5xml_tool_parser.py",
        'Head\n<function name="get_weather"><param name="city">北京</param></function>\nTXT\n'
        '<function name="sum_values"><param name="nums">[7,8,9]</param><param name="exact">false</param></function>\n',
        [("get_weather", {"city": "北京"}), ("sum_values", {"nums": [7, 8, 9], "exact": False})],
    ),
    # --- Phi-4-mini (vLLM test_phi4mini_tool_parser.py)
    (
        "phi4_mini",
        VT + "test_phi4mini_tool_parser.py",
        'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
        [("get_weather", W)],
    ),
    (
        "phi4_mini",
        VT + "test_phi4mini_tool_parser.py",
        'functools[\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n  {"name": "get_time", "arguments": '
        '{"timezone": "Asia/Tokyo"}}\n]',
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "phi4_mini",
        VT + "test_phi4mini_tool_parser.py",
        'Let me check the weather for you.\nfunctools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]\n'
        "Would you like to know more?",
        [("get_weather", W)],
    ),
    (
        "phi4_mini",
        VT + "test_phi4mini_tool_parser.py",
        'functools[{\n  "name": "test_function",\n  "arguments": {\n    "quoted": "He said \\"hello\\"",\n'
        '    "path": "C:\\\\Users\\\\file.txt",\n    "newline": "line1\\nline2",\n    "unicode": "emoji: 🎉"\n  }\n}]',
        [
            (
                "test_function",
                {
                    "quoted": 'He said "hello"',
                    "path": "C:\\Users\\file.txt",
                    "newline": "line1\nline2",
                    "unicode": "emoji: 🎉",
                },
            )
        ],
    ),
    (
        "phi4_mini",
        VT + "test_phi4mini_tool_parser.py",
        'functools[{"name": "refresh", "arguments": {}}]',
        [("refresh", {})],
    ),
]
