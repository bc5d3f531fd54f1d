"""Recorded workloads: requests rebuilt from a real run's trajectory (and its ATIF), shipped ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrun.errors import UserError
from agentrun.load.workload import PreparedSession, load_workload, session_from_events, shipped
from agentrun.messages import Message
from agentrun.trajectory import read_trajectory

FIXTURES = Path(__file__).parents[2] / "fixtures" / "load"
TRAJECTORY = FIXTURES / "todo-cli.trajectory.jsonl"


def _messages(prepared: PreparedSession) -> list[list[dict]]:
    return [json.loads(r.body)["messages"] for r in prepared.requests]


def test_requests_are_the_recorded_history_and_each_extends_the_previous() -> None:
    events = read_trajectory(TRAJECTORY)
    session = session_from_events(events, tools=[])
    recorded = [e for e in events if e["event"] == "request"]
    assert len(session.requests) == len(recorded) == 11
    bodies = _messages(PreparedSession(session, "m"))
    for k in range(1, len(bodies)):
        assert bodies[k][: len(bodies[k - 1])] == bodies[k - 1]  # append-only: a server's prefix cache works
    # the assistant turn in request k+1 is the reply recorded for request k (not a live reply)
    for k in range(len(bodies) - 1):
        reply = Message.model_validate(session.requests[k].reply).to_openai()
        assert bodies[k + 1][len(bodies[k])] == reply
    assert all("reasoning" not in m for body in bodies for m in body)  # never sent back
    assert bodies[0][0]["role"] == "system" and bodies[0][1]["role"] == "user"


def test_delays_are_the_gaps_between_response_and_next_request() -> None:
    events = read_trajectory(TRAJECTORY)
    session = session_from_events(events, tools=[])
    ends = [e["ts"] for e in events if e["event"] == "response"]
    starts = [e["ts"] for e in events if e["event"] == "request"]
    assert session.requests[0].delay_s == 0.0
    for k in range(1, len(starts)):
        assert session.requests[k].delay_s == pytest.approx(starts[k] - ends[k - 1])
    tools = sum(e["result"]["duration_s"] for e in events if e["event"] == "tool_result")
    assert sum(r.tool_s for r in session.requests) == pytest.approx(tools)
    assert all(r.tool_s <= r.delay_s + 1e-6 for r in session.requests)


def test_body_is_what_the_model_client_sends() -> None:
    session = load_workload([str(TRAJECTORY)]).sessions[0]
    body = json.loads(PreparedSession(session, "served-name").requests[2].body)
    assert body["model"] == "served-name"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in body["tools"]} >= {"read_file", "write_file", "run_shell"}
    assert body["max_tokens"] == session.requests[2].max_tokens


def test_atif_gives_the_same_conversation_as_the_trajectory() -> None:
    from_jsonl = _messages(PreparedSession(load_workload([str(TRAJECTORY)]).sessions[0], "m"))
    atif = load_workload([str(FIXTURES / "todo-cli.trajectory.atif.json")]).sessions[0]
    from_atif = _messages(PreparedSession(atif, "m"))
    assert len(from_atif) == len(from_jsonl)
    for a, b in zip(from_atif, from_jsonl, strict=True):
        assert [m["role"] for m in a] == [m["role"] for m in b]
        assert [m.get("content") for m in a] == [m.get("content") for m in b]
        assert [m.get("tool_calls") for m in a] == [m.get("tool_calls") for m in b]


def test_shipped_workloads_load_by_name_and_are_byte_stable() -> None:
    assert {"django-reservations", "todo-cli", "greet-cli-local"} <= set(shipped())
    local = load_workload(["greet-cli-local"]).sessions[0]
    assert local.task == "greet-cli" and local.model_label.startswith("local model")  # a real model's run
    workload = load_workload(["todo-cli"])
    session = workload.sessions[0]
    assert session.task == "todo-cli" and len(session.requests) == 11
    first = [r.body for r in PreparedSession(session, "m").requests]
    again = [r.body for r in PreparedSession(load_workload(["todo-cli"]).sessions[0], "m").requests]
    assert first == again


def test_a_results_folder_gives_every_run_in_it(tmp_path: Path) -> None:
    for name in ("run-a", "run-b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "trajectory.jsonl").write_bytes(TRAJECTORY.read_bytes())
    assert len(load_workload([str(tmp_path)]).sessions) == 2


def test_unreadable_or_empty_recordings_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no recording"):
        load_workload([str(tmp_path / "missing")])
    (tmp_path / "x.workload.json").write_text('{"something": "else"}')
    with pytest.raises(UserError, match="neither"):
        load_workload([str(tmp_path / "x.workload.json")])
    empty = tmp_path / "run"
    empty.mkdir()
    (empty / "trajectory.jsonl").write_text(
        json.dumps({"event": "run_start", "run_id": "r", "ts": 1.0}) + "\n"
    )
    with pytest.raises(UserError, match="no model request"):
        load_workload([str(empty)])


def test_an_atif_call_that_is_not_an_object_is_replayed_as_the_model_wrote_it(tmp_path: Path) -> None:
    """agentrun's ATIF shows such a call as ``{}`` (v1.4 allows only an object) and keeps the text
    in the step's ``extra.raw_arguments``: the replayed reply is the text, not ``{}``."""
    document = json.loads((FIXTURES / "todo-cli.trajectory.atif.json").read_text())
    step = next(s for s in document["steps"] if s.get("tool_calls"))
    call = step["tool_calls"][0]
    broken = '{"path": "todo.py", "content": "print(1)'  # cut off mid-string
    call["arguments"] = {}
    step.setdefault("extra", {})["raw_arguments"] = {call["tool_call_id"]: broken}
    path = tmp_path / "broken.atif.json"
    path.write_text(json.dumps(document))
    session = load_workload([str(path)]).sessions[0]
    replies = [r.reply for r in session.requests if r.reply]
    written = [c["arguments"] for r in replies for c in r["tool_calls"] if c["id"] == call["tool_call_id"]]
    assert written == [broken]


def test_a_foreign_atif_is_replayed_as_its_harness_sent_it() -> None:
    """A trajectory written with Harbor's own ATIF models (fixtures/load/make_foreign_atif.py):
    content parts, a deterministic dispatch (llm_call_count 0), a system event among the
    results and the harness's own tool definitions."""
    session = load_workload([str(FIXTURES / "foreign-terminus.atif.json")]).sessions[0]
    prepared = PreparedSession(session, "m")
    assert len(prepared.requests) == 3  # steps 3, 5 and 6: the dispatch of step 4 was no request
    bodies = [json.loads(r.body) for r in prepared.requests]
    assert all(b["tools"][0]["function"]["name"] == "bash" for b in bodies)  # not agentrun's tools
    first, second, third = (b["messages"] for b in bodies)
    assert first == [
        {"role": "system", "content": "You are a terminal agent."},
        {"role": "user", "content": "Make hello.txt say hi.\n[image: screen.png]"},
    ]
    added = second[len(first) :]
    assert [(m["role"], m.get("tool_call_id")) for m in added] == [
        ("assistant", None),
        ("tool", "c1"),
        ("assistant", None),  # the dispatch: history only
        ("tool", "c2"),
    ]
    assert added[1]["content"] == "README.md" and added[2]["tool_calls"][0]["id"] == "c2"
    assert third[len(second) :][-1] == {"role": "user", "content": "[system] 1 minute left"}
    for messages in (first, second, third):
        assert all(isinstance(m.get("content") or "", str) for m in messages)
