"""What set 47 showed (the local model under opencode's, mini-swe-agent's and agentrun's requests, and
five pages; read 2026-12-07 23:02 UTC, after set 49 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

BROWSER = tool("browser_action", action={"type": "string"}, url={"type": "string"})


def test_a_qwen_coder_function_with_minimax_parameters() -> None:
    # usestrix/strix issue 439: MiniMax mixing Qwen3-Coder's <function=NAME> with <parameter name="k">
    text = (
        '<function=browser_action>\n<parameter name="action">launch</parameter>\n'
        '<parameter name="url">http://host.docker.internal/</parameter>\n</function>'
    )
    want = [("browser_action", {"action": "launch", "url": "http://host.docker.internal/"})]
    assert calls(text, BROWSER) == want
    assert calls(f"<tool_call>\n{text}\n</tool_call>", BROWSER) == want
    # the function never closed, or cut inside a parameter: nothing runs
    assert calls(text.removesuffix("</function>"), BROWSER, finish_reason="length") == []
    assert calls(text[: text.index("docker")], BROWSER, finish_reason="length") == []
