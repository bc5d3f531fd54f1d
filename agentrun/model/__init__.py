"""The model client: streaming chat completions on the official ``openai`` SDK.

``OpenAIModel.complete`` sends one request, reads the SSE stream, and returns a
``Completion``: the assembled assistant message (content, reasoning, tool calls), the
server's usage (with cached and reasoning tokens when reported), the client-side
``Timings`` of the attempt that succeeded, and every failed attempt before it with its
cause (``Completion.attempts``). Transient failures are retried (``_failures`` says which);
other 4xx raise ``ModelAPIError`` at once with what to check. A server that was never
reached raises ``ServerUnreachable`` and a refused pre-flight check ``EndpointRejected``
(both ``UserError``: the CLI prints one line).
"""

from agentrun.model._bounds import BODY_LIMIT, STREAM_BODY_LIMIT, BodyRefused, BoundedDecoder
from agentrun.model._client import ModelClient, OpenAIModel, check_reachable
from agentrun.model._failures import parse_retry_after
from agentrun.model._preflight import PREFLIGHT_S, check_served, list_models
from agentrun.model._stream import Assembly as _Assembly

__all__ = [
    "BODY_LIMIT",
    "PREFLIGHT_S",
    "STREAM_BODY_LIMIT",
    "BodyRefused",
    "BoundedDecoder",
    "ModelClient",
    "OpenAIModel",
    "_Assembly",
    "check_reachable",
    "check_served",
    "list_models",
    "parse_retry_after",
]
