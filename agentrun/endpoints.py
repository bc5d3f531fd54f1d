"""Which model a run talks to: the user's server, the local CPU model, or the embedded replay model.

The one place that choice is made, for ``run_task`` and ``compare`` alike:

* ``--base-url URL --model NAME``: the user's OpenAI-compatible server, as it is;
* ``--model local`` (no URL): ``llama-server`` on this CPU (``agentrun.localmodel``);
* neither: the replay model (scripted, not a real LLM), built by ``replay.build_server``
  with the run's seed and faults, which also serves the counters the run reads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agentrun.config import BUILTIN_AGENTS, RunConfig
from agentrun.errors import UserError
from agentrun.localmodel import LOCAL_MODEL_NAME
from agentrun.tasks import TaskSpec

__all__ = ["Endpoint", "local_label", "open_endpoint", "shared_endpoint", "uses_local_model", "uses_replay"]


@dataclass(frozen=True)
class Endpoint:
    """Where requests go, the model name to send, how output names it, and where its counters are."""

    base_url: str
    model: str
    label: str
    metrics_url: str | None = None
    faults_drawn: Callable[[], dict[str, int]] | None = None  # the replay model's real fault families


def uses_replay(config: RunConfig) -> bool:
    """No URL and no model: the embedded replay model."""
    return config.base_url is None and config.model is None


def uses_local_model(config: RunConfig) -> bool:
    """``--model local`` and no URL: start the local CPU model."""
    return config.base_url is None and config.model == LOCAL_MODEL_NAME


def local_label(model: str) -> str:
    return f"local model {model} (llama.cpp on this CPU)"


@contextlib.contextmanager
def open_endpoint(config: RunConfig, task: TaskSpec) -> Iterator[Endpoint]:
    """The endpoint for one run, up for as long as the ``with`` block (a started server stops after)."""
    if config.base_url:
        name = config.model or "default"
        yield Endpoint(config.base_url, name, config.model_label or name, config.server_metrics)
    elif uses_local_model(config):
        from agentrun import localmodel

        with localmodel.serve() as local:
            yield Endpoint(local.base_url, local.model, local_label(local.model), config.server_metrics)
    else:
        with _replay(config, task) as endpoint:
            yield endpoint


@contextlib.contextmanager
def _replay(config: RunConfig, task: TaskSpec) -> Iterator[Endpoint]:
    from agentrun import replay

    script = replay.script_from_task(task)
    if config.agent not in BUILTIN_AGENTS:  # an installed agent: the steps in its own tools
        from agentrun.agents import get_agent

        script = get_agent(config.agent).render(script, "/workspace")
    try:
        server = replay.build_server(
            script,
            ttft=config.replay_ttft,
            token_delay=config.replay_token_delay,
            faults=config.faults,
            fault_mix=config.fault_mix,
            fault_source=config.fault_source,
            seed=config.seed,
        )
    except ValueError as exc:  # a fault rate outside 0..1 or an unknown mix
        raise UserError(str(exc)) from None
    with server:  # bound from here on: base_url has its port
        # the replay model serves its simulated cache's counters itself, unless told to answer as another model
        metrics = config.server_metrics or (server.base_url if config.model is None else None)
        label = replay.describe(config.faults, config.fault_mix, config.fault_source)
        families = getattr(server.fault_injector, "families", None)
        drawn = (lambda: dict(families)) if families is not None else None
        yield Endpoint(server.base_url, script.model_name, label, metrics, drawn)


@contextlib.contextmanager
def shared_endpoint(config: RunConfig) -> Iterator[RunConfig]:
    """For several runs of one configuration (``compare``): the local model is started once and
    every run points at it; any other choice is made per run, so ``config`` comes back as it is."""
    if not uses_local_model(config):
        yield config
        return
    from agentrun import localmodel

    with localmodel.serve() as server:
        yield config.model_copy(
            update={
                "base_url": server.base_url,
                "model": server.model,
                "model_label": local_label(server.model),
            }
        )
