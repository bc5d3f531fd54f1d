"""Errors as the OpenAI API writes them: ``{"error": {"message", "type", "param", "code"}}``.

Every failure the gateway answers (bad client input, a refused key, an unknown model, an
upstream that is down, answers HTML or 5xx) is one of these bodies with the status an
OpenAI client expects, so SDK clients raise their usual typed errors.
"""

from __future__ import annotations

import json
from typing import Any

from agentrun.messages import Attempt
from agentrun.secrets import scrub

__all__ = ["GatewayError", "UpstreamFailure", "error_body"]

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


def error_body(status: int, message: str, *, code: str | None = None, param: str | None = None) -> bytes:
    """The JSON body of an error answer (the message scrubbed of every registered secret)."""
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    error: dict[str, Any] = {"message": scrub(message), "type": kind, "param": param, "code": code}
    return json.dumps({"error": error}, ensure_ascii=False).encode()


class GatewayError(Exception):
    """A request the gateway answers with an error body (see ``error_body``)."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(scrub(message))
        self.status, self.code, self.param = status, code, param

    def body(self) -> bytes:
        return error_body(self.status, str(self), code=self.code, param=self.param)


class UpstreamFailure(GatewayError):
    """The upstream could not give an answer: down, HTML, 5xx past the retries, or a 4xx.

    ``attempts`` are the failed tries with their causes; ``upstream_body`` is the upstream's
    own JSON error body when it sent one (a 4xx is passed on as the upstream wrote it).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        attempts: tuple[Attempt, ...] = (),
        upstream_body: bytes | None = None,
    ) -> None:
        super().__init__(status, message, code=code)
        self.attempts = attempts
        self.upstream_body = upstream_body

    def body(self) -> bytes:
        return self.upstream_body if self.upstream_body is not None else super().body()
