"""The real local model: llama-server on Qwen2.5-Coder-1.5B, one chat completion through the
openai client. Runs when the cache holds the prepared model; AGENTRUN_LOCAL_MODEL_TESTS=1 makes
it prepare first (a ~5 min build and a 1.1 GB download) and, under CI=true, turns a skip into a run."""

from __future__ import annotations

import os

import pytest

from agentrun import localmodel

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_server():
    forced = os.environ.get("AGENTRUN_LOCAL_MODEL_TESTS") == "1"
    if not localmodel.is_prepared():
        if not forced:
            pytest.skip(
                "the local model is not prepared (run `agentrun local-model prepare`, "
                "or set AGENTRUN_LOCAL_MODEL_TESTS=1 to prepare it here)"
            )
        localmodel.prepare()
    server = localmodel.serve(ctx=2048)
    try:
        yield server
    finally:
        server.stop()
    assert not server.running


def test_real_chat_completion(local_server):
    import openai

    client = openai.OpenAI(base_url=local_server.base_url, api_key="EMPTY", timeout=300)
    models = [m.id for m in client.models.list()]
    assert local_server.model in models
    reply = client.chat.completions.create(
        model=local_server.model,
        messages=[{"role": "user", "content": "Reply with the single word: pong"}],
        temperature=0,
        max_tokens=8,
    )
    text = reply.choices[0].message.content or ""
    assert "pong" in text.lower()
    assert reply.usage is not None and reply.usage.completion_tokens > 0


def test_prefix_cache_is_reused(local_server):
    import openai

    client = openai.OpenAI(base_url=local_server.base_url, api_key="EMPTY", timeout=300)
    messages = [
        {"role": "system", "content": "You are terse. " * 40},
        {"role": "user", "content": "Say hi."},
    ]
    client.chat.completions.create(model=local_server.model, messages=messages, temperature=0, max_tokens=4)
    again = client.chat.completions.create(
        model=local_server.model, messages=messages, temperature=0, max_tokens=4
    )
    details = again.usage.prompt_tokens_details if again.usage else None
    assert details is not None and (details.cached_tokens or 0) > 100
