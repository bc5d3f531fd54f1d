"""What set 21 showed (an AI SDK tool-call middleware's parser tests and RL frameworks' parsers:
SkyRL, verl, AReaL, verifiers, atropos; read 2026-12-07 12:30 UTC, after set 22 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

SEARCH = tool("search", query={"type": "string"})
BASH = tool("bash", cmd={"type": "string"})


def test_a_tools_own_element_standing_alone_holds_its_input() -> None:
    # NovaSky-AI/SkyRL skyrl-gym/tests/test_search.py test_parse_action, test_searchcode.py test_tool_parsing
    assert calls("<search>Who is the president of France?</search>", SEARCH) == [
        ("search", {"query": "Who is the president of France?"})
    ]
    assert calls("<search>Query</search> <answer>Answer</answer>", SEARCH) == [("search", {"query": "Query"})]
    python = tool("python", code={"type": "string"})
    assert calls("<tool><python>print('hello')</python></tool>", SEARCH, python) == [
        ("python", {"code": "print('hello')"})
    ]
    assert calls("I would use <search>Query</search> to find it", SEARCH) == []  # a sentence about it
    # among plain words it runs (open-instruct's tag parser tests, set 38); nested in another element
    # it is that element's text
    assert calls("<search>Query</search> and then more words", SEARCH) == [("search", {"query": "Query"})]
    assert calls("<note><search>Query</search></note>", SEARCH) == []


def test_the_close_tag_inside_a_json_string() -> None:
    # minpeter/ai-sdk-tool-call-middleware src/__tests__/protocols/hermes-protocol/parse-generated-text/
    # json-string-boundary.test.ts
    one = '<tool_call>{"name":"bash","arguments":{"cmd":"echo \'</tool_call>\' test"}}</tool_call>'
    assert calls(one, BASH) == [("bash", {"cmd": "echo '</tool_call>' test"})]
    escaped = '<tool_call>{"name":"bash","arguments":{"cmd":"say \\"</tool_call>\\" ok"}}</tool_call>'
    assert calls(escaped, BASH) == [("bash", {"cmd": 'say "</tool_call>" ok'})]
    two = '<tool_call>{"name":"bash","arguments":{"cmd":"a </tool_call> b </tool_call> c"}}</tool_call>'
    assert calls(two, BASH) == [("bash", {"cmd": "a </tool_call> b </tool_call> c"})]


def test_a_backslash_before_a_raw_newline_escapes_it() -> None:
    # the middleware's control-char-normalization.test.ts "handles backslash followed by raw newline"
    edit = tool("edit", content={"type": "string"})
    assert calls('<tool_call>{"name":"edit","arguments":{"content":"foo\\\nbar"}}</tool_call>', edit) == [
        ("edit", {"content": "foo\nbar"})
    ]
    assert calls('<tool_call>{"name":"edit","arguments":{"content":"foo\nbar"}}</tool_call>', edit) == [
        ("edit", {"content": "foo\nbar"})
    ]


def test_a_call_between_filler_words_runs() -> None:
    # the middleware's "before <tool_call>..</tool_call> after" (and eleven other projects' tests since,
    # set 30): plain words around a call do not make it a quote, whole or cut before the words after it
    whole = 'before <tool_call>{"name":"bash","arguments":{"cmd":"ls"}}</tool_call> after'
    assert calls(whole, BASH) == [("bash", {"cmd": "ls"})]
    head = whole.removesuffix(" after")
    assert calls(head, BASH, finish_reason=None) == [("bash", {"cmd": "ls"})]


def test_a_call_a_sentence_talks_about_waits_for_the_words_after_it() -> None:
    # a sentence saying what a model could write quotes the call when words run on after it; a copy cut
    # before those words must not run it either, until the reply says it ended there
    whole = 'You could call <tool_call>{"name":"bash","arguments":{"cmd":"ls"}}</tool_call> to list files.'
    assert calls(whole, BASH) == []
    head = whole.removesuffix(" to list files.")
    assert calls(head, BASH, finish_reason=None) == []
    assert calls(head, BASH) == [("bash", {"cmd": "ls"})]  # the reply ended there: nothing quotes it
