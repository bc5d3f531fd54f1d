"""The failed attempts of a chat request on its span: one ``agentrun.retry`` event each.

The GenAI conventions have no retry event; the event carries the general ``error.type``
(the cause) and ``http.response.status_code``, and the span ``http.request.resend_count``
(the HTTP conventions' count of re-sent requests) next to agentrun's own cause list and
the tokens the server reported for the attempts that failed (kept apart from the span's
``gen_ai.usage.*``, which is the attempt that succeeded).
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.semconv.attributes import error_attributes, http_attributes
from opentelemetry.util.types import AttributeValue

from agentrun.messages import Attempt, Usage
from agentrun.telemetry._content import truncate

EVENT = "agentrun.retry"
_DETAIL_LIMIT = 500


def event_attributes(attempt: Attempt) -> dict[str, AttributeValue | None]:
    usage = attempt.usage
    return {
        "agentrun.retry.attempt": attempt.attempt,
        "agentrun.retry.cause": attempt.cause,
        error_attributes.ERROR_TYPE: attempt.cause,
        http_attributes.HTTP_RESPONSE_STATUS_CODE: attempt.status_code,
        "agentrun.retry.detail": truncate(attempt.detail, _DETAIL_LIMIT) or None,
        "agentrun.retry.retry_after_s": attempt.retry_after_s,
        "agentrun.retry.wait_s": attempt.wait_s,
        "agentrun.retry.elapsed_s": attempt.elapsed_s,
        "agentrun.retry.chunks": attempt.chunks,
        "agentrun.retry.usage.input_tokens": usage.prompt_tokens if usage else None,
        "agentrun.retry.usage.output_tokens": usage.completion_tokens if usage else None,
    }


def event_time_ns(attempt: Attempt) -> int:
    """When the attempt failed (its start plus how long it ran)."""
    return int((attempt.started_at + attempt.elapsed_s) * 1e9)


def span_attributes(attempts: Sequence[Attempt], *, succeeded: bool) -> dict[str, AttributeValue | None]:
    if not attempts:
        return {}
    spent = Usage()
    for attempt in attempts:
        if attempt.usage is not None:
            spent = spent + attempt.usage
    return {
        http_attributes.HTTP_REQUEST_RESEND_COUNT: len(attempts) if succeeded else len(attempts) - 1,
        "agentrun.retry.causes": [a.cause for a in attempts],
        "agentrun.retry_usage.input_tokens": spent.prompt_tokens,
        "agentrun.retry_usage.output_tokens": spent.completion_tokens,
    }
