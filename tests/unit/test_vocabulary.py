"""One vocabulary of what goes wrong with a tool call: the other kinds are drawn from it."""

from __future__ import annotations

import re
from typing import get_args

from agentrun.errors import TOOL_ERROR_KINDS
from agentrun.messages import RepairKind
from agentrun.paths import data_dir
from agentrun.repair.result import _ERROR_KINDS, RejectionReason
from agentrun.replay.faults import FAULT_KINDS


def test_every_injected_fault_is_a_repair_kind() -> None:
    assert set(FAULT_KINDS) <= set(get_args(RepairKind)) and len(set(FAULT_KINDS)) == len(FAULT_KINDS)


def test_every_rejection_is_reported_as_a_tool_error_kind() -> None:
    assert set(_ERROR_KINDS) == set(get_args(RejectionReason))
    assert set(_ERROR_KINDS.values()) <= TOOL_ERROR_KINDS


def test_the_tool_runtime_reports_only_tool_error_kinds() -> None:
    tools = data_dir("tools")
    raised = {
        kind
        for path in sorted(tools.glob("*.py"))
        for kind in re.findall(r'ToolFailure\(\s*"(\w+)"', path.read_text(encoding="utf-8"))
    }
    assert raised and raised <= TOOL_ERROR_KINDS, raised - TOOL_ERROR_KINDS
