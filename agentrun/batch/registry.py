"""A Harbor dataset registry file read from disk (``registry.json``; never fetched): its tasks.

Harbor 0.25's format (``harbor.models.registry``): a JSON list of datasets, each
``{"name", "version", "description", "tasks": [{"name", "path", "git_url"?, "git_commit_id"?}],
"metrics"?}``. A task's ``path`` is taken relative to the registry file's folder (the root of a
dataset repository's checkout, where Harbor's git tasks' ``path`` points), or as written when
absolute. A task that is only in git (its folder is not there) is one line naming where it is:
agentrun does not clone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrun.errors import TaskError
from agentrun.lines import read_json_file

REGISTRY_LIMIT = 64 * 1024 * 1024  # terminal-bench's whole registry is well under 1 MB


class RegistryTask(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    path: str
    git_url: str | None = None
    git_commit_id: str | None = None


class RegistryDataset(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    version: str
    description: str = ""
    tasks: list[RegistryTask]

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"


def is_registry(path: Path) -> bool:
    """A DIR argument that is a file: a registry (a folder is a task or a folder of tasks)."""
    return path.is_file()


def read_registry(path: Path) -> list[RegistryDataset]:
    """Every dataset of the file; ``TaskError`` (one line) when it is not a Harbor registry."""
    try:
        raw: Any = read_json_file(path, limit=REGISTRY_LIMIT)
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: cannot read the registry: {exc}") from None
    if not isinstance(raw, list):
        raise TaskError(f"{path}: a Harbor registry is a JSON list of datasets")
    datasets = []
    for n, row in enumerate(raw):
        try:
            datasets.append(RegistryDataset.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in (n, *first["loc"]))
            raise TaskError(f"{path}: not a Harbor registry ({where}: {first['msg']})") from None
    return datasets


def pick(datasets: list[RegistryDataset], wanted: str | None, path: Path) -> RegistryDataset:
    """The dataset ``wanted`` names (``NAME`` or ``NAME@VERSION``); None: the file's only one."""
    name, _, version = (wanted or "").partition("@")
    found = [d for d in datasets if (not name or d.name == name) and (not version or d.version == version)]
    if len(found) == 1:
        return found[0]
    names = ", ".join(d.label for d in datasets) or "none"
    if not found:
        raise TaskError(f"{path}: no dataset {wanted} (it holds {names})")
    raise TaskError(f"{path}: holds {names}; say which with --dataset NAME@VERSION")


def task_folders(path: Path, wanted: str | None) -> list[Path]:
    """The task folders of the registry's dataset, in its order."""
    dataset = pick(read_registry(path), wanted, path)
    folders = []
    for task in dataset.tasks:
        folder = (path.parent / task.path).resolve()
        if not (folder / "task.toml").is_file():
            where = f" (it is in {task.git_url} at {task.git_commit_id or 'HEAD'}: clone it there)"
            raise TaskError(
                f"{dataset.label} task {task.name}: no task.toml in {folder}"
                + (where if task.git_url else "")
            )
        folders.append(folder)
    return folders
