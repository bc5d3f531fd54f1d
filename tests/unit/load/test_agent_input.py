"""An installed agent's run as a recorded workload: its gateway's bodies, sent again as they came."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentrun.cli import app, main
from agentrun.errors import UserError
from agentrun.gateway.sent import SentBodies
from agentrun.load.agent_input import with_model
from agentrun.load.embedded import RecordedReplies
from agentrun.load.workload import PreparedSession, load_workload
from agentrun.trajectory import Trajectory

TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]


def _raw(messages: list[dict[str, Any]], *, stream: bool, model: str = "agent-model") -> bytes:
    """A body as an agent writes it: its own key order, spacing and escaping."""
    chat = json.dumps(messages, ensure_ascii=False)
    flags = '"stream":true,"stream_options":{"include_usage":true}' if stream else '"stream": false'
    return f'{{"messages":{chat}, "model" : "{model}",\n"tools":{json.dumps(TOOLS)},{flags}}}'.encode()


def _conversation(n: int, opening: str) -> list[list[dict[str, Any]]]:
    """The message lists of ``n`` requests of one conversation, each extending the last."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief. ünïcode"}]
    messages.append({"role": "user", "content": opening})
    out = [list(messages)]
    for k in range(1, n):
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"command":"ls"}'},
        }
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}]
        messages += [{"role": "tool", "tool_call_id": f"c{k}", "content": f"out {k}"}]
        out.append(list(messages))
    return out


def _agent_run(folder: Path, requests: list[tuple[str | None, bytes, float, float]]) -> list[str]:
    """A run folder as ``task --agent`` leaves it: result.json, gateway/requests.jsonl and
    gateway/bodies.jsonl.gz (written by the gateway's own writers); the request ids."""
    gateway = folder / "gateway"
    gateway.mkdir(parents=True)
    (folder / "result.json").write_text(
        json.dumps({"run_id": folder.name, "task": "greet-cli", "agent": "x"})
    )
    lines = Trajectory(gateway / "requests.jsonl", run_id=folder.name, mode="corrected")
    bodies = SentBodies(gateway / "bodies.jsonl.gz")
    ids = []
    for i, (conversation, raw, received, answered) in enumerate(requests):
        rid = f"req{i}"
        ids.append(rid)
        reply = {"role": "assistant", "content": f"reply {i}", "tool_calls": []}
        usage = {"prompt_tokens": 10, "completion_tokens": 7 + i}
        lines.append(
            "request", request_id=rid, conversation=conversation, upstream_message=reply, usage=usage
        )
        head = {
            "request_id": rid,
            "conversation": conversation,
            "path": "/v1/chat/completions",
            "status": 200,
        }
        bodies.add({**head, "received": received, "answered": answered}, raw)
    lines.close()
    bodies.close()
    return ids


def test_an_agent_run_replays_its_own_bytes_by_conversation_with_its_gaps(tmp_path: Path) -> None:
    main = [_raw(m, stream=True) for m in _conversation(3, "write greet.py")]
    side = _raw(_conversation(1, "a title for this")[0], stream=False)
    run = tmp_path / "run-1"
    _agent_run(
        run,
        [
            ("", main[0], 100.0, 104.0),
            ("t", side, 100.5, 101.0),
            ("", main[1], 106.5, 110.0),
            ("", main[2], 113.0, 120.0),
        ],
    )
    workload = load_workload([str(run)])
    first, title = workload.sessions
    assert (first.id, title.id, first.task, first.model) == ("run-1", "run-1/t", "greet-cli", "agent-model")
    assert [r.delay_s for r in first.requests] == [0.0, 2.5, 3.0]  # arrival less the previous reply's end
    assert [r.reply_tokens for r in first.requests] == [7, 9, 10] and title.requests[0].reply_tokens == 8
    same = PreparedSession(first, "agent-model").requests
    assert [p.body for p in same] == main  # the agent's bytes, not a re-encoding
    assert [(p.stream, p.depth) for p in same] == [(True, 0), (True, 1), (True, 2)]
    other = PreparedSession(first, "served/model-B").requests
    assert [p.body for p in other] == [b.replace(b'"agent-model"', b'"served/model-B"') for b in main]
    (side_prepared,) = PreparedSession(title, "m").requests
    assert side_prepared.stream is False and json.loads(side_prepared.body)["model"] == "m"
    # a later request is kept as an edit of the one before: its size is about its new messages
    assert len(first.requests[2].body_edit[2]) < len(main[2]) // 2  # type: ignore[index]
    replies = RecordedReplies(workload)  # the embedded replay model answers with the recorded reply
    for session in workload.sessions:
        for prepared, recorded in zip(PreparedSession(session, "m").requests, session.requests, strict=True):
            turn = replies.mutate(None, json.loads(prepared.body)["messages"], 0)  # type: ignore[arg-type]
            assert turn.content == recorded.reply["content"]  # type: ignore[index]


def test_a_workload_file_made_from_an_agent_run_sends_the_same_bytes(tmp_path: Path) -> None:
    main = [_raw(m, stream=True) for m in _conversation(4, "x" * 40_000)]
    run = tmp_path / "results" / "run-2"
    _agent_run(run, [(None, raw, 10.0 * i, 10.0 * i + 1) for i, raw in enumerate(main)])
    workload = load_workload([str(run)])
    path = tmp_path / "agent.workload.json.gz"
    workload.save(path)
    assert path.stat().st_size < 2_000  # the 40 KB opening compresses, the rest are edits
    again = load_workload([str(path)])
    assert [p.body for p in PreparedSession(again.sessions[0], "m").requests] == [
        p.body for p in PreparedSession(workload.sessions[0], "m").requests
    ]
    assert len(load_workload([str(tmp_path / "results")]).sessions) == 1  # a folder of runs
    gateway = load_workload([str(run / "gateway")])  # a gateway's own folder (agentrun gateway --keep-bodies)
    assert [p.body for p in PreparedSession(gateway.sessions[0], "m").requests] == [
        p.body for p in PreparedSession(workload.sessions[0], "m").requests
    ]


def test_an_agent_run_without_bodies_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "old-run"
    (run / "gateway").mkdir(parents=True)
    (run / "gateway" / "requests.jsonl").write_text("")
    (run / "trajectory.jsonl").write_text("")
    with pytest.raises(UserError, match="records no request body to replay"):
        load_workload([str(run)])
    with pytest.raises(UserError, match=r"no trajectory\.jsonl"):  # in a folder of runs it is left out
        load_workload([str(tmp_path)])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"model":"a","messages":[]}', '{"model":"B","messages":[]}'),
        (
            '{ "messages" : [{"model": "inner"}] ,\n\t"model" :  "a" }',
            '{ "messages" : [{"model": "inner"}] ,\n\t"model" :  "B" }',
        ),
        ('{"model":"a","x":{"model":"y"},"model":"last"}', '{"model":"a","x":{"model":"y"},"model":"B"}'),
        ('{"messages":[]}', '{"messages":[]}'),  # no model: as it is
        ("not json", "not json"),
        ('{"model":"a\\u00e9"}', '{"model":"B"}'),
    ],
)
def test_only_the_top_level_model_changes(body: str, expected: str) -> None:
    assert with_model(body, "B") == expected


@pytest.mark.parametrize(
    ("name", "tools", "stream"),
    [
        ("greet-cli-mini-swe-agent-local", 1, False),
        ("greet-cli-qwen-code-local", 15, True),
        ("greet-cli-opencode-local", 10, True),
    ],
)
def test_each_installed_agent_ships_a_recording_of_its_own_requests(
    name: str, tools: int, stream: bool
) -> None:
    """The shipped recordings (README, "Load a server"): the agent's own tools and flags, sent for any model."""
    (session,) = load_workload([name]).sessions
    prepared = PreparedSession(session, "m").requests
    assert prepared and all(p.stream is stream for p in prepared)
    for request in prepared:
        body = json.loads(request.body)
        assert (
            body["model"] == "m" and len(body["tools"]) == tools and body["messages"][0]["role"] == "system"
        )
    assert prepared == PreparedSession(load_workload([name]).sessions[0], "m").requests  # byte-stable


def test_save_workload_writes_a_run_as_one_file_and_a_run_without_bodies_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run-3"
    _agent_run(run, [(None, _raw(m, stream=True), 1.0, 2.0) for m in _conversation(2, "hi")])
    path = tmp_path / "out" / "mine.workload.json.gz"
    done = CliRunner().invoke(app, ["load", "--replay", str(run), "--save-workload", str(path)])
    assert done.exit_code == 0, done.output
    assert json.loads(gzip.decompress(path.read_bytes()))["name"] == "mine"
    assert [len(s.requests) for s in load_workload([str(path)]).sessions] == [2]
    old = tmp_path / "old"
    (old / "gateway").mkdir(parents=True)
    (old / "gateway" / "requests.jsonl").write_text("")
    for args, said in [
        (["--replay", str(old), "--no-report"], "records no request body to replay"),
        (["--replay", str(run), "--save-workload", str(tmp_path / "x.json")], "NAME.workload.json"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main(["load", *args])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and said in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
