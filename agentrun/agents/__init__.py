"""Agents no one here wrote, run against any OpenAI-compatible endpoint (the gateway, mostly).

One small adapter file per agent (``AgentAdapter``): the package and version it is pinned to,
how to install it under a prefix, how to start it with an instruction and where its endpoint
and key go (with its switches for telemetry, update checks and extra requests off), how to read
how it ended, and how the replay model's steps (agentrun's tool names) are written in this
agent's own tools. Adding an agent is one file and one line in ``AGENTS``.

::

    base.py            AgentAdapter, AgentEndpoint, Launch, AgentOutcome; heredoc writing
    mini_swe_agent.py  mini-swe-agent (PyPI): one ``bash`` tool
    qwen_code.py       Qwen Code (npm): write_file, edit, run_shell_command, glob, ...
    opencode.py        opencode (npm, a native binary): write, edit, bash, glob, ... (rendered by schema)
    install.py         ``python -m agentrun.agents.install``: each agent into the cache, once
    image.py           the agent on top of a task's image, a cached layer (``python -m``: built ahead)
    sandboxed.py       ``--agent NAME``: the agent in the task's sandbox, the gateway its one way out
    figures.py         the run's figures from the gateway's records; token_watch.py: its token budget
"""

from __future__ import annotations

import importlib

from agentrun.agents.base import AgentAdapter, AgentEndpoint, AgentOutcome, Launch
from agentrun.errors import UserError

__all__ = ["AGENTS", "AgentAdapter", "AgentEndpoint", "AgentOutcome", "Launch", "get_agent"]

# name -> the module whose ``ADAPTER`` it is (imported when asked for)
AGENTS: dict[str, str] = {
    "mini-swe-agent": "agentrun.agents.mini_swe_agent",
    "opencode": "agentrun.agents.opencode",
    "qwen-code": "agentrun.agents.qwen_code",
}


def get_agent(name: str) -> AgentAdapter:
    """The adapter called ``name``; a ``UserError`` listing the known ones otherwise."""
    if name not in AGENTS:
        raise UserError(f"unknown agent {name!r}; choose from {', '.join(sorted(AGENTS))}")
    adapter: AgentAdapter = importlib.import_module(AGENTS[name]).ADAPTER
    return adapter
