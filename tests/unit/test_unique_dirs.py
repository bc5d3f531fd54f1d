"""Results folders get unique names at any speed: threads and processes racing on one stem."""

from __future__ import annotations

import multiprocessing
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentrun.results import create_unique_dir

STEM = "20261201-080000-todo-cli-corrected"  # what two runs started in the same second share


def test_concurrent_threads_each_get_their_own_folder(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=32) as pool:
        made = list(pool.map(lambda _: create_unique_dir(tmp_path / "results", STEM), range(400)))
    assert len(set(made)) == 400
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(p.name for p in made)


def _make_many(parent: str, n: int) -> list[str]:
    return [str(create_unique_dir(Path(parent), STEM)) for _ in range(n)]


def test_concurrent_processes_each_get_their_own_folder(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        batches = pool.starmap(_make_many, [(str(tmp_path), 100)] * 4)
    made = [p for batch in batches for p in batch]
    assert len(made) == 400 and len(set(made)) == 400


def test_a_taken_name_is_retried_not_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suffixes = iter(["aaaaaa", "aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(suffixes))
    first = create_unique_dir(tmp_path, STEM)
    (first / "compare.json").write_text("{}")  # the first run's work
    second = create_unique_dir(tmp_path, STEM)
    assert first.name.endswith("-aaaaaa") and second.name.endswith("-bbbbbb")
    assert (first / "compare.json").read_text() == "{}" and not any(second.iterdir())


def test_gives_up_loudly_when_every_name_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "token_hex", lambda _n: "cccccc")
    create_unique_dir(tmp_path, STEM)
    with pytest.raises(FileExistsError):
        create_unique_dir(tmp_path, STEM, attempts=5)
