"""The replay model: a real OpenAI-compatible HTTP server that plays scripted turns.

It is agentrun's embedded default model and its test double: it speaks the chat-completions
protocol the way vLLM does (SSE chunks, reasoning fields, tool-call deltas, usage), replays
a ``Script`` token by token with known delays, and takes two hooks: a fault injector that
turns clean turns into the broken output real models produce, and a prefix-cache imitation
that reports cached tokens and serves ``/metrics``. Everything it says is labelled
``LABEL``: it is scripted, not a real LLM.

::

    script.py   Script, ScriptTurn, ScriptCall, tokenize, plan_turn, script_from_task
    server.py   ReplayServer and its hook protocols (FaultInjector, PromptCache)
"""

from agentrun.replay.script import (
    CLOSING_TURN,
    LABEL,
    MAX_RETRIES,
    Script,
    ScriptCall,
    ScriptTurn,
    TurnPlan,
    plan_turn,
    script_from_task,
    tokenize,
)
from agentrun.replay.server import FaultInjector, PromptCache, ReplayServer, RequestRecord

__all__ = [
    "CLOSING_TURN",
    "LABEL",
    "MAX_RETRIES",
    "FaultInjector",
    "PromptCache",
    "ReplayServer",
    "RequestRecord",
    "Script",
    "ScriptCall",
    "ScriptTurn",
    "TurnPlan",
    "plan_turn",
    "script_from_task",
    "tokenize",
]
