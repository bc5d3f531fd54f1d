"""The gateway's kept request bodies: each rebuilt byte for byte from edits, scrubbed, bounded."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from agentrun.gateway import sent
from agentrun.gateway.sent import SentBodies, read_sent
from agentrun.text_edits import apply, edit


@pytest.mark.parametrize(
    ("base", "text"),
    [
        ("", ""),
        ("", "abc"),
        ("abc", ""),
        ("aaaa", "aaaaaa"),  # a prefix and a suffix that could overlap
        ('{"messages":[1,2],"tools":[]}', '{"messages":[1,2,3],"tools":[]}'),
        ("same", "same"),
        ("héllo wörld", "héllo, wörld!"),
    ],
)
def test_an_edit_rebuilds_the_text_exactly(base: str, text: str) -> None:
    change = edit(base, text)
    assert apply(base, change) == text
    assert change[0] + change[1] <= min(len(base), len(text))


def test_an_appended_message_is_an_edit_of_its_size() -> None:
    first = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 50_000}], "tools": [1]})
    second = first.replace("}], ", '}, {"role": "assistant", "content": "ok"}], ')
    head, tail, middle = edit(first, second)
    assert middle == ', {"role": "assistant", "content": "ok"}'
    assert apply(first, (head, tail, middle)) == second
    with pytest.raises(ValueError):
        apply("short", (4, 4, ""))


def _body(messages: list[str], key: str = "") -> bytes:
    chat = [{"role": "user", "content": m + key} for m in messages]
    # an agent's own spacing and key order: kept as sent, not re-encoded
    return f'{{"messages" : {json.dumps(chat)},\n "model":"agent-model", "stream":false}}'.encode()


def test_bodies_come_back_byte_for_byte_per_conversation(tmp_path: Path) -> None:
    path = tmp_path / "bodies.jsonl.gz"
    writer = SentBodies(path, secrets=["sk-secret-123456"])
    a1, b1, a2 = _body(["hi"]), _body(["other"]), _body(["hi", "more é"])
    for i, (conversation, raw) in enumerate([("a", a1), ("b", b1), ("a", a2)]):
        head = {"request_id": f"r{i}", "conversation": conversation, "path": "/v1/chat/completions"}
        writer.add({**head, "status": 200, "received": 10.0 + i, "answered": 10.5 + i}, raw)
    writer.add({"request_id": "r3", "conversation": None, "path": "/v1/chat/completions"}, b"\xff\xfe{}")
    writer.add({"request_id": "r4", "conversation": "a"}, _body(["hi", "more é", "sk-secret-123456"]))
    writer.close()
    lines = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    assert lines[2]["base"] == 1 and len(lines[2]["text"]) < len(a2) // 2  # an edit of a1, not whole
    got = read_sent(path)
    assert [b.request_id for b in got] == ["r0", "r1", "r2", "r3", "r4"]
    assert [b.body.encode() for b in got[:3] if b.body] == [a1, b1, a2]
    assert got[3].body is not None and got[3].body.encode("utf-8", "surrogateescape") == b"\xff\xfe{}"
    assert got[4].body is not None and "sk-secret" not in got[4].body and "[REDACTED]" in got[4].body
    assert (got[0].conversation, got[0].received, got[0].answered, got[0].status) == ("a", 10.0, 10.5, 200)


def test_a_killed_gateway_leaves_every_flushed_line_readable(tmp_path: Path) -> None:
    path = tmp_path / "bodies.jsonl.gz"
    writer = SentBodies(path)
    writer.add({"request_id": "r0"}, _body(["one"]))
    writer.add({"request_id": "r1"}, _body(["one", "two"]))
    data = path.read_bytes()  # flushed, never closed: no gzip trailer
    writer.close()
    (tmp_path / "cut.gz").write_bytes(data)
    assert [b.body.encode() for b in read_sent(tmp_path / "cut.gz") if b.body] == [
        _body(["one"]),
        _body(["one", "two"]),
    ]


def test_past_the_bound_a_body_is_left_out_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sent, "MAX_KEPT_CHARS", 150)
    path = tmp_path / "bodies.jsonl.gz"
    writer = SentBodies(path)
    for i, messages in enumerate([["a"], ["a", "b" * 200], ["a", "b" * 200, "c"]]):
        writer.add({"request_id": f"r{i}", "conversation": "x"}, _body(messages))
    writer.close()
    got = read_sent(path)
    assert got[0].body is not None and got[1].body is None and got[2].body is None
    assert got[1].dropped is not None and "MB of bodies" in got[1].dropped


def test_a_file_of_something_else_is_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "bodies.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"seq": 1, "base": 7, "head": 0, "tail": 0, "text": "x"}\n{"a": 1}\n'))
    with pytest.raises(ValueError, match="edits line 7"):
        read_sent(path)
    path.write_bytes(gzip.compress(b"[1]\n[2]\n"))
    with pytest.raises(ValueError, match="not a recorded request body"):
        read_sent(path)
