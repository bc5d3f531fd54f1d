"""The gateway over real HTTP: the official openai SDK in front, the replay model behind it.

The replay model's fault injection writes every tool call into the text (as a server whose
parser misses the model's format does); direct mode hands that text on, corrected mode turns
it back into ``tool_calls``, streaming and not, with the text before the call sent at once;
``/v1/responses`` (the SDK's Responses API) into ``function_call`` items, on the same corrector.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from agentrun.gateway import GatewayConfig, GatewayHandle, start
from agentrun.replay import FaultInjector, ReplayServer, Script, ScriptCall, ScriptTurn

WRITE = {"path": "hello.py", "content": "print('hello')\n"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_shell",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
]
PROSE = "I will write the file now, then run it to check it."


def coding_script() -> Script:
    return Script(
        turns=[
            ScriptTurn(content=PROSE, tool_calls=[ScriptCall(name="write_file", arguments=WRITE)]),
            ScriptTurn(
                content="Now I run it.",
                tool_calls=[ScriptCall(name="run_shell", arguments={"command": "python hello.py"})],
            ),
            ScriptTurn(content="The script prints hello. Done."),
        ],
        model_name="replay",
    )


@pytest.fixture
def leaky() -> Iterator[ReplayServer]:
    """A replay model that writes every call into its text (Hermes/Qwen style), 20 ms a token."""
    injector = FaultInjector(rate=1.0, seed=3, kinds=("text_tool_call",), mix="qwen")
    with ReplayServer(coding_script(), ttft=0.05, token_delay=0.02, fault_injector=injector) as server:
        yield server


def gateway(upstream: str, tmp_path: Path, mode: str = "corrected", **kw: Any) -> GatewayHandle:
    return start(GatewayConfig(upstream=upstream, port=0, mode=mode, results=tmp_path / f"gw-{mode}", **kw))  # type: ignore[arg-type]


def client(gw: GatewayHandle, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=gw.base_url, api_key=kw.pop("api_key", "sk-test"), max_retries=0, timeout=30, **kw
    )


def records(gw: GatewayHandle) -> list[dict[str, Any]]:
    path = gw.results / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_streamed_leaked_call_arrives_as_tool_call_deltas_and_text_comes_first(
    leaky: ReplayServer, tmp_path: Path
) -> None:
    with gateway(leaky.base_url, tmp_path) as gw:
        sdk = client(gw)
        t0 = time.perf_counter()
        stream = sdk.chat.completions.create(
            model="replay",
            messages=[{"role": "user", "content": "write hello.py"}],
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, text_times, calls, call_times, finish, usage = "", [], {}, [], None, None
        for chunk in stream:
            now = time.perf_counter() - t0
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                if choice.delta.content:
                    text += choice.delta.content
                    text_times.append(now)
                for call in choice.delta.tool_calls or ():
                    entry = calls.setdefault(call.index, {"id": None, "name": None, "args": ""})
                    entry["id"] = entry["id"] or call.id
                    entry["name"] = entry["name"] or (call.function.name if call.function else None)
                    entry["args"] += (call.function.arguments or "") if call.function else ""
                    call_times.append(now)
                finish = choice.finish_reason or finish
    assert finish == "tool_calls"
    assert list(calls) == [0] and calls[0]["name"] == "write_file" and calls[0]["id"]
    assert json.loads(calls[0]["args"]) == WRITE
    assert text.strip() == PROSE
    assert usage is not None and usage.completion_tokens > 20
    # the call's text is ~40 tokens at 20 ms: the upstream ends ~0.8 s after the prose; the prose
    # reached the SDK token by token before that, the call only once the upstream had finished
    assert len(text_times) > 5
    assert text_times[0] < call_times[0] - 0.5, (text_times[:3], call_times[:1])
    line = records(gw)[0]
    assert line["repairs"][0]["kind"] == "text_tool_call" and "<tool_call>" in (
        line["repairs"][0]["before"] or ""
    )
    assert line["timings"]["ttfvt_s"] < line["timings"]["e2e_s"] - 0.5


def test_non_streaming_reply_is_repaired(leaky: ReplayServer, tmp_path: Path) -> None:
    with gateway(leaky.base_url, tmp_path) as gw:
        reply = client(gw).chat.completions.create(
            model="replay", messages=[{"role": "user", "content": "write hello.py"}], tools=TOOLS
        )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls and choice.message.tool_calls[0].function.name == "write_file"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == WRITE
    assert (choice.message.content or "").strip() == PROSE
    assert reply.usage is not None and reply.usage.prompt_tokens > 0


def _run_tool(name: str, args: dict[str, Any], work: Path) -> str:
    import subprocess
    import sys

    if name == "write_file":
        (work / args["path"]).write_text(args["content"])
        return f"wrote {args['path']}"
    if name == "run_shell":
        cmd = args["command"].replace("python", sys.executable, 1)
        done = subprocess.run(cmd, shell=True, cwd=work, capture_output=True, text=True, timeout=30)
        return done.stdout + done.stderr
    return f"ERROR (unknown_tool): {name}"


def coding_loop(sdk: openai.OpenAI, work: Path, *, stream: bool, turns: int = 6) -> list[str]:
    """A small agent: ask, run the calls it gets in ``work``, answer with their output, until no call."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Write hello.py that prints hello, and run it."}
    ]
    outputs = []
    for _ in range(turns):
        if stream:
            content, calls = "", {}
            for chunk in sdk.chat.completions.create(
                model="replay", messages=messages, tools=TOOLS, stream=True
            ):  # type: ignore[arg-type]
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    for c in choice.delta.tool_calls or ():
                        e = calls.setdefault(c.index, {"id": c.id, "name": c.function.name, "arguments": ""})
                        e["arguments"] += c.function.arguments or ""
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ]
        else:
            message = (
                sdk.chat.completions.create(model="replay", messages=messages, tools=TOOLS).choices[0].message
            )  # type: ignore[arg-type]
            content = message.content or ""
            tool_calls = [c.model_dump() for c in message.tool_calls or ()]
        messages.append(
            {"role": "assistant", "content": content, **({"tool_calls": tool_calls} if tool_calls else {})}
        )
        if not tool_calls:
            break
        for call in tool_calls:
            out = _run_tool(call["function"]["name"], json.loads(call["function"]["arguments"]), work)
            outputs.append(out)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": out})
    return outputs


@pytest.mark.parametrize(
    ("stream", "source"),
    [(True, "designed"), (False, "designed"), (True, "real"), (False, "real")],
    ids=["stream", "no-stream", "stream-real", "no-stream-real"],
)
def test_direct_fails_and_corrected_finishes_the_same_coding_task(
    tmp_path: Path, stream: bool, source: str
) -> None:
    """The same client, task and fault schedule (every call leaked into the text: designed
    renderings, or real model outputs from ``--fault-source real``) through each mode."""
    results = {}
    for mode in ("direct", "corrected"):
        injector = FaultInjector(rate=1.0, seed=3, kinds=("text_tool_call",), mix="qwen", source=source)
        with (
            ReplayServer(coding_script(), ttft=0.01, token_delay=0.001, fault_injector=injector) as server,
            gateway(server.base_url, tmp_path, mode) as gw,
        ):
            work = tmp_path / f"work-{mode}"
            work.mkdir()
            outputs = coding_loop(client(gw), work, stream=stream)
            results[mode] = ((work / "hello.py").is_file(), "hello" in "".join(outputs))
        assert sum(injector.injected.values()) >= 1
    assert results == {"direct": (False, False), "corrected": (True, True)}


# /v1/responses: the same corrector behind the Responses API (the SDK's `responses`)

TOOLS_R = [{"type": "function", **t["function"]} for t in TOOLS]  # the Responses API's flat form
ASK = "write hello.py, then run it"


def _calls(response: Any) -> list[Any]:
    return [item for item in response.output if item.type == "function_call"]


def test_a_call_written_as_text_comes_back_as_a_function_call(leaky: ReplayServer, tmp_path: Path) -> None:
    with gateway(leaky.base_url, tmp_path) as gw:
        sdk = client(gw)
        first = sdk.responses.create(model="replay", input=ASK, tools=TOOLS_R, instructions="Be brief.")  # type: ignore[arg-type]
        (call,) = _calls(first)
        assert call.name == "write_file" and json.loads(call.arguments) == WRITE
        assert first.status == "completed" and "<tool_call>" not in first.output_text
        assert first.usage is not None and first.usage.output_tokens > 20
        follow = [
            {"role": "user", "content": ASK},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "wrote hello.py"},
        ]
        second = sdk.responses.create(model="replay", input=follow, tools=TOOLS_R)  # type: ignore[arg-type]
        (run,) = _calls(second)
        assert run.name == "run_shell" and json.loads(run.arguments) == {"command": "python hello.py"}
    lines = records(gw)
    assert [r["kind"] for r in lines[0]["repairs"]] == ["text_tool_call"]
    assert lines[0]["new_messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": ASK},
    ]
    assert lines[1]["new_messages"] == [
        {"role": "tool", "content": "wrote hello.py", "tool_call_id": call.call_id}
    ]


def test_direct_mode_hands_the_text_on(leaky: ReplayServer, tmp_path: Path) -> None:
    with gateway(leaky.base_url, tmp_path, mode="direct") as gw:
        reply = client(gw).responses.create(model="replay", input=ASK, tools=TOOLS_R)  # type: ignore[arg-type]
    assert _calls(reply) == [] and "<tool_call>" in reply.output_text
    assert records(gw)[0]["repairs"] == []


def test_a_responses_stream_sends_the_text_first_and_the_call_once_decided(
    leaky: ReplayServer, tmp_path: Path
) -> None:
    with gateway(leaky.base_url, tmp_path) as gw:
        t0 = time.perf_counter()
        stream = client(gw).responses.create(model="replay", input=ASK, tools=TOOLS_R, stream=True)  # type: ignore[arg-type]
        kinds, at, text, done = [], {}, "", None
        for event in stream:
            kinds.append(event.type)
            at.setdefault(event.type, time.perf_counter() - t0)
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.completed":
                done = event.response
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert text.strip() == PROSE and kinds.count("response.output_text.delta") > 5  # token by token
    # the leaked call is ~40 tokens at 20 ms after the prose: the text came well before the call
    assert at["response.output_text.delta"] < at["response.function_call_arguments.done"] - 0.5
    assert done is not None and [c.name for c in _calls(done)] == ["write_file"]
    assert done.output_text.strip() == PROSE and json.loads(_calls(done)[0].arguments) == WRITE


def test_what_the_route_does_not_serve_is_a_400(leaky: ReplayServer, tmp_path: Path) -> None:
    with gateway(leaky.base_url, tmp_path) as gw:
        sdk = client(gw)
        with pytest.raises(openai.BadRequestError, match="only function tools"):
            sdk.responses.create(model="replay", input=ASK, tools=[{"type": "web_search"}])  # type: ignore[list-item]
        with pytest.raises(openai.BadRequestError, match="'input'"):
            sdk.responses.create(model="replay", input=[])
        with pytest.raises(openai.NotFoundError):
            sdk.responses.create(model="not-served", input=ASK)
    assert [line["status"] for line in records(gw)] == [400, 400, 404]
