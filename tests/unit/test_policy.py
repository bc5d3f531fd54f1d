"""The two modes as policies, and the request meter, without a model or a sandbox."""

from __future__ import annotations

import time

from agentrun import repair
from agentrun.messages import Completion, Message, Timings, ToolCall, Usage
from agentrun.meter import CHARS_PER_TOKEN_LOW, RequestMeter
from agentrun.policy import CorrectedPolicy, DirectPolicy, policy_for
from agentrun.serving.admission import AdmissionGate
from agentrun.toolset import builtin_specs

LEAKED = '<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>'


def _completion(
    content: str | None = None, *calls: ToolCall, finish: str = "stop", tokens: int = 5
) -> Completion:
    message = Message(role="assistant", content=content, reasoning="thinking", tool_calls=calls)
    return Completion(
        message=message,
        finish_reason=finish,
        usage=Usage(completion_tokens=tokens),
        timings=Timings(started_at=time.time()),
    )


def test_direct_uses_the_reply_as_served_and_never_asks_again() -> None:
    policy = DirectPolicy()
    completion = _completion(LEAKED)
    correction = policy.correct(completion, builtin_specs(), 100)
    assert correction.calls == () and policy.records_repairs is False
    assert policy.reask(correction, 100, []) is None
    kept = policy.assistant_message(completion, correction)
    assert kept.content == LEAKED and kept.reasoning is None


def test_corrected_repairs_the_reply_and_keeps_the_repaired_form() -> None:
    policy = CorrectedPolicy()
    completion = _completion(LEAKED)
    correction = policy.correct(completion, builtin_specs(), 100)
    assert [c.name for c in correction.calls] == ["list_files"] and policy.records_repairs
    kept = policy.assistant_message(completion, correction)
    assert [c.name for c in kept.tool_calls] == ["list_files"] and kept.reasoning is None


def test_corrected_asks_a_cut_off_reply_again_with_twice_the_budget_and_nudges_a_silent_one() -> None:
    policy = CorrectedPolicy()
    cut = policy.correct(_completion(None, finish="length", tokens=100), builtin_specs(), 100)
    assert cut.truncated and policy.reask(cut, 100, []) == (200, [])
    silent = policy.correct(_completion(None), builtin_specs(), 100)
    max_tokens, tail = policy.reask(silent, 100, []) or (0, [])
    assert max_tokens == 100 and [m.content for m in tail] == [repair.REASONING_ONLY_NUDGE]
    answer = policy.correct(_completion("All done."), builtin_specs(), 100)
    assert policy.reask(answer, 100, []) is None


def test_corrected_feedback_counts_down_a_per_tool_budget_that_a_success_resets() -> None:
    policy = CorrectedPolicy(tool_retries=2)
    rejection = repair.ToolRejection("c1", "write_file", "schema", "bad path.")
    assert policy.feedback(rejection) == "bad path. (1 retries left for write_file)"
    policy.tool_succeeded("write_file")
    assert policy.feedback(rejection) == "bad path. (1 retries left for write_file)"
    assert policy.feedback(rejection).endswith("(0 retries left for write_file)")
    assert policy.budget_spent is None
    assert policy.feedback(rejection) == "bad path." and policy.budget_spent == "write_file"
    direct = policy_for("direct")
    assert direct.feedback(rejection) == "bad path." and direct.budget_spent is None


def test_meter_holds_the_prompt_estimate_plus_headroom_in_the_gate() -> None:
    gate = AdmissionGate(10_000)
    meter = RequestMeter(gate=gate, session="s")
    messages = [Message(role="user", content="x" * 300)]
    with meter.measure(messages, 1000, tools_chars=300) as reading:
        assert gate.peak_tokens == 600 // CHARS_PER_TOKEN_LOW + 1000
    assert reading.server_delta is None  # no probe: nothing read
