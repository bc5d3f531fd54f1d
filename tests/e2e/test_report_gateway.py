"""A gateway's folder as a page, in a real headless Chromium: the folder is made by a real gateway
(``agentrun.gateway.start``) in front of the replay model, driven by the official OpenAI SDK
through a small tool-calling conversation, and the page by ``agentrun report``.

The replay model plays a server whose parser misses the model's format (the first call comes as
text), a reply cut off at ``max_tokens`` in the middle of a call, and a clean call; a request
for a model that is not served fails. Each is found in its request on the page as a reader
opens it: the leaked call as a diff of what the model sent and what the client got, the call
that was not returned with why, the tool result the client sent as the next request's message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from agentrun_testsupport import read_jsonl, run_cli
from report_browser import READY_TIMEOUT_MS, chromium_or_skip, watched_page

from agentrun.gateway import GatewayConfig, start
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn

WRITE = {"path": "hello.py", "content": "print('hello')\n"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "string"} for k in props},
                "required": list(props),
            },
        },
    }
    for name, props in (("write_file", ("path", "content")), ("run_shell", ("command",)))
]
LEAKED = (
    f"I write the file.\n<tool_call>\n{json.dumps({'name': 'write_file', 'arguments': WRITE})}\n</tool_call>"
)
TOOL_OUTPUT = "wrote hello.py (15 bytes)"


def _script() -> Script:
    return Script(
        turns=[
            ScriptTurn(content=LEAKED),  # the call as text: a server whose parser missed it
            ScriptTurn(
                content="Now I run it.",
                tool_calls=[ScriptCall(name="run_shell", arguments='{"command": "python hel')],
                finish_reason="length",
            ),
            ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": "python hello.py"})]),
            ScriptTurn(content="It prints hello. Done."),
        ],
        model_name="replay",
    )


def _converse(sdk: openai.OpenAI) -> None:
    """A client's loop: each call answered with a tool result, a cut-off reply with "go on"."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "write hello.py and run it"}]
    for number in range(4):
        if number == 0:  # the first reply streamed, the others not
            stream = sdk.chat.completions.create(model="replay", messages=messages, tools=TOOLS, stream=True)  # type: ignore[arg-type]
            calls: dict[int, dict[str, str]] = {}
            for chunk in stream:
                for call in (chunk.choices[0].delta.tool_calls or ()) if chunk.choices else ():
                    entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    entry["id"] = entry["id"] or call.id or ""
                    entry["name"] = entry["name"] or (call.function.name or "" if call.function else "")
                    entry["arguments"] += (call.function.arguments or "") if call.function else ""
            found = list(calls.values())
        else:
            message = (
                sdk.chat.completions.create(model="replay", messages=messages, tools=TOOLS).choices[0].message
            )  # type: ignore[arg-type]
            found = [
                {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                for c in message.tool_calls or ()
                if c.type == "function"
            ]
        wire = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in found
        ]
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": wire}
            if wire
            else {"role": "assistant", "content": "…"}
        )
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": TOOL_OUTPUT} for c in found]
        if not found:
            messages.append({"role": "user", "content": "go on"})
    with pytest.raises(openai.NotFoundError):
        sdk.chat.completions.create(model="not-served", messages=messages, tools=TOOLS)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def gateway_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gateway") / "gw"
    with (
        ReplayServer(_script(), ttft=0.01, token_delay=0.002) as server,
        start(GatewayConfig(upstream=server.base_url, port=0, model="replay", results=folder)) as gw,
    ):
        _converse(openai.OpenAI(base_url=gw.base_url, api_key="sk-test", max_retries=0, timeout=30))
    proc = run_cli("report", str(folder), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with chromium_or_skip() as b:
        yield b


def _open(page: Any, n: int) -> Any:
    page.locator(f"#turn-{n} > summary").click()
    page.wait_for_selector(f"#turn-{n} > .turn-body[data-rendered]", state="attached", timeout=10_000)
    return page.locator(f"#turn-{n}")


def test_a_gateway_folder_reads_request_by_request(chromium: Any, gateway_dir: Path) -> None:
    lines = [e for e in read_jsonl(gateway_dir / "requests.jsonl") if e["event"] == "request"]
    assert [x["status"] for x in lines] == [200, 200, 200, 200, 404]
    assert [r["kind"] for r in lines[0]["repairs"]] == ["text_tool_call"]
    page, errors = watched_page(chromium)
    try:
        page.goto((gateway_dir / "report.html").resolve().as_uri())
        page.wait_for_function("document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
        for plot in ("load-cdf", "load-throughput", "gateway-repairs"):
            assert page.locator(f"#{plot} .main-svg g.trace").count() >= 1, plot
        assert page.locator("details.turn").count() == 5
        assert page.locator(".turn-body[data-rendered]").count() == 0  # drawn when opened

        first = _open(page, 1)
        assert "write hello.py and run it" in first.locator(".message.user").inner_text()
        call = first.locator(".call.repaired")
        assert "write_file · repaired: text_tool_call" in call.locator(".call-title").inner_text()
        assert "the model sent → what the client got" in call.inner_text()
        assert any("<tool_call>" in s for s in call.locator("pre.call-diff span.del").all_inner_texts())
        assert call.locator("pre.call-diff span.add").count() >= 2

        cut = _open(page, 2)
        assert TOOL_OUTPUT in cut.locator(".message.tool").inner_text()  # the result the client sent
        held = cut.locator(".call.rejected")
        assert (
            "run_shell · repaired: truncated · rejected: not returned to the client"
            in held.locator(".call-title").inner_text()
        )
        assert "finish length" in cut.locator(".reply .figures").inner_text()

        clean = _open(page, 3)
        assert "go on" in clean.locator(".message.user").inner_text()
        assert clean.locator(".call.repaired").count() == 0
        assert "python hello.py" in clean.locator(".call").inner_text()

        failed = page.locator("#turn-5 > summary").inner_text()
        assert "http_404" in failed
        assert "not-served" in _open(page, 5).locator(".note").inner_text()
    finally:
        page.close()
    assert errors == []
