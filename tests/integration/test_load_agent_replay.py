"""An installed agent's run replayed by ``agentrun load --replay`` (issue 22, item 4).

The agent solves todo-cli on the replay model (its steps in the agent's own tools), every
request through the run's gateway, which keeps each body as received. ``load --replay`` of the
run's folder then sends those bodies again: a capture server on loopback gets the agent's
bytes with only ``model`` changed (checked against the sha256 the gateway wrote in
``requests.jsonl`` when the request came in, not against our own copy), streamed or not as the
agent asked; the embedded replay model answers every one of them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import run_cli

from agentrun.config import RunConfig
from agentrun.lines import read_jsonl
from agentrun.load.agent_input import with_model
from agentrun.runner import run_task

pytestmark = pytest.mark.slow

SERVED = "served-by-capture"


class _Capture(BaseHTTPRequestHandler):
    """Keeps every raw chat body; answers it streamed or whole, as the body asks."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # the load's pre-flight GET /models
        self._send("application/json", json.dumps({"object": "list", "data": [{"id": SERVED}]}).encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(raw)  # type: ignore[attr-defined]
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        if not json.loads(raw).get("stream"):
            message = {"role": "assistant", "content": "ok"}
            reply = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}
            self._send("application/json", json.dumps(reply).encode())
            return
        events = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        self._send("text/event-stream", data)


@pytest.fixture
def capture() -> Iterator[tuple[str, list[bytes]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.bodies  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def _load(*args: str) -> dict[str, Any]:
    done = run_cli("load", "--replay", *args, "--no-report", timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = Path(args[args.index("--results") + 1])
    return json.loads(next(results.glob("load-*/load.json")).read_text())


@pytest.mark.parametrize("agent", ["mini-swe-agent", "qwen-code"])
def test_a_replay_of_an_agent_run_sends_the_agents_bytes(
    agent: str, todo_image: str, tmp_path: Path, capture: tuple[str, list[bytes]]
) -> None:
    result = run_task(RunConfig(task="todo-cli", agent=agent, results_dir=tmp_path / "runs"))
    assert result.stop_reason == "final_answer", (result.stop_reason, result.error)
    run_dir = Path(result.results_path)
    rows = read_jsonl(run_dir / "gateway" / "requests.jsonl")
    assert len(rows) == result.requests >= 5

    base_url, bodies = capture
    _load(
        str(run_dir),
        "--base-url",
        base_url,
        "--model",
        SERVED,
        "--time-scale",
        "0",
        "--results",
        str(tmp_path / "a"),
    )
    assert len(bodies) == len(rows)
    for got, row in zip(bodies, rows, strict=True):
        sent_model = json.loads(got)["model"]
        assert sent_model == SERVED
        # with the agent's model put back, the bytes are the ones the gateway received and hashed
        original = with_model(got.decode(), row["model"]).encode()
        assert hashlib.sha256(original).hexdigest() == row["request"]["sha256"]
        assert (
            bool(json.loads(got).get("stream")) == row["stream"]
        )  # the agent's own flag (mini-swe-agent: off)

    load = _load(str(run_dir), "--time-scale", "0", "--results", str(tmp_path / "b"))  # embedded replay model
    answered = [r for r in load["requests"] if not r.get("warmup")]
    assert len(answered) == len(rows) and all(r["error"] is None for r in answered), answered
    assert all(r["output_tokens"] for r in answered if r.get("output_tokens") is not None)
