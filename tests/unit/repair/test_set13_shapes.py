"""What set 13 showed (Langroid's tool messages, AutoGPT's replies, gptme's tool uses, ik_llama.cpp's
Kimi K2 tests; read after it was measured and set 14 was named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

FILE_EXISTS = tool("file_exists", filename={"type": "string"}, recurse={"type": "boolean"})
# langroid/langroid tests/main/test_tool_messages.py::test_agent_handle_message (FILE_EXISTS_MSG)
LANGROID_JSON = '\nOk, thank you.\n{\n"request": "file_exists",\n"filename": "test.txt",\n"recurse": true\n}\nHope you can tell me!\n'
CODE_TOOL = tool(
    "code_tool", filepath={"type": "string"}, version={"type": "integer"}, code={"type": "string"}
)
# langroid tests/main/test_xml_tool_message.py::test_tolerant_parsing
LANGROID_XML = (
    "\n    <tool>\n        <request>\n            code_tool\n        </request>\n        <filepath>\n"
    "            /path/to/file.py\n        </filepath>\n        <version>\n            1\n        </version>\n"
    '        <code><![CDATA[\ndef hello():\n    print("Hello, World!")\n\nhello()\n        ]]></code>\n    </tool>\n    '
)


def test_the_tool_named_under_request_with_its_fields_beside_it() -> None:
    assert calls(LANGROID_JSON, FILE_EXISTS) == [("file_exists", {"filename": "test.txt", "recurse": True})]
    assert calls(LANGROID_XML, CODE_TOOL) == [
        (
            "code_tool",
            {
                "filepath": "/path/to/file.py",
                "version": 1,
                "code": 'def hello():\n    print("Hello, World!")\n\nhello()',
            },
        )
    ]
    cut = LANGROID_JSON[: LANGROID_JSON.index("}")]
    assert calls(cut, FILE_EXISTS, finish_reason=None) == []


GOOGLE = tool("google", query={"type": "string"})
THOUGHTS = '{"thoughts": {"thought": "I will search.", "criticism": "none"}, "command": {"name": "google", "args": {"query": "Tesla revenue 2022"}}}'


@pytest.mark.parametrize(
    "text",
    [
        f"```json{THOUGHTS}```",  # Significant-Gravitas/AutoGPT classic tests/unit/test_utils.py
        f"```{THOUGHTS}```",
        f"sentence1{THOUGHTS}sentence2",
    ],
)
def test_a_command_inside_the_agents_reply_is_its_call(text: str) -> None:
    assert calls(text, GOOGLE) == [("google", {"query": "Tesla revenue 2022"})]


def test_a_call_between_spaced_words_is_still_a_quote() -> None:
    text = 'You could send {"name": "google", "args": {"query": "x"}} and see what comes back.'
    assert calls(text, GOOGLE) == []


PING = tool("ping", domain={"type": "string"})
SHELL = tool("shell", cmd={"type": "string"})


def test_a_tool_marked_by_a_call_id_then_its_json() -> None:
    # ikawrakow/ik_llama.cpp tests/test-function-calls.cpp test_content_cleaning, test_contamination_reproduction
    assert calls('I\'ll ping the domain. functions.ping:0{"domain": "google.de"} Request sent.', PING) == [
        ("ping", {"domain": "google.de"})
    ]
    ls = tool("LS", path={"type": "string"})
    text = 'Let me list the current directory contents.functions.LS:1{"path": "/tmp/example_workspace"}'
    assert calls(text, ls) == [("LS", {"path": "/tmp/example_workspace"})]
    # gptme/gptme tests/test_tool_use.py::test_toolcall_inside_codeblock_skipped
    fenced = '```\n@shell(uid1): {"cmd": "example"}\n```\n@shell(uid2): {"cmd": "real"}'
    assert calls(fenced, SHELL) == [("shell", {"cmd": "real"})]
    assert calls('@shell(uid): {"cmd": "l', SHELL, finish_reason=None) == []
    assert calls('functions.rm:0{"path": "/"}', PING) == []  # not a requested tool


def test_an_invocations_text_is_the_one_input_of_a_one_input_tool() -> None:
    # gptme tests/test_xml_format.py::test_parser_consistency and test_both_xml_formats_coexist
    command = tool("shell", command={"type": "string"})
    text = '\n<function_calls>\n<invoke name="shell">\necho hello\n</invoke>\n</function_calls>\n'
    assert calls(text, command) == [("shell", {"command": "echo hello"})]
    text = '\n<tool-use>\n<shell>\necho "test1"\n</shell>\n</tool-use>\n'
    assert calls(text, command) == [("shell", {"command": 'echo "test1"'})]
    assert calls("Use <shell>echo hi</shell> to greet.", command) == []  # its own tag outside a wrapper
