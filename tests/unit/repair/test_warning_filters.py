"""The repair reads Python-quoted text with ``ast``; an invalid escape in it (``\\d`` in a regex) is a
warning the process may be told to raise (``-W error``, as pytest runs here). The same text must give the
same calls whatever the warning filters say: a held-out measure outside pytest and the suite inside it
disagreed by one case until they did (set 49, 2026-12-07)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from tests.unit.repair.shapes import calls, tool

WRITE = tool("write_file", path={"type": "string"}, content={"type": "string"})
GREP = tool("grep", pattern={"type": "string"}, path={"type": "string"})
REGEX = "^\\d+-\\w+$"

CASES = [
    # a triple-quoted Python string as a JSON value (Qwen2.5-Coder writes file contents so)
    (
        '{"name": "write_file", "arguments": {"path": "a.py", "content": """import re\nP = r\'^\\d+-\\w+$\'\n"""}}',
        WRITE,
        ("write_file", {"path": "a.py", "content": "import re\nP = r'^\\d+-\\w+$'\n"}),
    ),
    # a single-quoted one
    (
        "{'name': 'grep', 'arguments': {'pattern': '^\\d+-\\w+$', 'path': '.'}}",
        GREP,
        ("grep", {"pattern": REGEX, "path": "."}),
    ),
    # a pythonic call
    ("[grep(pattern='^\\d+-\\w+$', path='.')]", GREP, ("grep", {"pattern": REGEX, "path": "."})),
]


@pytest.mark.parametrize("action", ["error", "default", "ignore"])
@pytest.mark.parametrize(("text", "spec", "want"), CASES)
def test_python_quoted_text_reads_the_same_under_any_warning_filter(
    action: Any, text: str, spec: Any, want: tuple[str, dict[str, str]]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter(action)
        assert calls(text, spec) == [want]
