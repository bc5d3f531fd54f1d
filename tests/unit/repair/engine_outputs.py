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

KIMI = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"


def _kimi(tool_id: str, args: str) -> str:
    return f"<|tool_call_begin|>{tool_id} <|tool_call_argument_begin|>{args}<|tool_call_end|>"


LLAMA3 = '{"name": "searchTool", "parameters": {"query": "test1"}}'
CITY3 = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
CITY3_JSON = (
    '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}'
)

CASES += [
    # --- Kimi K2 (vLLM test_kimi_k2_tool_parser.py)
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "I'll check. " + KIMI.format(_kimi("functions.get_weather:0", '{"city": "Beijing"}')),
        [("get_weather", {"city": "Beijing"})],
    ),
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "Multiple tasks. "
        + KIMI.format(
            _kimi("functions.get_weather:0", '{"city": "New York"}')
            + _kimi("functions.get_news:1", '{"topic": "technology"}')
            + _kimi("functions.send_email:2", '{"to": "user@example.com", "subject": "Daily Update"}')
        ),
        [
            ("get_weather", {"city": "New York"}),
            ("get_news", {"topic": "technology"}),
            ("send_email", {"to": "user@example.com", "subject": "Daily Update"}),
        ],
    ),
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "Process HTML. " + KIMI.format(_kimi("functions.process_html:0", '{"html": "<div>content</div>"}')),
        [("process_html", {"html": "<div>content</div>"})],
    ),
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "Formatted. "
        + KIMI.format(_kimi("functions.process_data:0", '{\n  "name": "test",\n  "value": 123\n}')),
        [("process_data", {"name": "test", "value": 123})],
    ),
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "No prefix. " + KIMI.format(_kimi("get_weather:0", '{"city": "Tokyo"}')),
        [("get_weather", W)],
    ),
    (
        "kimi_k2",
        VT + "test_kimi_k2_tool_parser.py",
        "Empty args. " + KIMI.format(_kimi("functions.test:0", "{}")),
        [("test", {})],
    ),
    # --- GLM 4.5 / 4.7 (vLLM test_glm47_moe_tool_parser.py, test_glm4_moe_tool_parser.py)
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "<tool_call>get_current_date</tool_call>",
        [("get_current_date", {})],
    ),
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "<tool_call>get_current_date\n</tool_call>",
        [("get_current_date", {})],
    ),
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
        [("get_weather", {"city": "Beijing"})],
    ),
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
        [("get_weather", {"city": "Beijing"})],
    ),
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "Checking.<tool_call>get_current_date</tool_call>",
        [("get_current_date", {})],
    ),
    (
        "glm47",
        VT + "test_glm47_moe_tool_parser.py",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value></tool_call>",
        [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})],
    ),
    (
        "glm45",
        VT + "test_glm4_moe_tool_parser.py",
        "<tool_call>get_current_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n<arg_key>state"
        "</arg_key>\n<arg_value>TX</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>fahrenheit</arg_value>\n</tool_call>",
        [("get_current_weather", CITY3)],
    ),
    # --- xLAM (vLLM test_xlam_tool_parser.py)
    (
        "xlam",
        VT + "test_xlam_tool_parser.py",
        "["
        + CITY3_JSON
        + ', {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": '
        '"fahrenheit"}}]',
        [
            ("get_current_weather", CITY3),
            ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
        ],
    ),
    (
        "xlam",
        VT + "test_xlam_tool_parser.py",
        "<think>I'll help you with that.</think>[" + CITY3_JSON + "]",
        [("get_current_weather", CITY3)],
    ),
    (
        "xlam",
        VT + "test_xlam_tool_parser.py",
        "I'll help you with that.\n```json\n[" + CITY3_JSON + "]\n```",
        [("get_current_weather", CITY3)],
    ),
    (
        "xlam",
        VT + "test_xlam_tool_parser.py",
        "I'll check the weather for you.[TOOL_CALLS][" + CITY3_JSON + "]",
        [("get_current_weather", CITY3)],
    ),
    (
        "xlam",
        VT + "test_xlam_tool_parser.py",
        "I'll help you check the weather.<tool_call>[" + CITY3_JSON + "]</tool_call>",
        [("get_current_weather", CITY3)],
    ),
    # --- Llama 3 JSON (vLLM test_llama3_json_tool_parser.py)
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?',
        [("getOpenIncidentsTool", {})],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}',
        [("searchTool", {"query": "test query", "limit": 10})],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        LLAMA3 + '; {"name": "getOpenIncidentsTool", "parameters": {}}; '
        '{"name": "searchTool", "parameters": {"query": "test2"}}',
        [
            ("searchTool", {"query": "test1"}),
            ("getOpenIncidentsTool", {}),
            ("searchTool", {"query": "test2"}),
        ],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        '{"name": "searchTool", "parameters": {"query": "test {value} [complex]","nested": {"inner": "more {brackets}"}}}',
        [("searchTool", {"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}})],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        '{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}',
        [("parserTool", {"text": 'He said "Hello {world}"'})],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
        [("searchTool", {"query": "test"})],
    ),
    (
        "llama3_json",
        VT + "test_llama3_json_tool_parser.py",
        LLAMA3 + "\n" + '{"name": "getOpenIncidentsTool", "parameters": {}}',
        [("searchTool", {"query": "test1"}), ("getOpenIncidentsTool", {})],
    ),
    (
        "llama3_json",
        "vLLM llama3_json (python_tag)",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}',
        [("get_weather", W)],
    ),
    # --- Hermes / Qwen 2.5 (vLLM test_hermes_tool_parser.py)
    (
        "hermes",
        VT + "test_hermes_tool_parser.py",
        '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": '
        '"fahrenheit"}}\n</tool_call>',
        [("get_current_weather", CITY3)],
    ),
    (
        "hermes",
        VT + "test_hermes_tool_parser.py",
        "I'll check.\n<tool_call>\n" + CITY3_JSON + "\n</tool_call>\n<tool_call>\n"
        '{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}\n</tool_call>',
        [
            ("get_current_weather", CITY3),
            ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
        ],
    ),
    (
        "hermes",
        VT + "test_hermes_tool_parser.py (end tag eaten as a stop string)",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n',
        [("get_weather", W)],
    ),
    # --- DeepSeek V3 / R1 and V3.1 (vLLM test_deepseekv3_tool_parser.py, test_deepseekv31_tool_parser.py)
    (
        "deepseek_v3",
        VT + "test_deepseekv3_tool_parser.py",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Tokyo"}\n```'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [("get_weather", W)],
    ),
    (
        "deepseek_v31",
        VT + "test_deepseekv31_tool_parser.py",
        'Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Tokyo"}'
        '<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"timezone": "Asia/Tokyo"}<｜tool▁call▁end｜>'
        "<｜tool▁calls▁end｜>",
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    # --- Qwen3-Coder / Qwen3 XML (vLLM test_qwen3coder_tool_parser.py)
    (
        "qwen3_coder",
        VT + "test_qwen3coder_tool_parser.py",
        "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n"
        "</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        [("get_current_weather", CITY3)],
    ),
    (
        "qwen3_coder",
        VT + "test_qwen3coder_tool_parser.py (typed by schema)",
        "Sure!\n<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n"
        '{"width": 10, "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
        [
            (
                "calculate_area",
                {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2},
            )
        ],
    ),
    # --- Granite, InternLM2, Llama 4 pythonic, pythonic, MiniMax M2, DeepSeek V3.2 DSML
    (
        "granite",
        VT + "test_granite_tool_parser.py",
        '<|tool_call|>[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": '
        '"fahrenheit"}}]',
        [("get_current_weather", CITY3)],
    ),
    (
        "internlm2",
        VT + "test_internlm2_tool_parser.py",
        'Sure.<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>',
        [("get_weather", W)],
    ),
    (
        "llama4_pythonic",
        VT + "test_llama4_pythonic_tool_parser.py",
        "<|python_start|>[get_weather(city='San Francisco', metric='celsius'), get_weather()]<|python_end|>",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"}), ("get_weather", {})],
    ),
    (
        "pythonic",
        VT + "test_pythonic_tool_parser.py",
        "[register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, "
        "passed_test=True, aliases=['John', 'Johnny'])]",
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
        "pythonic",
        VT + "test_pythonic_tool_parser.py",
        "[get_weather(city='Martha\\'s Vineyard', metric='\\\"cool units\\\"')]",
        [("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
    ),
    (
        "pythonic",
        VT + "test_pythonic_tool_parser.py",
        "[do_something_cool(additional_data={})]",
        [("do_something_cool", {"additional_data": {}})],
    ),
    (
        "minimax_m2",
        VT + "test_minimax_m2_tool_parser.py",
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Tokyo</parameter>\n</invoke>\n'
        '<invoke name="get_time">\n<parameter name="timezone">Asia/Tokyo</parameter>\n</invoke>\n</minimax:tool_call>',
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "deepseek_v32",
        VT + "test_deepseekv32_tool_parser.py",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Tokyo'
        '</｜DSML｜parameter>\n<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
        "</｜DSML｜function_calls>",
        [("get_weather", {"city": "Tokyo", "days": 3})],
    ),
    (
        "lfm2",
        VT + "test_lfm2_tool_parser.py",
        '<|tool_call_start|>[get_weather(city="Tokyo"), get_time(timezone="Asia/Tokyo")]<|tool_call_end|>',
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "granite_20b_fc",
        VT + "test_granite_20b_fc_tool_parser.py",
        '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}\n<function_call> {"name": "get_time", '
        '"arguments": {"timezone": "Asia/Tokyo"}}',
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "functionary_v32",
        "llama.cpp tests/test-chat.cpp (Functionary v3.2)",
        '>>>get_weather\n{"city": "Tokyo"}',
        [("get_weather", W)],
    ),
    (
        "functionary_v31",
        "llama.cpp tests/test-chat.cpp (Functionary v3.1 Llama 3.1)",
        '<function=get_weather>{"city": "Tokyo"}</function>',
        [("get_weather", W)],
    ),
]

LC = "llama.cpp tests/test-chat.cpp"
SF = [("special_function", {"arg1": 1})]
CASES += [
    # --- llama.cpp's parsers accept these shapes from the same families (special_function(arg1: int))
    ("hermes_2_pro", LC, '<function=special_function>{"arg1": 1}</function>', SF),
    ("hermes_2_pro", LC, '<function name="special_function">\n{"arg1": 1}\n</function>', SF),
    ("hermes_2_pro", LC, '<tool>\n  {"name": "special_function", "arguments": {"arg1": 1}}\n</tool>', SF),
    ("hermes_2_pro", LC, '<tools>\n  {"name": "special_function", "arguments": {"arg1": 1}}\n</tools>', SF),
    (
        "hermes_2_pro",
        LC,
        '<response>\n  {"name": "special_function", "arguments": {"arg1": 1}}\n</response>',
        SF,
    ),
    (
        "hermes_2_pro",
        LC,
        '```xml\n<response>\n    {"name": "special_function", "arguments": {"arg1": 1}}\n</response>\n```',
        SF,
    ),
    ("hermes_2_pro", LC, '```json\n {"name": "special_function", "arguments": {"arg1": 1}} \n```', SF),
    ("hermes_2_pro", LC, '<json>{"name": "special_function", "arguments": {"arg1": 1}}</json>', SF),
    ("functionary_v32", LC, 'special_function\n{"arg1": 1}', SF),
    ("functionary_v32", LC, 'all\nHello, world!\nWhat\'s up?>>>special_function\n{"arg1": 1}', SF),
    ("firefunction_v2", LC, ' functools[{"name": "special_function", "arguments": {"arg1": 1}}]', SF),
    (
        "mistral_nemo",
        LC,
        '[TOOL_CALLS][{"name": "special_function", "arguments": {"arg1": 1}, "id": "123456789"}]',
        SF,
    ),
    ("magistral", LC, '[THINK]I\'m\nthinking[/THINK][TOOL_CALLS]special_function[ARGS]{"arg1": 1}', SF),
    (
        "command_r7b",
        LC,
        '<|START_THINKING|>I\'m\nthinking<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", '
        '"tool_name": "special_function", "parameters": {"arg1": 1}}\n]<|END_ACTION|>',
        SF,
    ),
    (
        "deepseek_r1",
        LC,
        "<think>I'm\nthinking</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        'special_function\n```json\n{"arg1": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        SF,
    ),
    (
        "llama3_builtin",
        LC,
        "<|python_tag|>python.call(code=\"print('hey')\")",
        [("python", {"code": "print('hey')"})],
    ),
    (
        "lfm2",
        LC,
        '<|tool_call_start|>[{"name": "special_function", "arguments": {"arg1": 1}}]<|tool_call_end|>',
        SF,
    ),
    (
        "gpt_oss",
        LC,
        "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.special_function <|constrain|>json<|message|>{"arg1": 1}',
        SF,
    ),
    (
        "gpt_oss",
        "SGLang test/srt/function_call/test_gpt_oss_detector.py",
        "<|channel|>analysis<|message|>Need to gather data<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_current_weather<|constrain|>json<|message|>{"location": "San Francisco, CA"}<|call|>'
        '<|channel|>commentary to=functions.get_current_stock_price<|constrain|>json<|message|>{"symbol": "AAPL"}<|call|>',
        [
            ("get_current_weather", {"location": "San Francisco, CA"}),
            ("get_current_stock_price", {"symbol": "AAPL"}),
        ],
    ),
    (
        "mistral",
        "SGLang test/srt/function_call/test_mistral_detector.py",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        [("get_weather", {"city": "Paris"})],
    ),
]

OG = "Ollama model/parsers/gemma4_test.go"
OO = "Ollama model/parsers/olmo3_test.go"
CASES += [
    (
        "gemma4",
        OG,
        "<|tool_call>call:set_optional{value:null,nested:{value:null}}<tool_call|>",
        [("set_optional", {"value": None, "nested": {"value": None}})],
    ),
    (
        "gemma4",
        OG,
        f"<|tool_call>call:bash{{command:{Q}date\n{Q}}}<tool_call|>",
        [("bash", {"command": "date\n"})],
    ),
    (
        "gemma4",
        OG,
        f'<|tool_call>call:search{{query:{Q}say "hello", then "goodbye"{Q}}}<tool_call|>',
        [("search", {"query": 'say "hello", then "goodbye"'})],
    ),
    (
        "gemma4",
        OG,
        f"<|tool_call>call:open_file{{path:{Q}C:\\users\\bob\\file.txt{Q}}}<tool_call|>",
        [("open_file", {"path": "C:\\users\\bob\\file.txt"})],
    ),
    (
        "gemma4",
        OG,
        f'<|tool_call>call:search{{query:"raw \\"quoted\\"",note:{Q}gemma "quoted"{Q}}}<tool_call|>',
        [("search", {"query": 'raw "quoted"', "note": 'gemma "quoted"'})],
    ),
    (
        "gemma4",
        OG,
        f'<|tool_call>call:search{{query:{Q}say "hello" and "bye"{Q}}}',
        [("search", {"query": 'say "hello" and "bye"'})],
    ),
    (
        "gemma4",
        OG,
        f"<|channel>thought\nI need to check the weather<channel|><|tool_call>call:get_weather{{location:{Q}Paris{Q}}}<tool_call|>",
        [("get_weather", {"location": "Paris"})],
    ),
    (
        "gemma4",
        OG,
        f'<|tool_call>call:plan{{steps:[{{title:{Q}step "one"{Q},done:false}},{{title:{Q}two{Q},done:true}}]}}<tool_call|>',
        [("plan", {"steps": [{"title": 'step "one"', "done": False}, {"title": "two", "done": True}]})],
    ),
    (
        "olmo3",
        OO,
        'Let me check the weather.<function_calls>get_weather(location="NYC")</function_calls>',
        [("get_weather", {"location": "NYC"})],
    ),
    (
        "olmo3",
        OO,
        '<function_calls>update_config(settings={"theme": "dark", "fontSize": 14})</function_calls>',
        [("update_config", {"settings": {"theme": "dark", "fontSize": 14}})],
    ),
    (
        "olmo3",
        OO,
        '<function_calls>search(query="say \\"hello\\"")</function_calls>',
        [("search", {"query": 'say "hello"'})],
    ),
    (
        "olmo3",
        OO,
        "<function_calls>clear_value(field=null)</function_calls>",
        [("clear_value", {"field": None})],
    ),
]

VL = VT + "test_lfm2_tool_parser.py"
CASES += [
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[label(tags={'urgent', 'bug'})]<|tool_call_end|>",
        [("label", {"tags": ["urgent", "bug"]})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[set_date(month=07, day=05)]<|tool_call_end|>",
        [("set_date", {"month": 7, "day": 5})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[bash(command='sed -n '360,450p' /testbed/sympy/matrices/common.py')]<|tool_call_end|>",
        [("bash", {"command": "sed -n '360,450p' /testbed/sympy/matrices/common.py"})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[exec(command='cat > f.py << EOF\nimport csv\nprint(1)\nEOF')]<|tool_call_end|>",
        [("exec", {"command": "cat > f.py << EOF\nimport csv\nprint(1)\nEOF"})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[exec(command='grep -F \"]\" log.txt')]<|tool_call_end|>",
        [("exec", {"command": 'grep -F "]" log.txt'})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[grocery.orderIngredients(ingredientList=[{'name': 'Lasagna noodles', 'amount': 250, "
        "'unit': 'g'}], deliveryAddress='845 Willow Lane, Springfield, IL 62704')]<|tool_call_end|>",
        [
            (
                "grocery.orderIngredients",
                {
                    "ingredientList": [{"name": "Lasagna noodles", "amount": 250, "unit": "g"}],
                    "deliveryAddress": "845 Willow Lane, Springfield, IL 62704",
                },
            )
        ],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|>[get_candidate_status(candidate_id='12345'), bad(x=b'z')]<|tool_call_end|>",
        [("get_candidate_status", {"candidate_id": "12345"})],
    ),
    (
        "lfm2",
        VL,
        "<|tool_call_start|> [get_candidate_status(candidate_id='12345')]<|tool_call_end|>\nChecking the status.",
        [("get_candidate_status", {"candidate_id": "12345"})],
    ),
]

CASES += [
    (
        "deepseek_v31",
        VT + "test_deepseekv31_tool_parser.py",
        'some prefix text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>'
        '<｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> some suffix text',
        [("foo", {"x": 1}), ("bar", {"y": 2})],
    ),
    (
        "deepseek_v31",
        VT + "test_deepseekv31_tool_parser.py",
        'normal text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("foo", {"x": 1})],
    ),
]

SG = "SGLang test/srt/test_function_call_parser.py"
CASES += [
    (
        "pythonic",
        SG,
        "Here's a tool call: [get_weather(location='New York', unit='celsius')]",
        [("get_weather", {"location": "New York", "unit": "celsius"})],
    ),
    (
        "pythonic",
        SG,
        "This is some text before [get_weather(location='London')]",
        [("get_weather", {"location": "London"})],
    ),
    (
        "pythonic",
        SG,
        "[get_weather(location='Tokyo')] Here's the forecast:",
        [("get_weather", {"location": "Tokyo"})],
    ),
    (
        "pythonic",
        SG,
        "[get_weather(location='Berlin')] and [search(query='restaurants')]",
        [("get_weather", {"location": "Berlin"}), ("search", {"query": "restaurants"})],
    ),
    (
        "pythonic",
        SG,
        "[search(query='test', config={'options': [1, 2], 'nested': {'key': 'value'}})]",
        [("search", {"query": "test", "config": {"options": [1, 2], "nested": {"key": "value"}}})],
    ),
    (
        "pythonic",
        SG,
        "[get_weather(location='Paris', data=[10, 20]), search(query='test', filters=['a', 'b'])]",
        [
            ("get_weather", {"location": "Paris", "data": [10, 20]}),
            ("search", {"query": "test", "filters": ["a", "b"]}),
        ],
    ),
    (
        "llama4_pythonic",
        SG,
        "User wants to get the weather in Mars. <|python_start|>[get_weather(location='Mars', "
        "unit='celsius')]<|python_end|> In this way we will get the weather in Mars.",
        [("get_weather", {"location": "Mars", "unit": "celsius"})],
    ),
]

GW = {"city": "Paris"}
CASES += [
    (
        "llama32",
        SG,
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}};'
        '{"name": "get_tourist_attractions", "parameters": {"city": "Paris"}}',
        [("get_weather", GW), ("get_tourist_attractions", GW)],
    ),
    (
        "llama32",
        SG,
        '<|python_tag|>{"name": "get_weather", "parameters": {}}<|python_tag|>'
        '{"name": "get_tourist_attractions", "parameters": {}}',
        [("get_weather", {}), ("get_tourist_attractions", {})],
    ),
    ("llama32", SG, '{"name": "get_weather", "parameters": {}} Some follow-up text', [("get_weather", {})]),
    (
        "llama32",
        SG,
        '{"name": "get_weather", "parameters": {{"name": "get_weather", "parameters": {}}',
        [("get_weather", {})],
    ),
    (
        "llama32",
        SG,
        'Some intro. <|python_tag|>{"name": "get_weather", "parameters": {}}',
        [("get_weather", {})],
    ),
    (
        "mistral",
        SG,
        'Here is some text before the tool call: [TOOL_CALLS] [{"name":"make_next_step_decision", '
        '"arguments":{"decision":"ANSWER", "content":"The answer is 42"}}]',
        [("make_next_step_decision", {"decision": "ANSWER", "content": "The answer is 42"})],
    ),
    (
        "deepseek_v3",
        SG,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city":"Shanghai"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_tourist_attractions\n'
        '```json\n{"city": "Beijing"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("get_weather", {"city": "Shanghai"}), ("get_tourist_attractions", {"city": "Beijing"})],
    ),
]

CASES += [
    (
        "qwen2_5_coder",
        VT + "test_qwen2_5_coder_tool_parser.py",
        '<tools>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</tools><tools>{"name": "get_time", "arguments": '
        '{"timezone": "Asia/Tokyo"}}</tools>',
        [("get_weather", W), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    (
        "hy_v4",
        VT + "test_hy_v4_tool_parser.py",
        "<tool_calls><tool_call>get_weather\n<arg_key>city</arg_key><arg_value>Tokyo</arg_value>\n"
        "<arg_key>unit</arg_key><arg_value>celsius</arg_value>\n</tool_call></tool_calls>",
        [("get_weather", {"city": "Tokyo", "unit": "celsius"})],
    ),
    (
        "granite",
        VT + "test_granite_tool_parser.py",
        '<tool_call> [{\n  "name": "get_weather",\n  "arguments": {"city": "Tokyo"}}]',
        [("get_weather", W)],
    ),
    (
        "step3p5",
        VT + "test_step3p5_tool_parser.py",
        "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>",
        [("get_current_weather", {"city": "Dallas", "state": "TX"})],
    ),
]

OC = "Ollama model/parsers/commandr_test.go"
CASES += [
    (
        "command_r_plus",
        OC,
        'Action: ```json\n[\n    {\n        "tool_name": "get_weather",\n        "parameters": '
        '{"location": "New York"}\n    },\n    {\n        "tool_name": "get_time",\n        "parameters": {"timezone": "EST"}'
        "\n    }\n]\n```",
        [("get_weather", {"location": "New York"}), ("get_time", {"timezone": "EST"})],
    ),
    (
        "command_r_plus",
        OC,
        "I'll look up the weather for you.\nAction: ```json\n"
        '[{"tool_name": "get_weather", "parameters": {"location": "NYC"}}]\n```',
        [("get_weather", {"location": "NYC"})],
    ),
    (
        "command_r_plus",
        OC,
        'Action: ```json\n[{"tool_name": "bash", "parameters": {"command": "pwd"}}]',
        [("bash", {"command": "pwd"})],
    ),
    (
        "command_r_plus",
        OC,
        'Action: ```json\n{\n    "tool_name": "read_file",\n    "parameters": {"path": "/etc/hosts"}\n}\n```',
        [("read_file", {"path": "/etc/hosts"})],
    ),
]
