"""The six default tools, from the repair corpus fixture (fault round trips go through ``correct``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrun.toolset import ToolSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "repair"


@pytest.fixture(scope="session")
def tools() -> list[ToolSpec]:
    return [ToolSpec.from_openai(t) for t in json.loads((FIXTURES / "tools.json").read_text())]
