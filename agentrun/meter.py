"""What is measured around each model request, outside the agent loop's logic.

``RequestMeter.measure(messages, max_tokens)`` wraps one request: it reads the server's
counters before and after (``MetricsProbe``), so the request's span and trajectory line carry
the server's own figures, and holds the request's KV footprint in the ``AdmissionGate`` while
it runs, so concurrent sessions stay within a token budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agentrun.messages import Message
from agentrun.serving.admission import AdmissionGate
from agentrun.serving.prometheus import MetricsProbe, delta

__all__ = ["CHARS_PER_TOKEN_LOW", "Reading", "RequestMeter"]

CHARS_PER_TOKEN_LOW = 3  # conservative: code and English run at about 3.5 to 4.5 characters per token


@dataclass
class Reading:
    """Filled in once the request has returned: the server's counter deltas over it, if read."""

    server_delta: dict[str, float] | None = None


class RequestMeter:
    """The server probe and the admission gate of one session; either may be absent."""

    def __init__(
        self,
        *,
        probe: MetricsProbe | None = None,
        gate: AdmissionGate | None = None,
        session: str = "",
    ) -> None:
        self.probe, self.gate, self.session = probe, gate, session

    @contextlib.contextmanager
    def measure(
        self, messages: Sequence[Message], max_tokens: int, *, tools_chars: int = 0
    ) -> Iterator[Reading]:
        """Around one request; the reading is complete after the block (not when it raised).

        ``tools_chars``: the size of the tools JSON sent with the request, part of its prompt.
        """
        reading = Reading()
        before = self.probe.snapshot() if self.probe else None
        with self._admitted(messages, max_tokens, tools_chars):
            yield reading
        if self.probe is not None and before is not None:
            after = self.probe.snapshot()
            reading.server_delta = delta(before, after) if after is not None else None

    def _admitted(
        self, messages: Sequence[Message], max_tokens: int, tools_chars: int
    ) -> contextlib.AbstractContextManager[object]:
        """Hold this request's KV footprint (prompt estimate + output headroom) in the gate."""
        if self.gate is None:
            return contextlib.nullcontext()
        chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
        estimate = (chars + tools_chars) // CHARS_PER_TOKEN_LOW + max_tokens
        return self.gate.hold(self.session, estimate)
