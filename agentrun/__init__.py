"""agentrun: coding-agent workloads against any OpenAI-compatible server.

Runs a task in a Docker sandbox through a real agent loop, repairs broken tool calls
(``corrected`` mode) or uses them as served (``direct`` mode), grades the result with
hidden tests and records every request with its serving timings.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
