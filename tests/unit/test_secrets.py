"""Secrets are scrubbed from strings before encoding, in every form an echo may carry them."""

from __future__ import annotations

import json

import pytest

from agentrun import secrets
from agentrun.errors import ModelAPIError
from agentrun.secrets import REDACTED, Scrubber, forms
from agentrun.trajectory import Trajectory

KEYS = [
    'sk-"quoted"-key-1234',
    "sk-back\\slash\\key-1234",
    "sk-ünïcødé-☃-key-1234",
    'sk-all-"of\\them-é-\\u0041',
]


@pytest.mark.parametrize("key", KEYS)
def test_a_trajectory_line_holds_no_form_of_the_key(tmp_path, key: str) -> None:
    path = tmp_path / "trajectory.jsonl"
    traj = Trajectory(path, run_id="r", mode="direct", secrets=[key])
    echoed = json.dumps({"headers": {"Authorization": f"Bearer {key}"}})  # a server quoting the request
    traj.append("request_error", error=f"HTTP 401: {echoed}", raw=key, nested=[{key: key}])
    traj.close()
    text = path.read_text(encoding="utf-8")
    assert not [f for f in forms(key) if f in text], text
    assert REDACTED in text and json.loads(text)["event"] == "request_error"


def test_every_form_is_found_and_the_longest_first() -> None:
    key = 'sk-"q"\\é-1234'
    scrub = Scrubber([key]).text
    for form in forms(key):
        assert scrub(f"<{form}>") == f"<{REDACTED}>"
    assert json.dumps(key)[1:-1] in forms(key) and json.dumps(key, ensure_ascii=False)[1:-1] in forms(key)


def test_placeholders_and_short_values_are_not_secrets() -> None:
    scrub = Scrubber(["EMPTY", "dummy", "abc"]).text
    assert scrub("EMPTY dummy abc") == "EMPTY dummy abc"


def test_data_scrubs_keys_values_and_sequences_but_not_numbers() -> None:
    got = Scrubber(["topsecret-1"]).data({"topsecret-1": ["a topsecret-1", ("topsecret-1",), 3, None]})
    assert got == {REDACTED: [f"a {REDACTED}", [REDACTED], 3, None]}


def test_a_registered_key_is_scrubbed_from_every_error_message() -> None:
    secrets.register("sk-registered-in-process-42")
    error = ModelAPIError('server said: "Authorization: Bearer sk-registered-in-process-42"')
    assert "sk-registered-in-process-42" not in str(error) and REDACTED in str(error)


def test_bearer_tokens_look_like_credentials_in_messages_but_code_is_kept_in_data() -> None:
    assert (
        Scrubber(patterns=True).text("Authorization: Bearer abcdefgh12345")
        == f"Authorization: Bearer {REDACTED}"
    )
    code = 'api_key = os.environ["OPENAI_API_KEY"]\nheaders = {"Authorization": f"Bearer {token_value}"}'
    assert Scrubber().data({"content": code}) == {"content": code}  # the model's code, as written


def test_a_trajectory_keeps_the_models_code_that_mentions_keys(tmp_path) -> None:
    path = tmp_path / "trajectory.jsonl"
    traj = Trajectory(path, run_id="r", mode="direct", secrets=["sk-real-key-000111"])
    code = "API_KEY = load('api_key: from-env')  # Bearer tokens are read later"
    traj.append("tool_call", arguments={"content": code}, echo="sk-real-key-000111")
    traj.close()
    line = json.loads(path.read_text())
    assert line["arguments"]["content"] == code and line["echo"] == REDACTED


def test_load_outputs_never_hold_a_registered_key(tmp_path) -> None:
    from agentrun.load.client import connection
    from agentrun.load.records import RequestRecord
    from agentrun.load.report import write_outputs

    key = 'sk-load-"key"\\-556677'
    connection("http://127.0.0.1:9/v1/chat/completions", key)  # registers the key, as every session does
    record = RequestRecord(session="s0", index=0, error="http_401", error_detail=f"echo: Bearer {key}")
    write_outputs(tmp_path, {"kind": "load", "note": json.dumps({"auth": key})}, [record])
    for name in ("requests.jsonl", "load.json"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert REDACTED in text and not [f for f in forms(key) if f in text], name


def test_a_password_in_the_base_url_is_a_secret_too() -> None:
    from agentrun.model import OpenAIModel

    OpenAIModel("http://user:url-pass-778899@127.0.0.1:9/v1", "m").close()
    assert "url-pass-778899" not in str(
        ModelAPIError("GET http://user:url-pass-778899@127.0.0.1:9/v1 failed")
    )
