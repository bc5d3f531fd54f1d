"""A small coding loop on LiteLLM's Python client, run in LiteLLM's own venv by the gateway tests.

    python litellm_loop.py '[{"base_url": URL, "work": DIR, "stream": false}, ...]'

For each run: asks the model to write hello.py and run it, runs each tool call it gets in
its DIR (``write_file``, ``run_shell``), answers with their output, until a reply has no call.
Prints one JSON line: per run, the calls it ran and their outputs. All runs share one process
(importing litellm takes seconds). Standard library and litellm only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import litellm

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


def run_tool(name: str, args: dict[str, Any], work: Path) -> str:
    if name == "write_file":
        (work / args["path"]).write_text(args["content"])
        return f"wrote {args['path']}"
    if name == "run_shell":
        command = args["command"].replace("python", sys.executable, 1)
        done = subprocess.run(command, shell=True, cwd=work, capture_output=True, text=True, timeout=30)
        return done.stdout + done.stderr
    return f"ERROR (unknown_tool): {name}"


def ask(base_url: str, messages: list[dict[str, Any]], stream: bool) -> tuple[str, list[dict[str, Any]]]:
    kwargs = {
        "model": "openai/replay",
        "api_base": base_url,
        "api_key": "sk-litellm",
        "messages": messages,
        "tools": TOOLS,
    }
    if not stream:
        message = litellm.completion(**kwargs).choices[0].message
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls or ()
        ]
        return message.content or "", calls
    chunks = list(litellm.completion(**kwargs, stream=True))
    message = litellm.stream_chunk_builder(chunks, messages=messages).choices[0].message
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in message.tool_calls or ()
    ]
    return message.content or "", calls


def coding_task(base_url: str, work: Path, stream: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Write hello.py that prints hello, and run it."}
    ]
    ran, outputs = [], []
    for _ in range(6):
        content, calls = ask(base_url, messages, stream)
        messages.append({"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})})
        if not calls:
            break
        for call in calls:
            output = run_tool(call["function"]["name"], json.loads(call["function"]["arguments"]), work)
            ran.append(call["function"]["name"])
            outputs.append(output)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return {"ran": ran, "outputs": outputs, "last": messages[-1].get("content")}


def main() -> None:
    runs = json.loads(sys.argv[1])
    print(json.dumps([coding_task(r["base_url"], Path(r["work"]), bool(r["stream"])) for r in runs]))


if __name__ == "__main__":
    main()
