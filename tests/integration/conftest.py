"""Integration fixtures: ``phoenix_server`` (a real OTLP collector, see ``phoenix.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    # loaded under its own name: a plain ``import phoenix`` would collide with Arize's package
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


phoenix_helpers = _load("agentrun_tests_phoenix", Path(__file__).with_name("phoenix.py"))
phoenix_server = phoenix_helpers.phoenix_server
PhoenixServer = phoenix_helpers.PhoenixServer
