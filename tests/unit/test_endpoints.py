"""The endpoint choice: the user's URL as it is, or the replay model built for the run."""

from __future__ import annotations

import json
import urllib.request

import pytest

from agentrun.config import RunConfig
from agentrun.endpoints import open_endpoint, shared_endpoint, uses_local_model, uses_replay
from agentrun.errors import UserError
from agentrun.tasks import load_task


def test_a_url_is_used_as_given_with_the_metrics_url_it_was_given() -> None:
    config = RunConfig(
        task="todo-cli", base_url="http://gpu:8000/v1", model="m", server_metrics="http://gpu:8000/metrics"
    )
    with open_endpoint(config, load_task("todo-cli")) as endpoint:
        assert (endpoint.base_url, endpoint.model, endpoint.label) == ("http://gpu:8000/v1", "m", "m")
        assert endpoint.metrics_url == "http://gpu:8000/metrics"
    assert not uses_replay(config) and not uses_local_model(config)


def test_no_url_and_no_model_is_the_replay_model_serving_its_own_counters() -> None:
    config = RunConfig(task="todo-cli", faults=0.2, fault_mix="qwen")
    assert uses_replay(config)
    with open_endpoint(config, load_task("todo-cli")) as endpoint:
        assert endpoint.label == "replay model (scripted, not a real LLM), 20% faults (qwen)"
        assert endpoint.metrics_url == endpoint.base_url
        with urllib.request.urlopen(f"{endpoint.base_url}/models", timeout=10) as reply:
            assert json.load(reply)["data"][0]["id"] == endpoint.model
        with urllib.request.urlopen(f"{endpoint.metrics_url}/metrics", timeout=10) as reply:
            assert b"vllm:prefix_cache_queries_total" in reply.read()


def test_a_bad_fault_setting_is_a_user_error() -> None:
    config = RunConfig(task="todo-cli", faults=0.2, fault_mix="gpt")
    with pytest.raises(UserError, match="unknown fault mix"), open_endpoint(config, load_task("todo-cli")):
        pass


def test_shared_endpoint_leaves_anything_but_the_local_model_to_each_run() -> None:
    config = RunConfig(task="todo-cli")
    with shared_endpoint(config) as shared:
        assert shared is config
    assert uses_local_model(RunConfig(task="todo-cli", model="local"))
