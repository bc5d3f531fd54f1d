"""Read results folders as they were written: a run, a compare, or a load.

A gateway's folder holds ``requests.jsonl`` (one line per request, ``agentrun.gateway.records``)
and ``spans.jsonl``. A run folder holds ``result.json`` (``RunResult``), ``trajectory.jsonl``, ``spans.jsonl`` and
``workspace.patch``; a compare folder holds ``compare.json`` (``Comparison``) and one run folder
per trial; a load folder holds ``load.json`` (see :mod:`agentrun.report.load`). Nothing here
recomputes a figure a writer already recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from agentrun import lines
from agentrun.compare import Comparison
from agentrun.errors import UserError
from agentrun.report.load import LoadFile
from agentrun.results import RunResult
from agentrun.trajectory import read_trajectory

Kind = Literal["run", "compare", "load", "gateway", "job"]
ModelT = TypeVar("ModelT", bound=BaseModel)
KIND_FILES: dict[Kind, str] = {
    "run": "result.json",
    "compare": "compare.json",
    "load": "load.json",
    "gateway": "requests.jsonl",
    "job": "job.json",
}


@dataclass(frozen=True)
class RunFolder:
    folder: Path
    result: RunResult
    events: list[dict[str, Any]]
    spans: list[dict[str, Any]]


@dataclass(frozen=True)
class CompareFolder:
    folder: Path
    comparison: Comparison
    runs: list[RunFolder]


@dataclass(frozen=True)
class LoadFolder:
    folder: Path
    load: LoadFile


@dataclass(frozen=True)
class GatewayFolder:
    folder: Path
    requests: list[dict[str, Any]]  # the "request" lines of requests.jsonl, in the order written


def kind_of(path: Path) -> Kind:
    """Which kind of results folder ``path`` is (a file inside one counts as its folder)."""
    folder = path.parent if path.is_file() else path
    for kind, name in KIND_FILES.items():
        if (folder / name).is_file():
            return kind
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    raise UserError(
        f"{folder}: not a results folder (no result.json, compare.json, load.json, requests.jsonl or job.json)"
    )


def folder_of(path: Path) -> Path:
    return (path.parent if path.is_file() else path).resolve()


def _read_json(path: Path) -> Any:
    try:
        return lines.read_json_file(path)  # bounded: size, nesting, numbers (agentrun.lines)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it as JSON ({exc})") from None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        return read_trajectory(path)
    except ValueError as exc:
        raise UserError(f"{path}: not JSON lines ({exc})") from None


def _read_model(model: type[ModelT], path: Path, refusal: str) -> ModelT:
    """The JSON file ``path`` as a ``model``; one that does not fit is a UserError: ``refusal``."""
    try:
        return model.model_validate(_read_json(path))
    except ValidationError as exc:
        raise UserError(f"{path}: {refusal} ({exc.error_count()} errors)") from None


def read_run(folder: Path) -> RunFolder:
    folder = folder_of(folder)
    result = _read_model(RunResult, folder / "result.json", "not an agentrun result")
    return RunFolder(
        folder=folder,
        result=result,
        events=_read_jsonl(folder / "trajectory.jsonl"),
        spans=_read_jsonl(folder / "spans.jsonl"),
    )


def _trial_folder(compare: Path, run: RunResult) -> Path:
    """The trial's folder inside the compare folder (where compare puts it), else where it was."""
    inside = compare / run.run_id
    return inside if (inside / "result.json").is_file() else Path(run.results_path)


def read_compare(folder: Path) -> CompareFolder:
    folder = folder_of(folder)
    comparison = _read_model(Comparison, folder / "compare.json", "not an agentrun comparison")
    runs = []
    for run in comparison.runs:
        trial = _trial_folder(folder, run)
        runs.append(read_run(trial) if (trial / "result.json").is_file() else RunFolder(trial, run, [], []))
    return CompareFolder(folder=folder, comparison=comparison, runs=runs)


def read_load(folder: Path) -> LoadFolder:
    folder = folder_of(folder)
    load = _read_model(LoadFile, folder / "load.json", "does not follow the load.json schema")
    return LoadFolder(folder=folder, load=load)


def read_gateway(folder: Path) -> GatewayFolder:
    folder = folder_of(folder)
    lines_ = _read_jsonl(folder / "requests.jsonl")
    return GatewayFolder(folder=folder, requests=[e for e in lines_ if e.get("event") == "request"])
