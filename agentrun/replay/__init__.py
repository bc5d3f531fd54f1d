"""The replay model: a real OpenAI-compatible HTTP server that plays scripted turns.

It is agentrun's embedded default model and its test double: it speaks the chat-completions
protocol the way vLLM does (SSE chunks, reasoning fields, tool-call deltas, usage), replays
a ``Script`` token by token with known delays, and takes two hooks: a fault injector that
turns clean turns into the broken output real models produce, and a prefix-cache imitation
that reports cached tokens and serves ``/metrics``. Everything it says is labelled
``LABEL``: it is scripted, not a real LLM.

::

    script.py     Script, ScriptTurn, ScriptCall, tokenize, plan_turn, script_from_task (and _for_tasks)
    server.py     ReplayServer: the HTTP server
    render.py     render_turn: a scripted step written in the tools a request offers (by their schemas)
    hooks.py      its hook protocols (TurnMutator, PromptCache) and RequestRecord
    reply.py      Reply: a turn as the deltas, finish reason and usage a vLLM server would send
    faults.py     FaultInjector: seeded faults the way real model families get tool calls wrong
    textcalls.py  render_text_calls: tool calls written as text, per model family
    kvsim.py      KVCacheSimulator: a two-tier (GPU + CPU offload) vLLM prefix cache on /metrics
    build.py      build_server(script, ...) and describe(): the stack assembled, and its label
"""

from agentrun.replay.build import GPU_KV_TOKENS, build_server, describe
from agentrun.replay.faults import FaultInjector
from agentrun.replay.hooks import PromptCache, RequestRecord, TurnMutator
from agentrun.replay.kvsim import KVCacheSimulator
from agentrun.replay.script import (
    CLOSING_TURN,
    LABEL,
    MAX_RETRIES,
    Script,
    ScriptCall,
    ScriptTurn,
    TurnPlan,
    plan_turn,
    script_for_tasks,
    script_from_task,
    tokenize,
)
from agentrun.replay.server import ReplayServer

__all__ = [
    "CLOSING_TURN",
    "GPU_KV_TOKENS",
    "LABEL",
    "MAX_RETRIES",
    "FaultInjector",
    "KVCacheSimulator",
    "PromptCache",
    "ReplayServer",
    "RequestRecord",
    "Script",
    "ScriptCall",
    "ScriptTurn",
    "TurnMutator",
    "TurnPlan",
    "build_server",
    "describe",
    "plan_turn",
    "script_for_tasks",
    "script_from_task",
    "tokenize",
]
