"""What the user is told when a server refuses, and that an echoed API key is never repeated.

``EchoErrorServer`` (in agentrun_testsupport) is a real HTTP server that answers each route
with a fixed status and body; the body may quote the request's Authorization header, as some
gateways' error pages do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agentrun_testsupport import EchoErrorServer

from agentrun.errors import EndpointRejected, ModelAPIError, UserError
from agentrun.messages import Message
from agentrun.model import OpenAIModel
from agentrun.secrets import forms

USER = [Message(role="user", content="hi")]
NASTY_KEY = 'sk-"quoted\\back\\slash-\\u0041-9f3a'  # quotes, backslashes, a fake escape


MODELS_OK = {"GET /v1/models": (200, "models")}


@pytest.fixture
def model_for() -> Iterator[Any]:
    made: list[OpenAIModel] = []

    def make(server: EchoErrorServer, api_key: str = "sk-test-key-123456") -> OpenAIModel:
        made.append(
            OpenAIModel(server.base_url, "m", api_key=api_key, backoff_initial=0.01, backoff_max=0.02)
        )
        return made[-1]

    yield make
    for model in made:
        model.close()


def _refused_before_and_during(model: OpenAIModel) -> tuple[EndpointRejected, ModelAPIError]:
    """What the pre-flight check raises, then what a chat request raises."""
    with pytest.raises(EndpointRejected) as pre:
        model.check_reachable()
    with pytest.raises(ModelAPIError) as during:
        model.complete(USER, [])
    return pre.value, during.value


def _everywhere(status: int, kind: str) -> dict[str, tuple[int, str]]:
    return {"GET /v1/models": (status, kind), "POST /v1/chat/completions": (status, kind)}


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_says_check_api_key_before_and_during_a_run(model_for: Any, status: int) -> None:
    with EchoErrorServer(_everywhere(status, "json")) as server:
        pre, during = _refused_before_and_during(model_for(server))
        assert server.hits.count("POST /v1/chat/completions") == 1  # no retry: waiting cannot fix a key
    for message in (str(pre), str(during)):
        assert f"HTTP {status}" in message and "check --api-key" in message
    assert isinstance(pre, UserError) and during.status_code == status


def test_a_public_model_list_with_a_refused_chat_is_caught_by_the_chat_probe(model_for: Any) -> None:
    with EchoErrorServer({**MODELS_OK, "POST /v1/chat/completions": (401, "json")}) as server:
        model = model_for(server)
        assert model.check_reachable() == ["m"]  # the list alone cannot tell
        with pytest.raises(EndpointRejected) as info:
            model.check_reachable(chat=True)
    assert "HTTP 401" in str(info.value) and "check --api-key" in str(info.value)


def test_the_chat_probe_lets_a_working_or_busy_server_through(model_for: Any) -> None:
    for status, kind in ((200, "models"), (503, "json"), (400, "json")):
        with EchoErrorServer({**MODELS_OK, "POST /v1/chat/completions": (status, kind)}) as server:
            assert model_for(server).check_reachable(chat=True) == ["m"]
            assert server.hits == ["GET /v1/models", "POST /v1/chat/completions"]


def test_a_wrong_url_or_model_says_check_base_url_and_model(model_for: Any) -> None:
    with EchoErrorServer({}) as server:  # 404 with an OpenAI-style body everywhere
        model = model_for(server)
        with pytest.raises(EndpointRejected) as pre:
            model.check_reachable()
        assert server.hits == ["GET /v1/models", "POST /v1/chat/completions"]  # the one-token probe
        with pytest.raises(ModelAPIError) as during:
            model.complete(USER, [])
    for message in (str(pre.value), str(during.value)):
        assert "HTTP 404" in message and "check --base-url" in message and "--model" in message


def test_a_server_without_models_route_but_working_chat_is_let_through(model_for: Any) -> None:
    server = EchoErrorServer({"GET /v1/models": (404, "json"), "POST /v1/chat/completions": (200, "models")})
    with server, pytest.raises(ModelAPIError) as info:
        model_for(server).check_reachable()
    assert not isinstance(info.value, UserError)  # the runner logs it and goes on


@pytest.mark.parametrize("status", [200, 404])
def test_an_html_page_is_not_an_openai_compatible_api(model_for: Any, status: int) -> None:
    with EchoErrorServer(_everywhere(status, "html")) as server:
        pre, during = _refused_before_and_during(model_for(server))
    for message in (str(pre), str(during)):
        assert "not an OpenAI-compatible API" in message and "<html" not in message


@pytest.mark.parametrize("kind", ["json", "text"])
@pytest.mark.parametrize("status", [401, 500])
def test_an_echoed_key_never_reaches_an_error_message(model_for: Any, kind: str, status: int) -> None:
    with EchoErrorServer({**MODELS_OK, "POST /v1/chat/completions": (status, kind)}) as server:
        model = OpenAIModel(server.base_url, "m", api_key=NASTY_KEY, max_attempts=2, backoff_initial=0.01)
        with pytest.raises(ModelAPIError) as info:
            model.complete(USER, [])
        model.close()
    text = str(info.value) + "".join(a.detail for a in info.value.attempts)
    assert "[REDACTED]" in text  # the echo was there, and was scrubbed
    assert not [f for f in forms(NASTY_KEY) if f in text]


def test_a_key_no_http_header_can_carry_is_refused_without_repeating_it() -> None:
    key = "sk-café-☃-secret"
    with pytest.raises(UserError) as info:
        OpenAIModel("http://127.0.0.1:9/v1", "m", api_key=key)
    assert "--api-key" in str(info.value) and key not in str(info.value)
