"""What set 12 showed (LangChain.js's output parsers, AgentScope's tagged calls, sglang-jax's GLM
detector; read after it was measured and set 13 was named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

BLOGPOST = tool("blogpost", tool_input={"type": "string"})
SQL = "```sql\nSELECT * FROM orders\nJOIN users ON users.id = orders.user_id\nWHERE users.email = 'bud'```"
# langchain-ai/langchainjs structured_chat_output_parser.test.ts "Can parse JSON with text in front of it"
LANGCHAINJS = [
    'Here we have some boilerplate nonsense```json\n{\n "action": "blogpost",\n  "action_input": '
    "\"```sql\\nSELECT * FROM orders\\nJOIN users ON users.id = orders.user_id\\nWHERE users.email = 'bud'```\"\n}"
    "\n``` and at the end there is more nonsense",
    'Here we have some boilerplate nonsense```json\n{\n \t\r\n"action": "blogpost",\n\t\r  "action_input": '
    "\"```sql\\nSELECT * FROM orders\\nJOIN users ON users.id = orders.user_id\\nWHERE users.email = 'bud'```\""
    "\n\t\r}\n\n\n\t\r``` and at the end there is more nonsense",
]


@pytest.mark.parametrize("text", LANGCHAINJS)
def test_a_fenced_call_block_of_lines_is_not_a_quote_however_it_sits(text: str) -> None:
    assert calls(text, BLOGPOST) == [("blogpost", {"tool_input": SQL})]


def test_a_fenced_call_on_one_line_between_words_stays_a_quote() -> None:
    text = 'You could send ```{"action": "blogpost", "action_input": "hi"}``` and it would post.'
    assert calls(text, BLOGPOST) == []


SEARCH = tool("bing_search", query={"type": "string"})
# agentscope-ai/agentscope (v0) tests/service_toolkit_test.py::test_multi_tagged_content
AGENTSCOPE = (
    "This is a test\n[THOUGHT]I think this is a good idea[/THOUGHT]\n[SPEAK]I am speaking now[/SPEAK]\n"
    '[FUNCTION]{"function name": "bing_search", "args": {"query": "news of today"}}[/FUNCTION]'
)


def test_call_keys_written_with_a_space_name_the_call() -> None:
    assert calls(AGENTSCOPE, SEARCH) == [("bing_search", {"query": "news of today"})]
    cut = AGENTSCOPE[: AGENTSCOPE.rindex("}}")]
    assert calls(cut, SEARCH, finish_reason=None) == []


BASH = tool("execute_bash", command={"type": "string"})
# sgl-project/sglang-jax test_glm4_moe_detector.py::test_detect_and_parse_literal_newline
GLM_ESCAPED = (
    "<tool_call>execute_bash\\n<arg_key>command</arg_key>\\n<arg_value>ls</arg_value>\\n</tool_call>"
)
# mudler/LocalAI parse_test.go ParseXMLIterative "(literal \\n between tags)" (shortened)
QWEN_ESCAPED = (
    "Let me examine the watchdog.\\n\\n<tool_call>\\n<function=bash>\\n<parameter=script>\\n"
    "cd /root/LocalAI && cat core/application/watchdog.go\\n</parameter>\\n</function>\\n</tool_call>"
)


def test_newlines_written_as_escapes_between_tags_are_layout() -> None:
    assert calls(GLM_ESCAPED, BASH) == [("execute_bash", {"command": "ls"})]
    script = tool("bash", script={"type": "string"})
    assert calls(QWEN_ESCAPED, script) == [
        ("bash", {"script": "cd /root/LocalAI && cat core/application/watchdog.go"})
    ]
