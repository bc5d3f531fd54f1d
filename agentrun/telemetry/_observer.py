"""``OTelObserver``: the run's hook calls as GenAI-convention spans and metrics.

Span tree of one run (all children hang off the agent span)::

    invoke_agent agentrun            INTERNAL  one per run
    ├── chat {model}                 CLIENT    one per model request (request_started..finished)
    ├── execute_tool {name}          INTERNAL  one per tool call
    └── grade {task}                 INTERNAL  hidden and own test tallies

Each observer owns its TracerProvider and MeterProvider (never the global ones), so
several runs in one process (compare, trials) keep separate resources and exporters.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import (
    SpanExporter,
)
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes import error_attributes, exception_attributes, server_attributes
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, format_span_id, format_trace_id
from opentelemetry.util.types import AttributeValue

from agentrun.messages import Completion, Message, ParsedCall, RepairEvent, Tally, ToolResult, repair_counts
from agentrun.observer import SpanIds
from agentrun.telemetry import _content as content
from agentrun.telemetry import _retries as retries
from agentrun.telemetry._config import TelemetryConfig
from agentrun.telemetry._providers import Providers

AGENT_NAME = "agentrun"
PROVIDER = gen_ai.GenAiProviderNameValues.OPENAI.value  # the client's view of any OpenAI-compatible server
# Newer conventions first; agentrun.* stand-ins for semconv packages that lack them.
TTFC_ATTRIBUTE: str = getattr(gen_ai, "GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK", "agentrun.ttft_s")
CACHED_TOKENS_ATTRIBUTE: str = getattr(
    gen_ai, "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS", "agentrun.usage.cached_tokens"
)
REASONING_TOKENS_ATTRIBUTE: str = getattr(
    gen_ai, "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS", "agentrun.usage.reasoning_tokens"
)
_PROVIDER_ATTRIBUTE: str = getattr(gen_ai, "GEN_AI_PROVIDER_NAME", gen_ai.GEN_AI_SYSTEM)
_REQUEST_PARAMS = {
    "max_tokens": gen_ai.GEN_AI_REQUEST_MAX_TOKENS,
    "max_completion_tokens": gen_ai.GEN_AI_REQUEST_MAX_TOKENS,
    "temperature": gen_ai.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": gen_ai.GEN_AI_REQUEST_TOP_P,
    "top_k": gen_ai.GEN_AI_REQUEST_TOP_K,
    "seed": gen_ai.GEN_AI_REQUEST_SEED,
    "frequency_penalty": gen_ai.GEN_AI_REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": gen_ai.GEN_AI_REQUEST_PRESENCE_PENALTY,
    "stop": gen_ai.GEN_AI_REQUEST_STOP_SEQUENCES,
    "stream": gen_ai.GEN_AI_REQUEST_STREAM,
}
_REPAIR_TEXT_LIMIT = 512
# stop reasons that mean the run failed even when the runner passes no exception
_FAILED_STOP_REASONS = frozenset({"error", "model_error", "interrupted"})


def _ids(span: Span) -> SpanIds:
    ctx = span.get_span_context()
    return {"trace_id": format_trace_id(ctx.trace_id), "span_id": format_span_id(ctx.span_id)}


def _server(base_url: str | None) -> dict[str, AttributeValue]:
    if not base_url:
        return {}
    parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
    if not parts.hostname:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {server_attributes.SERVER_ADDRESS: parts.hostname, server_attributes.SERVER_PORT: port}


def _metric_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in name)


class OTelObserver:
    """A ``RunObserver`` that exports a run as OpenTelemetry spans and metrics.

    Construct one per run; ``flush()`` ends whatever is still open (a Ctrl-C), exports and
    shuts the providers down within ``config.flush_timeout_s``; hooks after it are ignored
    by the SDK. ``span_exporters`` / ``metric_readers`` add sinks (tests use in-memory
    ones); extra span exporters are called synchronously.
    """

    def __init__(
        self,
        config: TelemetryConfig,
        *,
        task: str,
        mode: str,
        model: str,
        run_id: str,
        base_url: str | None = None,
        span_exporters: Sequence[SpanExporter] = (),
        metric_readers: Sequence[MetricReader] = (),
    ) -> None:
        self.config = config
        self._task, self._mode, self._model, self._run_id = task, mode, model, run_id
        self._server = _server(base_url)
        self._redact = content.Redactor([*config.secrets, *config.headers.values()])
        self._providers = Providers.build(config, self._redact, span_exporters, metric_readers)
        self._tracer = self._providers.tracer
        self._token_usage, self._duration, self._ttfc = (
            self._providers.token_usage,
            self._providers.duration,
            self._providers.ttfc,
        )

        self._agent: Span | None = None
        self._chats: dict[int, Span] = {}
        self._tools: dict[str, Span] = {}
        self._grade: Span | None = None
        self._usage = Counter[str]()
        self._flushed = False

    # -- span helpers ---------------------------------------------------------------------

    def _attrs(self, attributes: dict[str, AttributeValue | None]) -> dict[str, AttributeValue]:
        return {k: self._redact.value(v) for k, v in attributes.items() if v is not None}

    def _start(self, name: str, kind: SpanKind, attributes: dict[str, AttributeValue | None]) -> Span:
        parent: Context | None = None if self._agent is None else trace.set_span_in_context(self._agent)
        return self._tracer.start_span(name, context=parent, kind=kind, attributes=self._attrs(attributes))

    def _set(self, span: Span, attributes: dict[str, AttributeValue | None]) -> None:
        span.set_attributes(self._attrs(attributes))

    def _fail(self, span: Span, error_type: str, error: BaseException | str | None = None) -> None:
        """ERROR status, ``error.type`` and (for exceptions) a scrubbed ``exception`` event."""
        message = self._redact.text(str(error)) if error is not None else error_type
        span.set_status(Status(StatusCode.ERROR, content.truncate(message, 500)))
        span.set_attribute(error_attributes.ERROR_TYPE, error_type)
        if isinstance(error, BaseException):
            span.add_event(
                "exception",
                {
                    exception_attributes.EXCEPTION_TYPE: type(error).__qualname__,
                    exception_attributes.EXCEPTION_MESSAGE: content.truncate(message, 2000),
                },
            )

    def _ensure_agent(self) -> None:
        if self._agent is None:
            self.run_started(
                run_id=self._run_id, task=self._task, mode=self._mode, model=self._model, base_url=""
            )

    # -- RunObserver hooks ----------------------------------------------------------------

    def run_started(self, *, run_id: str, task: str, mode: str, model: str, base_url: str) -> SpanIds:
        self._task, self._mode, self._model, self._run_id = task, mode, model, run_id
        self._server = _server(base_url) or self._server
        self._agent = self._start(
            f"invoke_agent {AGENT_NAME}",
            SpanKind.INTERNAL,
            {
                gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value,
                _PROVIDER_ATTRIBUTE: PROVIDER,
                gen_ai.GEN_AI_AGENT_NAME: AGENT_NAME,
                gen_ai.GEN_AI_REQUEST_MODEL: model,
                gen_ai.GEN_AI_CONVERSATION_ID: run_id,
                "agentrun.task": task,
                "agentrun.mode": mode,
                "agentrun.run_id": run_id,
            },
        )
        return _ids(self._agent)

    def request_started(
        self,
        *,
        turn: int,
        params: dict[str, Any],
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
    ) -> SpanIds:
        self._ensure_agent()
        attributes: dict[str, AttributeValue | None] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.CHAT.value,
            _PROVIDER_ATTRIBUTE: PROVIDER,
            gen_ai.GEN_AI_REQUEST_MODEL: self._model,
            gen_ai.GEN_AI_CONVERSATION_ID: self._run_id,
            **self._server,
            "agentrun.mode": self._mode,
            "agentrun.turn": turn,
        }
        for key, attribute in _REQUEST_PARAMS.items():
            value = params.get(key)
            if key == "stop" and isinstance(value, str):
                value = [value]
            if isinstance(value, bool | int | float | str | list | tuple):
                attributes[attribute] = value
        if self.config.capture_content:
            attributes[gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS] = content.system_instructions(messages)
            attributes[gen_ai.GEN_AI_INPUT_MESSAGES] = content.input_messages(messages)
            attributes[gen_ai.GEN_AI_TOOL_DEFINITIONS] = content.tool_definitions(tools)
        span = self._start(f"chat {self._model}", SpanKind.CLIENT, attributes)
        self._chats[turn] = span
        return _ids(span)

    def request_finished(
        self,
        *,
        turn: int,
        completion: Completion | None,
        repairs: Sequence[RepairEvent],
        error: BaseException | None = None,
        server_delta: dict[str, float] | None = None,
    ) -> None:
        span = self._chats.pop(turn, None)
        if span is None:
            return
        if completion is not None:
            self._record_completion(span, completion)
        self._record_attempts(span, completion, error)
        self._record_repairs(span, repairs)
        self._set(span, {f"agentrun.server.{_metric_name(k)}": v for k, v in (server_delta or {}).items()})
        if error is not None:
            self._fail(span, type(error).__qualname__, error)
        self._record_metrics(span, completion, error)
        span.end()

    def _record_completion(self, span: Span, completion: Completion) -> None:
        usage, timings = completion.usage, completion.timings
        self._usage.update(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens or 0,
            reasoning_tokens=usage.reasoning_tokens or 0,
        )
        attributes: dict[str, AttributeValue | None] = {
            gen_ai.GEN_AI_RESPONSE_MODEL: completion.model,
            gen_ai.GEN_AI_RESPONSE_ID: completion.response_id,
            gen_ai.GEN_AI_RESPONSE_FINISH_REASONS: [completion.finish_reason]
            if completion.finish_reason
            else None,
            gen_ai.GEN_AI_USAGE_INPUT_TOKENS: usage.prompt_tokens,
            gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS: usage.completion_tokens,
            CACHED_TOKENS_ATTRIBUTE: usage.cached_tokens,
            REASONING_TOKENS_ATTRIBUTE: usage.reasoning_tokens,
            TTFC_ATTRIBUTE: timings.ttft_s,
            "agentrun.ttfvt_s": timings.ttfvt_s,
            "agentrun.decode_tps": timings.decode_tps,
            "agentrun.e2e_s": timings.e2e_s,
            "agentrun.retries": completion.retries,
            "agentrun.attempt": timings.attempt,  # which attempt the timings and usage measure
            "agentrun.stream_end": completion.stream_end,
        }
        if completion.max_tokens is not None:
            attributes[gen_ai.GEN_AI_REQUEST_MAX_TOKENS] = completion.max_tokens
        if self.config.capture_content:
            attributes[gen_ai.GEN_AI_OUTPUT_MESSAGES] = content.output_messages(completion)
        self._set(span, attributes)

    def _record_attempts(
        self, span: Span, completion: Completion | None, error: BaseException | None
    ) -> None:
        attempts = completion.attempts if completion is not None else getattr(error, "attempts", ())
        for attempt in attempts:
            attributes = self._attrs(retries.event_attributes(attempt))
            span.add_event(retries.EVENT, attributes, timestamp=retries.event_time_ns(attempt))
        self._set(span, retries.span_attributes(attempts, succeeded=completion is not None))

    def _record_repairs(self, span: Span, repairs: Sequence[RepairEvent]) -> None:
        self._set(span, {f"agentrun.repairs.{kind}": n for kind, n in repair_counts(repairs).items()})
        for repair in repairs:
            attributes: dict[str, AttributeValue | None] = {
                "agentrun.repair.kind": repair.kind,
                "agentrun.repair.call_id": repair.call_id,
                "agentrun.repair.detail": content.truncate(repair.detail, _REPAIR_TEXT_LIMIT) or None,
            }
            if self.config.capture_content:  # before/after are model output: content
                attributes["agentrun.repair.before"] = content.truncate(repair.before, _REPAIR_TEXT_LIMIT)
                attributes["agentrun.repair.after"] = content.truncate(repair.after, _REPAIR_TEXT_LIMIT)
            span.add_event("agentrun.repair", self._attrs(attributes))

    def _record_metrics(self, span: Span, completion: Completion | None, error: BaseException | None) -> None:
        attributes: dict[str, AttributeValue] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.CHAT.value,
            _PROVIDER_ATTRIBUTE: PROVIDER,
            gen_ai.GEN_AI_REQUEST_MODEL: self._model,
            **self._server,
        }
        if completion is not None and completion.model:
            attributes[gen_ai.GEN_AI_RESPONSE_MODEL] = completion.model
        start_ns = getattr(span, "start_time", None) or time.time_ns()
        duration = completion.timings.e2e_s if completion is not None else (time.time_ns() - start_ns) / 1e9
        failed = {error_attributes.ERROR_TYPE: type(error).__qualname__} if error is not None else {}
        self._duration.record(duration, {**attributes, **failed})
        if completion is None:
            return
        for token_type, count in (
            (gen_ai.GenAiTokenTypeValues.INPUT.value, completion.usage.prompt_tokens),
            (gen_ai.GenAiTokenTypeValues.OUTPUT.value, completion.usage.completion_tokens),
        ):
            self._token_usage.record(count, {**attributes, gen_ai.GEN_AI_TOKEN_TYPE: token_type})
        if completion.timings.ttft_s is not None:
            self._ttfc.record(completion.timings.ttft_s, attributes)

    def tool_started(self, *, turn: int, call: ParsedCall) -> SpanIds:
        self._ensure_agent()
        attributes: dict[str, AttributeValue | None] = {
            gen_ai.GEN_AI_OPERATION_NAME: gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value,
            gen_ai.GEN_AI_TOOL_NAME: call.name,
            gen_ai.GEN_AI_TOOL_CALL_ID: call.id,
            gen_ai.GEN_AI_TOOL_TYPE: "function",
            "agentrun.turn": turn,
        }
        if self.config.capture_content:
            attributes[gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS] = json.dumps(call.arguments, ensure_ascii=False)
        span = self._start(f"execute_tool {call.name}", SpanKind.INTERNAL, attributes)
        self._tools[call.id] = span
        return _ids(span)

    def tool_finished(self, *, result: ToolResult) -> None:
        span = self._tools.pop(result.call_id, None)
        if span is None:
            return
        attributes: dict[str, AttributeValue | None] = {
            "agentrun.tool.exit_code": result.exit_code,
            "agentrun.tool.duration_s": result.duration_s,
            "agentrun.tool.truncated": result.truncated,
            "agentrun.tool.error": result.error,
        }
        if self.config.capture_content:
            attributes[gen_ai.GEN_AI_TOOL_CALL_RESULT] = result.output
        self._set(span, attributes)
        if result.error is not None:
            self._fail(span, result.error, content.truncate(result.output, 300))
        span.end()

    def grading_started(self) -> SpanIds:
        self._ensure_agent()
        self._grade = self._start(f"grade {self._task}", SpanKind.INTERNAL, {"agentrun.task": self._task})
        return _ids(self._grade)

    def grading_finished(self, *, hidden: Tally, own: Tally, error: BaseException | None = None) -> None:
        span, self._grade = self._grade, None
        if span is None:
            return
        attributes: dict[str, AttributeValue | None] = {}
        for label, tally in (("hidden", hidden), ("own", own)):
            for field in ("passed", "failed", "total"):
                attributes[f"agentrun.grade.{label}.{field}"] = getattr(tally, field)
        self._set(span, attributes)
        if error is not None:
            self._fail(span, type(error).__qualname__, error)
        span.end()

    def run_finished(self, *, stop_reason: str, error: BaseException | None = None) -> None:
        self._end_open_spans("unfinished")
        span, self._agent = self._agent, None
        if span is None:
            return
        self._set(
            span,
            {
                "agentrun.stop_reason": stop_reason,
                **{f"agentrun.usage.{k}": v for k, v in self._usage.items()},
            },
        )
        if error is not None:
            self._fail(span, type(error).__qualname__, error)
        elif stop_reason in _FAILED_STOP_REASONS:
            self._fail(span, stop_reason)
        span.end()

    def flush(self) -> None:
        """End what is still open (interrupted run), export everything, shut down; bounded in time."""
        if self._flushed:
            return
        self._flushed = True
        self._end_open_spans("interrupted")
        if self._agent is not None:
            self._fail(self._agent, "interrupted")
            self._agent.end()
            self._agent = None
        self._providers.shutdown()

    # -- ending ---------------------------------------------------------------------------

    def _end_open_spans(self, error_type: str) -> None:
        open_spans = [*self._chats.values(), *self._tools.values(), *([self._grade] if self._grade else [])]
        self._chats, self._tools, self._grade = {}, {}, None
        for span in open_spans:
            self._fail(span, error_type)
            span.end()
