"""Streaming invariance: the correction of a streamed reply does not depend on how the stream
was cut into chunks, for every family in the corpus.

The corrector only ever sees the message the model client assembled from the SSE deltas
(``agentrun.model._stream.Assembly``), so the property is checked on assembly + correction together:
content, reasoning and native tool-call arguments are cut at arbitrary points (through
multi-byte characters and special tokens alike), fed as OpenAI stream chunks, and the
correction must equal the one of the whole message.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrun.commands.repair import _message, load_tools
from agentrun.messages import Message, repair_counts
from agentrun.model._stream import Assembly as _Assembly
from agentrun.repair import Correction, correct

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "repair"
TOOLS = load_tools(FIXTURES / "tools.json")


def _by_family() -> dict[str, dict[str, Any]]:
    """The longest corpus case of each family (the most places to cut)."""
    out: dict[str, dict[str, Any]] = {}
    for line in (FIXTURES / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if len(json.dumps(case["message"])) > len(json.dumps(out.get(case["family"], {}).get("message", ""))):
            out[case["family"]] = case
    return out


CASES = _by_family()


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def _chunks(message: Message, cuts: list[int], finish: str | None) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = []
    for piece in _pieces(message.reasoning or "", cuts):
        chunks.append({"choices": [{"index": 0, "delta": {"reasoning_content": piece}}]})
    for piece in _pieces(message.content or "", cuts):
        chunks.append({"choices": [{"index": 0, "delta": {"content": piece}}]})
    for i, call in enumerate(message.tool_calls):
        chunks.append(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": ""},
                                }
                            ]
                        },
                    }
                ]
            }
        )
        for piece in _pieces(call.arguments, cuts):
            chunks.append(
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": i, "function": {"arguments": piece}}]},
                        }
                    ]
                }
            )
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish or "stop"}]})
    return chunks


def _assembled(chunks: list[dict[str, Any]]) -> Message:
    assembly = _Assembly(t0=0.0)
    for chunk in chunks:
        assembly.feed(chunk)
    return assembly.completion(started_at=0.0, max_tokens=None).message


def _view(c: Correction) -> tuple[Any, ...]:
    return (
        [(x.name, x.arguments) for x in c.calls],
        [(r.tool_name, r.reason) for r in c.rejected],
        c.content,
        c.truncated,
        c.reasoning_only,
        sorted(repair_counts(c.events).items()),
    )


@pytest.mark.parametrize("family", sorted(CASES))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_correction_is_the_same_however_the_stream_is_chunked(family: str, cuts: list[int]) -> None:
    message, finish, tokens, max_tokens = _message(CASES[family]["message"])
    kw = {"finish_reason": finish, "completion_tokens": tokens, "max_tokens": max_tokens}
    whole = correct(_assembled(_chunks(message, [], finish)), TOOLS, **kw)
    streamed = correct(_assembled(_chunks(message, cuts, finish)), TOOLS, **kw)
    assert _view(streamed) == _view(whole)
    expected = [(c["name"], c["arguments"]) for c in CASES[family]["expected"]]
    assert [(c.name, c.arguments) for c in whole.calls] == expected
