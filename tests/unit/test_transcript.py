"""The run page's transcript, built from trajectory events shaped as agentrun.agent writes them:
a repaired call shows what the model sent and what ran, a rejected one its feedback, a re-asked
turn both replies; every untrusted string stays text in a JSON document the page cannot be
broken out of."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentrun.report import transcript
from agentrun.sandbox.workspace import git

HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\u2028\u2029\x85 end"


def _completion(content: str | None, calls: list[dict[str, Any]], finish: str = "tool_calls") -> dict:
    return {
        "message": {"role": "assistant", "content": content, "reasoning": "thinking", "tool_calls": calls},
        "finish_reason": finish,
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 64},
        "timings": {"ttft_s": 0.25},
    }


def _events() -> list[dict[str, Any]]:
    cut = {"id": "c1", "name": "list_files", "arguments": '{"pattern": "**'}
    whole = {"id": "c1", "name": "list_files", "arguments": '{"pattern": "**/*"}'}
    renamed = {"id": "c2", "name": "write-file", "arguments": '{"path": "a.py", "content": "x = 1\\n"}'}
    return [
        {"event": "request", "turn": 1, "new_messages": [{"role": "user", "content": HOSTILE}]},
        {"event": "response", "turn": 1, "completion": _completion(None, [cut], "length")},
        {
            "event": "repair",
            "turn": 1,
            "repair": {"kind": "truncated", "call_id": "c1", "before": "", "after": ""},
        },
        {"event": "reask", "turn": 1, "reason": "truncated"},
        {"event": "request", "turn": 1, "new_messages": []},
        {"event": "response", "turn": 1, "completion": _completion(None, [whole])},
        {
            "event": "tool_call",
            "turn": 1,
            "call": {"id": "c1", "name": "list_files", "arguments": {"pattern": "**/*"}},
        },
        {
            "event": "tool_result",
            "turn": 1,
            "result": {"call_id": "c1", "name": "list_files", "output": HOSTILE},
        },
        {"event": "request", "turn": 2, "new_messages": [{"role": "tool", "content": "echo of turn 1"}]},
        {"event": "response", "turn": 2, "completion": _completion("I will write it.", [renamed])},
        {
            "event": "repair",
            "turn": 2,
            "repair": {
                "kind": "unknown_tool",
                "call_id": "c2",
                "before": "write-file",
                "after": "write_file",
            },
        },
        {
            "event": "tool_call",
            "turn": 2,
            "call": {"id": "c2", "name": "write_file", "arguments": {"path": "a.py", "content": "x = 1\n"}},
        },
        {
            "event": "tool_result",
            "turn": 2,
            "result": {"call_id": "c2", "name": "write_file", "output": "wrote"},
        },
        {
            "event": "response",
            "turn": 3,
            "completion": _completion(None, [{"id": "c3", "name": "run_shell", "arguments": "{oops"}]),
        },
        {
            "event": "tool_result",
            "turn": 3,
            "rejected": True,
            "arguments": "{oops",
            "result": {
                "call_id": "c3",
                "name": "run_shell",
                "output": "Invalid JSON: send it again",
                "error": "parsing",
            },
        },
    ]


def test_a_reasked_turn_shows_both_replies_and_why() -> None:
    [first, *_] = transcript.turns(_events())
    assert [r.asked_again for r in first.replies] == ["truncated", None]
    assert [m["role"] for m in first.messages] == ["user"]
    assert first.calls[0].output == HOSTILE


def test_a_repaired_call_is_a_diff_from_what_the_model_sent_to_what_ran() -> None:
    second = transcript.turns(_events())[1]
    [call] = second.calls
    assert call.repairs == [{"kind": "unknown_tool", "detail": ""}]
    assert "-write-file" in call.diff.split("\n") and "+write_file" in call.diff.split("\n")
    assert second.messages == []  # the tool message only echoes the previous turn


def test_a_rejected_call_shows_the_models_text_and_its_feedback() -> None:
    third = transcript.turns(_events())[2]
    [call] = third.calls
    assert call.rejected and call.ran is None
    assert "{oops" in call.sent and call.output == "Invalid JSON: send it again"
    assert "1 rejected" in transcript.summary(third)


def test_the_page_json_cannot_close_its_script_tag_and_reads_back_whole(tmp_path: Path) -> None:
    data = transcript.transcript(_events(), tmp_path)
    text = transcript.to_script_json(data)
    assert "<" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == json.loads(json.dumps(data))
    assert json.loads(text)[0]["calls"][0]["output"] == HOSTILE


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\r"])
def test_a_diff_splits_lines_on_newline_only(separator: str) -> None:
    sent = transcript.pretty_call("f", {"a": f"x{separator}y"})
    diff = transcript.call_diff(sent, sent.replace("x", "z"))
    assert sum(line.startswith("-") and not line.startswith("---") for line in diff.split("\n")) == 1


def test_long_values_are_clipped_with_what_was_left_out() -> None:
    clipped = transcript.clip("a" * (transcript.MAX_TEXT + 5))
    assert clipped.startswith("a" * transcript.MAX_TEXT) and "5 more characters" in clipped


def test_each_turns_workspace_changes_come_from_the_runs_git_history(tmp_path: Path) -> None:
    work, git_dir = tmp_path / "w", tmp_path / "sandbox" / "git"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(git_dir)], check=True, timeout=30)

    def commit(message: str, **files: str) -> None:
        for name, text in files.items():
            (work / name).write_text(text)
        env = ["-c", "user.name=t", "-c", "user.email=t@t"]
        base = ["git", f"--git-dir={git_dir}", f"--work-tree={work}", *env]
        subprocess.run([*base, "add", "-A"], check=True, timeout=30)
        subprocess.run([*base, "commit", "-q", "-m", message], check=True, timeout=30)

    commit("initial workspace", keep="same\n")
    commit("turn 2", **{"a.py": "x = 1\n"})
    commit("turn 5", **{"a.py": "x = 2\n", "b.py": "y\n"})
    changes = transcript.workspace_changes(git_dir)
    assert sorted(changes) == [2, 5]
    assert changes[5][0] == ["a.py", "b.py"]
    assert re.search(r"^-x = 1$", changes[5][1], re.M) and re.search(r"^\+x = 2$", changes[5][1], re.M)
    assert git(git_dir, "rev-parse", "refs/heads/main")  # the helper the report reads with
    assert transcript.workspace_changes(tmp_path / "none") == {}
