"""House rules that keep agentrun readable, checked on the source: no function in agentrun/ longer
than 60 lines, no module longer than 400, and an agent loop with a short constructor."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import agentrun
from agentrun.agent import Agent

PACKAGE = Path(agentrun.__file__).resolve().parent
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
MAX_AGENT_PARAMETERS = 7


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_data" not in p.relative_to(PACKAGE).parts)


def _function_lengths(path: Path) -> list[tuple[str, int]]:
    """(qualified name, lines from ``def`` to its last line, decorators excluded) of every function."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                out.append((name, (child.end_lineno or child.lineno) - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def test_the_package_is_found() -> None:
    assert len(_modules()) > 20 and (PACKAGE / "agent.py") in _modules()


def test_the_length_counter_counts_a_function_from_def_to_its_last_line(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class A:\n    def f(self):\n        x = 1\n\n        return x\n\n\ndef g():\n    pass\n"
    )
    assert _function_lengths(sample) == [("A.f", 4), ("g", 2)]


def test_no_function_is_longer_than_60_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE.parent)}:{name} ({lines} lines)"
        for path in _modules()
        for name, lines in _function_lengths(path)
        if lines > MAX_FUNCTION_LINES
    ]
    assert not long, "split these functions: " + ", ".join(long)


def test_no_module_is_longer_than_400_lines() -> None:
    big = [
        f"{path.relative_to(PACKAGE.parent)} ({n} lines)"
        for path in _modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not big, "split these modules into smaller ones or a package: " + ", ".join(big)


def test_agent_takes_at_most_7_parameters() -> None:
    parameters = [p for p in inspect.signature(Agent.__init__).parameters if p != "self"]
    assert len(parameters) <= MAX_AGENT_PARAMETERS, parameters
