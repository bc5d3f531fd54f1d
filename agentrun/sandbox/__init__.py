"""Sandboxes: where tools run. ``Sandbox`` is the protocol; ``docker`` is the backend.

A sandbox owns one container (or equivalent) for one run. The host talks to the tool
runtime from ``tools/`` over a long-lived channel (``call``); ``exec`` runs a one-off
command for grading and setup; the workspace is a git repository committed after every
turn that changed files.
"""

from __future__ import annotations

from agentrun.sandbox.base import ExecResult, Sandbox

__all__ = ["ExecResult", "Sandbox"]
