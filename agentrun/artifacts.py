"""How big is what the agent built? Counted from the produced project, never from the spec.

``measure_django(workspace)`` reads a Django project's source with ``ast`` only (nothing is
imported or run, so a broken project still gets measured) and counts what the seed reported
for its artifact ("25 domain models, 9 public service methods, 12 API endpoints, Django Admin,
52 tests"):

=============== ==============================================================================
key             what is counted
=============== ==============================================================================
models          concrete ``Model`` subclasses in ``models.py`` / ``models/`` (abstract ones not)
services        public top-level functions in ``services.py`` / ``services/``, plus public
                methods of classes there whose name ends in ``Service``
endpoints       ``path()`` / ``re_path()`` / ``url()`` entries in ``urls.py`` files that are not
                ``include(...)`` or ``admin.site.urls``; each DRF ``router.register`` counts once
own_tests       ``test*`` functions and methods in ``test*.py`` / ``*_tests.py`` files
admin_models    distinct models passed to ``admin.site.register`` or ``@admin.register``
python_files    Python files in the project (virtualenvs, caches and migrations left out)
python_lines    their non-blank lines
=============== ==============================================================================
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

from agentrun.sandbox import hostfs

_SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "env",
    ".env",
    "node_modules",
    "__pycache__",
    "site-packages",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "migrations",
    "static",
    "media",
}
_URL_FUNCS = {"path", "re_path", "url"}


def measure_django(workspace: Path) -> dict[str, int]:
    """Count models, services, endpoints, own tests and admin registrations under ``workspace``."""
    sources = dict(_parse_all(Path(workspace)))
    lines = sum(len([ln for ln in text.splitlines() if ln.strip()]) for _, text in sources.values())
    trees = {path: tree for path, (tree, _) in sources.items() if tree is not None}
    return {
        "models": _count_models([t for p, t in trees.items() if _in_module(p, "models")]),
        "services": sum(_count_services(t) for p, t in trees.items() if _in_module(p, "services")),
        "endpoints": sum(_count_endpoints(t) for p, t in trees.items() if p.name == "urls.py"),
        "own_tests": sum(_count_tests(t) for p, t in trees.items() if _is_test_file(p)),
        "admin_models": len(
            set().union(*[_admin_models(t) for p, t in trees.items() if _in_module(p, "admin")])
        ),
        "python_files": len(sources),
        "python_lines": lines,
    }


def _parse_all(root: Path) -> Iterator[tuple[Path, tuple[ast.Module | None, str]]]:
    """Every ``.py`` file, read with ``hostfs.walk``: a symlink, FIFO or huge file the agent
    planted (``models.py -> /etc/shadow``) is never opened on the host."""
    for entry in hostfs.walk(
        root,
        skip_dir=lambda name: os.fsdecode(name) in _SKIP_DIRS or name.endswith(b".egg-info"),
        want_file=lambda name: name.endswith(b".py"),
        links=False,
    ):
        path = Path(os.fsdecode(entry.path))
        text = entry.data.decode("utf-8", errors="replace")
        try:
            tree: ast.Module | None = ast.parse(text, filename=str(path))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        yield path, (tree, text)


def _in_module(path: Path, name: str) -> bool:
    """``name.py`` itself, or any file of a ``name/`` package."""
    return path.name == f"{name}.py" or name in path.parent.parts


def _is_test_file(path: Path) -> bool:
    return (path.name.startswith("test") or path.stem.endswith("_tests")) and path.suffix == ".py"


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a name, attribute chain or call of one; a loop, so a chain thousands of
    attributes long in the agent's code cannot exhaust the host's recursion limit."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            return ".".join([node.id, *reversed(parts)])
        else:
            return ""


def _is_abstract(cls: ast.ClassDef) -> bool:
    for item in cls.body:
        if isinstance(item, ast.ClassDef) and item.name == "Meta":
            for stmt in item.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "abstract" for t in stmt.targets)
                    and isinstance(stmt.value, ast.Constant)
                    and stmt.value.value is True
                ):
                    return True
    return False


def _count_models(trees: list[ast.Module]) -> int:
    """Classes deriving, directly or through each other, from ``Model``; abstract ones left out."""
    classes = [node for tree in trees for node in tree.body if isinstance(node, ast.ClassDef)]
    model_names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name in model_names:
                continue
            bases = {_dotted(b).rsplit(".", 1)[-1] for b in cls.bases}
            if "Model" in bases or bases & model_names:
                model_names.add(cls.name)
                changed = True
    return sum(1 for cls in classes if cls.name in model_names and not _is_abstract(cls))


def _count_services(tree: ast.Module) -> int:
    count = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            count += 1
        elif isinstance(node, ast.ClassDef) and node.name.endswith("Service"):
            count += sum(
                1
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("_")
            )
    return count


def _count_endpoints(tree: ast.Module) -> int:
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func).rsplit(".", 1)[-1]
        if name in _URL_FUNCS and len(node.args) >= 2:
            target = node.args[1]
            if _dotted(target).rsplit(".", 1)[-1] == "include" or _dotted(target).endswith(".urls"):
                continue
            count += 1
        elif name == "register" and "router" in _dotted(node.func).lower():
            count += 1
    return count


def _count_tests(tree: ast.Module) -> int:
    count = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            count += 1
        elif isinstance(node, ast.ClassDef):
            count += sum(
                1
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test")
            )
    return count


def _admin_models(tree: ast.Module) -> set[str]:
    """Source text of every model given to ``site.register(...)`` or ``@admin.register(...)``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func).rsplit(".", 1)[-1] == "register":
            func = _dotted(node.func)
            if not (func.endswith("site.register") or func in ("admin.register", "register")):
                continue
            first = node.args[:1] if func.endswith("site.register") else node.args
            for arg in first:
                items = arg.elts if isinstance(arg, ast.List | ast.Tuple) else [arg]
                found.update(_dotted(item).rsplit(".", 1)[-1] or _source(item) for item in items)
    return found


def _source(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except RecursionError:  # nested thousands deep: still one distinct entry
        return f"<expression at line {node.lineno}>"
