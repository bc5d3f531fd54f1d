"""The chaos proxy: a real HTTP proxy that breaks chat requests on a seeded schedule.

``agentrun chaos-proxy`` runs it from the command line; tests use ``ChaosProxy`` as a
context manager in front of the replay server or any OpenAI-compatible server.
"""

from agentrun.chaos._proxy import ChaosProxy
from agentrun.chaos._schedule import FAULT_KINDS, FAULTS, RETRIED, Picker, Schedule, parse_kinds

__all__ = ["FAULTS", "FAULT_KINDS", "RETRIED", "ChaosProxy", "Picker", "Schedule", "parse_kinds"]
