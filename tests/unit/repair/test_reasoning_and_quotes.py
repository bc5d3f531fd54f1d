"""Calls made inside reasoning are recovered as their own repair kind; calls only talked
about (in the reasoning, in backticks, mid-sentence) never run; no body becomes ``{}``."""

from __future__ import annotations

from agentrun.messages import repair_counts
from agentrun.repair import correct

DSML = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="read_file">\n'
    '<｜DSML｜parameter name="path" string="true">app.py</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
)
HERMES = '<tool_call>{"name": "run_shell", "arguments": {"command": "ls"}}</tool_call>'


def test_call_at_the_end_of_the_reasoning_field_is_recovered_as_reasoning_tool_call(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # DeepSeek V4 on vLLM: the DSML block lands in reasoning_content, content is empty
    result = correct(reply("", reasoning="I need the file first.\n\n" + DSML), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "app.py"})]
    counts = repair_counts(result.events)
    assert counts.get("reasoning_tool_call") == 1 and "text_tool_call" not in counts


def test_call_before_think_close_in_content_is_recovered(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # Qwen3.5 / GLM without a reasoning parser: the call sits before </think>, nothing after it
    result = correct(reply("Let me list the files.\n" + HERMES + "\n</think>"), tools)
    assert [c.name for c in result.calls] == ["run_shell"]
    assert "reasoning_tool_call" in repair_counts(result.events)


def test_call_quoted_in_reasoning_is_never_run(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for reasoning in (
        f"The format is {HERMES}, then I wait for the result.",  # mid-sentence
        f"Use `{HERMES}` to list files.",  # backticks
        "I could do this:\nrun_shell(command='ls')\nBut first I should check the docs.",  # loose, prose after
    ):
        result = correct(reply("", reasoning=reasoning), tools)
        assert result.calls == () and result.rejected == (), reasoning


def test_a_call_made_while_thinking_runs_with_more_thought_after_it(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # vllm tests/tool_parsers/test_trinity_tool_parser_simple.py test_tool_call_wrapped_inside_think_tags,
    # llama.cpp tests/test-chat.cpp streaming_kimi_k2_call_in_think_then_content (this test said the
    # opposite until set 20 was read: a call on its own lines in an envelope was made, not drafted)
    made = reply("", reasoning=f"I could do this:\n{HERMES}\nBut first I should check the docs.")
    result = correct(made, tools, finish_reason="stop")
    assert [(c.name, c.arguments) for c in result.calls] == [("run_shell", {"command": "ls"})]
    assert correct(made, tools).calls == ()  # until the reply ended, a call may still follow the thinking


def test_reasoning_is_not_searched_when_content_has_the_call(tools, reply) -> None:  # type: ignore[no-untyped-def]
    plan = '<tool_call>{"name": "run_shell", "arguments": {"command": "rm -rf build"}}</tool_call>'
    result = correct(reply(HERMES, reasoning="Maybe:\n" + plan), tools)
    assert [c.arguments for c in result.calls] == [{"command": "ls"}]


def test_tool_syntax_discussed_in_content_is_never_run(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for content in (
        f"To list files the model replies with `{HERMES}` and waits.",
        f"You could call {HERMES} to list files.",
        'In Gemma 4 a call looks like `<|tool_call>call:run_shell{command:<|"|>ls<|"|>}<tool_call|>`.',
    ):
        result = correct(reply(content), tools)
        assert result.calls == () and result.rejected == (), content
        assert result.content == content


def test_a_call_after_a_finished_sentence_still_runs(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # Hunyuan / Gemma 4 tests: "I will call the tool now. <tool_calls>[..]</tool_calls>"
    result = correct(reply("I will list the files now. " + HERMES), tools)
    assert [c.name for c in result.calls] == ["run_shell"]
    assert result.content == "I will list the files now."


def test_a_body_the_parser_cannot_read_is_never_run_as_empty_arguments(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for content in (
        "<tool_call>\n<function=write_file>\nhello\n</function>\n</tool_call>",  # no <parameter=..>
        '<minimax:tool_call><invoke name="write_file">hello</invoke></minimax:tool_call>',  # two inputs
    ):
        result = correct(reply(content), tools)
        assert result.calls == (), content
        assert len(result.rejected) == 1, content
    # an invocation's plain text is a one-input tool's input (gptme's <invoke name="shell">echo hi</invoke>),
    # under Qwen3-Coder's <function=..> as under <invoke> (the AI SDK middleware's tool-name salvage tests)
    for content in (
        '<minimax:tool_call><invoke name="run_shell">ls -la</invoke></minimax:tool_call>',
        "<tool_call>\n<function=run_shell>\nls -la\n</function>\n</tool_call>",
    ):
        one = correct(reply(content), tools)
        assert [(c.name, c.arguments) for c in one.calls] == [("run_shell", {"command": "ls -la"})], content
    # GLM without <arg_key>: not even a GLM call, so it stays text
    assert correct(reply("<tool_call>run_shell\nls -la</tool_call>"), tools).calls == ()


def test_gpt_oss_builtin_tools_are_not_function_calls(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for recipient in ("browser.search", "browser.open", "python", "container.exec"):
        text = f'<|start|>assistant<|channel|>analysis to={recipient} <|constrain|>json<|message|>{{"q": "x"}}<|call|>'
        result = correct(reply(text), tools)
        assert result.calls == () and result.rejected == (), recipient


def test_raw_harmony_reply_is_split_into_answer_and_reasoning(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # gpt-oss through a server without the harmony parser: channels left in content
    text = (
        "<|channel|>analysis<|message|>The user wants a summary.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>All tests pass.<|return|>"
    )
    result = correct(reply(text), tools)
    assert result.calls == () and result.content == "All tests pass."
    assert result.reasoning == "The user wants a summary."


def test_loose_json_in_the_middle_of_a_sentence_is_prose(tools, reply) -> None:  # type: ignore[no-untyped-def]
    text = 'The call {"name": "run_shell", "arguments": {"command": "ls"}} is what you would send.'
    assert correct(reply(text), tools).calls == ()


def test_an_empty_list_of_calls_is_no_call_and_no_rejection(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # vLLM test_phi4mini_tool_parser.py malformed input "functools[] This is just text"
    result = correct(reply("functools[] This is just text"), tools)
    assert result.calls == () and result.rejected == ()


def test_python_prompts_and_unknown_unmarked_names_are_not_functionary_calls(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for content in (">>> x\n{'a': 1}\n>>> print(x)", 'Summary\n{"files": 3, "tests": "pass"}'):
        result = correct(reply(content), tools)
        assert result.calls == () and result.rejected == (), content


def test_prose_about_tool_syntax_is_neither_run_nor_rejected(tools, reply) -> None:  # type: ignore[no-untyped-def]
    for content in (
        "Use <function=name> syntax to call a tool.",
        "Gemma writes <|tool_call>call:NAME{...}<tool_call|> for calls.",
        'Example: [read_file(path="a.py")] would read it, but I will not.',
        'Command R calls tools like <|START_ACTION|>[{"tool_name": "read_file", "parameters": '
        '{"path": "x"}}]<|END_ACTION|> and that is all.',
        "The <function_calls> block is OLMo's.",
        "Use the `functools` module: functools[0] is not valid.",
    ):
        result = correct(reply(content), tools)
        assert result.calls == () and result.rejected == (), content


def test_three_calls_on_one_line_are_all_calls(tools, reply) -> None:  # type: ignore[no-untyped-def]
    one = '<tool_call>{"name": "read_file", "arguments": {"path": "%s"}}</tool_call>'
    result = correct(reply(" ".join(one % p for p in ("a.py", "b.py", "c.py"))), tools)
    assert [c.arguments["path"] for c in result.calls] == ["a.py", "b.py", "c.py"]


def test_command_r_directly_answer_is_not_a_call(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # Ollama commandr_test.go: the "directly-answer" pseudo-tool means no tool is called
    text = 'Action: ```json\n[\n    {\n        "tool_name": "directly-answer",\n        "parameters": {}\n    }\n]\n```'
    result = correct(reply(text), tools)
    assert result.calls == () and result.rejected == ()
