"""No test, benchmark or script waits without a timeout.

A test cleanup's ``communicate()`` with no timeout once hung the suite for 12 minutes on a
child's orphan that held the pipe. The calls that can wait forever are found in the syntax
tree: ``communicate`` without a timeout; ``wait``/``join``/``get``/``result``/``recv`` with
no argument at all (the timeout is their first); ``subprocess.run``/``call``/``check_*``
without ``timeout``; ``readline`` on a child's ``stdout``/``stderr`` (``first_line`` reads one
with a timeout).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("tests", "bench", "scripts")
_BARE = {"wait", "join", "get", "result", "recv"}
_SUBPROCESS = {"run", "call", "check_call", "check_output"}


def _unbounded(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    keywords = {k.arg for k in call.keywords}
    if func.attr == "communicate":
        return "timeout" not in keywords and len(call.args) < 2
    if func.attr in _BARE:
        return not call.args and not call.keywords
    if func.attr in _SUBPROCESS and isinstance(func.value, ast.Name) and func.value.id == "subprocess":
        return "timeout" not in keywords
    if func.attr == "readline" and isinstance(func.value, ast.Attribute):
        return func.value.attr in ("stdout", "stderr")
    return False


def unbounded_waits(source: str, name: str = "<source>") -> list[str]:
    return [
        f"{name}:{node.lineno}: {ast.unparse(node)[:100]}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and _unbounded(node)
    ]


def test_the_checker_finds_each_kind() -> None:
    source = "\n".join(
        [
            "proc.communicate()",
            "proc.communicate(data)",
            "proc.wait()",
            "thread.join()",
            "queue.get()",
            "future.result()",
            "subprocess.run(['x'], check=True)",
            "proc.stdout.readline()",
        ]
    )
    assert len(unbounded_waits(source)) == 8
    bounded = "\n".join(
        [
            "proc.communicate(timeout=5)",
            "proc.communicate(data, 5)",
            "proc.wait(5)",
            "thread.join(timeout=5)",
            "queue.get(timeout=5)",
            "d.get('k')",
            "', '.join(xs)",
            "subprocess.run(['x'], timeout=5)",
            "fh.readline()",
        ]
    )
    assert unbounded_waits(bounded) == []


def test_no_wait_without_a_timeout() -> None:
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += unbounded_waits(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "waits without a timeout:\n" + "\n".join(found)
