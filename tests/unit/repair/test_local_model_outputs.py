"""What the real local model (Qwen2.5-Coder-1.5B on llama.cpp, this CPU) actually emitted,
recorded in tests/fixtures/local_model/raw_messages.jsonl: ``agentrun repair`` recovers every
call a human reading the reply would see, with the arguments the human would read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RAW = FIXTURES / "local_model" / "raw_messages.jsonl"
TOOLS = FIXTURES / "repair" / "tools.json"

# A human's reading of each recorded reply, in file order (replies only; grade records skipped).
HUMAN = [
    "write_file",
    "write_file",
    "write_file",
    "write_file",
    None,  # greet-cli session: 4 calls, empty end
    "write_file",
    "list_files",
    "read_file",
    "run_shell",
    "edit_file",
    "search",  # one prompt per tool
    "write_file",  # content given as a Python single-quoted string
    "write_file",
    None,  # "The greet-cli project is complete. The tests pass." (a claim, no call)
    "write_file",
    "write_file",
    "write_file",
    "write_file",
    "write_file",
]


def _replies() -> list[dict[str, Any]]:
    return [
        json.loads(line)["message"] for line in RAW.read_text().splitlines() if "message" in json.loads(line)
    ]


def _human_arguments(content: str) -> dict[str, Any] | None:
    """The arguments as a human reads them: the JSON object, fence or not, newlines and all."""
    text = re.sub(r"^```(?:json)?\s*|\s*```\s*$", "", content.strip())
    try:
        return json.loads(text, strict=False)["arguments"]
    except (ValueError, KeyError):
        return None


def test_repair_recovers_every_call_a_human_would() -> None:
    replies = _replies()
    assert len(replies) == len(HUMAN)
    lines = "".join(json.dumps(m) + "\n" for m in replies)
    proc = subprocess.run(
        [sys.executable, "-m", "agentrun", "repair", "--tools", str(TOOLS)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    outputs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(outputs) == len(replies)
    for reply, out, expected in zip(replies, outputs, HUMAN, strict=True):
        names = [c["name"] for c in out["tool_calls"]]
        assert names == ([expected] if expected else []), (reply["content"][:120], out)
        if expected:
            assert any(
                r["kind"] == "text_tool_call" for r in out["repairs"]
            )  # it came as text, not tool_calls
            human = _human_arguments(reply["content"])
            if human is not None:  # a strict-enough JSON: the arguments must be exactly these
                assert out["tool_calls"][0]["arguments"] == human


def test_python_quoted_content_is_read_as_the_model_meant() -> None:
    [reply] = [m for m in _replies() if "config.json" in (m.get("content") or "")]
    proc = subprocess.run(
        [sys.executable, "-m", "agentrun", "repair", "--tools", str(TOOLS)],
        input=json.dumps(reply) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    [call] = json.loads(proc.stdout)["tool_calls"]
    assert call["arguments"]["content"] == '{"debug": true, "port": 8080}'
