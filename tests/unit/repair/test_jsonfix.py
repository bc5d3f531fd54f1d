"""The invalid-JSON ladder: each fix on the model output it exists for; no silent content change."""

from __future__ import annotations

import json

import pytest

from agentrun.repair.jsonfix import looks_cut_off, parse_arguments, repair_is_faithful


@pytest.mark.parametrize(
    ("raw", "expected", "fix"),
    [
        # Qwen2.5-Coder-1.5B via llama.cpp (local-model-on-cpu.md §5): Python-quoted JSON content
        (
            '{"path": "config.json", "content": \'{"debug": true, "port": 8080}\'}',
            {"path": "config.json", "content": '{"debug": true, "port": 8080}'},
            "fix_python_string",
        ),
        # same model, llama-cpp-python: a triple-quoted file body
        (
            '{"path": "/tmp/fib.py", "content": """\ndef fibonacci(n):\n    return n\n"""}',
            {"path": "/tmp/fib.py", "content": "\ndef fibonacci(n):\n    return n\n"},
            "fix_python_string",
        ),
        ("{'path': 'a.py', 'start_line': 1}", {"path": "a.py", "start_line": 1}, "fix_python_string"),
        (
            '{"command": "ls", "background": False}',
            {"command": "ls", "background": False},
            "fix_python_literals",
        ),
        ('{"path": "a.py", "end_line": None}', {"path": "a.py", "end_line": None}, "fix_python_literals"),
        ('{"path": "a.py",}', {"path": "a.py"}, "fix_trailing_commas"),
        ('{"paths": ["a", "b",]}', {"paths": ["a", "b"]}, "fix_trailing_commas"),
        # Kimi K2 / MiniMax: raw newlines inside a JSON string
        (
            '{"path": "a.py", "content": "x = 1\ny = 2\n"}',
            {"path": "a.py", "content": "x = 1\ny = 2\n"},
            "fix_control_chars",
        ),
        ('{"command": "grep -E \\d+ log.txt"}', {"command": "grep -E \\d+ log.txt"}, "fix_invalid_escapes"),
        # an escaped backslash beside a bad escape: the pair stays one backslash (it broke the string before)
        (
            '{"command": "dir C:\\\\Users | findstr \\d+"}',
            {"command": "dir C:\\Users | findstr \\d+"},
            "fix_invalid_escapes",
        ),
        ('{"path": "a.py"} I will now read it.', {"path": "a.py"}, "drop_trailing_text"),
        ('"{\\"path\\": \\"a.py\\"}"', {"path": "a.py"}, "decode_double_encoded"),
    ],
)
def test_narrow_fix_recovers_exact_value(raw: str, expected: dict, fix: str) -> None:
    parsed = parse_arguments(raw)
    assert parsed.ok, parsed.error
    assert parsed.objects == [expected]
    assert fix in parsed.fixes


def test_strict_json_needs_no_fix() -> None:
    parsed = parse_arguments('{"path": "a.py"}')
    assert parsed.objects == [{"path": "a.py"}] and parsed.fixes == []


def test_empty_arguments_are_an_empty_object() -> None:
    assert parse_arguments("").objects == [{}]


def test_concatenated_objects_split_into_separate_calls() -> None:
    parsed = parse_arguments('{"path": "a.py"}{"path": "b.py"}')
    assert parsed.objects == [{"path": "a.py"}, {"path": "b.py"}]
    assert "split_concatenated" in parsed.fixes


def test_non_object_arguments_are_an_error() -> None:
    assert not parse_arguments('["a.py"]').ok


@pytest.mark.parametrize(
    "raw",
    [
        '{"path": "a.py"',  # unbalanced object: json_repair would close it
        '{"pattern": "x", "paths": ["a", "b"',  # open list and object
        '{"command": "ls", "timeout": 3',  # a number that may have been cut mid-way
        '{"command": "rm -rf bu',  # value cut mid-word
        "{'command': 'ls",  # Python-quoted, cut inside the string
    ],
)
def test_cut_off_json_is_never_closed_even_by_json_repair(raw: str) -> None:
    # issue 13: a cut-off call must never run with guessed or closed arguments
    parsed = parse_arguments(raw)
    assert not parsed.ok and parsed.cut_off and parsed.objects == []


def test_json_repair_never_defaults_a_missing_value() -> None:
    # json_repair reads {"a": "b", "c": } as {"a": "b", "c": ""}: a value the model never wrote
    assert not parse_arguments('{"path": "a.py", "content": }').ok


def test_cut_off_inside_string_is_never_completed() -> None:
    # vLLM #47761: a write_file cut at max_tokens; closing the string would invent an end of file
    parsed = parse_arguments('{"path": "models.py", "content": "class Booking(models.Model):\\n    date = ')
    assert not parsed.ok
    assert parsed.cut_off


def test_looks_cut_off() -> None:
    assert looks_cut_off('{"a": "b')
    assert looks_cut_off('{"a": [1, 2')
    assert not looks_cut_off('{"a": "b"}')


def test_file_content_is_never_silently_altered() -> None:
    """Unescaped quotes in file content (json-repair #46): either recovered exactly or refused."""
    content = 'print("hello", name)\nx = {"a": 1, "b": "c"}\n'
    raw = '{"path": "a.py", "content": "' + content.replace("\n", "\\n") + '"}'
    parsed = parse_arguments(raw)
    if parsed.ok:
        assert parsed.objects == [{"path": "a.py", "content": content}]
    broken_cmd = '{"command": "echo "a, b" && rm -rf "build, dist""}'
    parsed = parse_arguments(broken_cmd)
    if parsed.ok:
        assert parsed.objects[0]["command"] == 'echo "a, b" && rm -rf "build, dist"'


def test_faithfulness_guard_refuses_lossy_repairs() -> None:
    raw = '{"content": "print("hello", name)"}'
    assert not repair_is_faithful(raw, {"content": "print(", "hello": "name)"})
    assert not repair_is_faithful(raw, {"content": "print("})
    assert repair_is_faithful(raw, {"content": 'print("hello", name)'})
    assert repair_is_faithful("{path: 'a.py', n: 3}", {"path": "a.py", "n": 3})


def test_repaired_values_round_trip_as_json() -> None:
    parsed = parse_arguments("{'content': 'it\\'s \"quoted\"\\n'}")
    assert parsed.objects == [{"content": 'it\'s "quoted"\n'}]
    json.dumps(parsed.objects[0])


@pytest.mark.parametrize(
    "raw",
    [
        # what json_repair makes of these changes the file: refused, the model re-sends the call
        '{"path": "a.py", "content": "def f():\\n    return 1" + "\\n"}',  # -> content 'def f():..1" + "'
        '{"path": "a.py", "content": open("template.py").read()}',  # -> {"content": "open(", "template.py": ...}
        '{"path": "a.sh", "content": "ls" "-la"}',  # -> content 'ls' (lost "-la")
        '{"path": "a.py", "content": `print(1)`}',  # -> content 'print(1)`'
    ],
)
def test_json_repair_guesses_that_alter_content_are_refused(raw: str) -> None:
    parsed = parse_arguments(raw)
    assert not parsed.ok and parsed.objects == []
