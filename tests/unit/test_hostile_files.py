"""``agentrun load --replay`` and ``agentrun report`` on files that attack (issue #23 §4): the
real CLI in a subprocess on a deeply nested file, a NaN or infinite number, a gzip bomb of a
recorded workload and a file far past the bound. Each is one line and exit 2, its peak RSS
(``wait4``) under the README's ceiling; no server and no Docker is needed. The reader they all
go through (``agentrun.lines.read_json_file`` / ``read_jsonl``) is tested in-process too."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from agentrun_testsupport import agentrun_cmd
from hostile_http import gzip_bomb, run_measured
from report_fixtures import write_load_folder, write_run_folder

from agentrun.lines import JSON_DEPTH_LIMIT, read_json_file, read_jsonl, strict_loads

CEILING_MB = 400  # the README's ceiling
WORKLOADS = Path(__file__).parents[2] / "agentrun" / "load" / "workloads"
TRAJECTORY = Path(__file__).parents[1] / "fixtures" / "load" / "todo-cli.trajectory.jsonl"
DEEP = "[" * 100_000 + "]" * 100_000


def _workload() -> dict:  # type: ignore[type-arg]
    return json.loads(gzip.decompress((WORKLOADS / "todo-cli.workload.json.gz").read_bytes()))


def _one_line_exit_2(args: list[str], *said: str) -> None:
    run = run_measured(agentrun_cmd(*args), timeout=120)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2 and len(lines) == 1, (run.returncode, run.stderr[-3000:])
    assert "Traceback" not in run.stderr and all(part in lines[0] for part in said), lines
    assert run.peak_rss_mb < CEILING_MB, run.peak_rss_mb


def _replay(path: Path, tmp_path: Path) -> list[str]:
    return ["load", "--replay", str(path), "--sessions", "1", "--results", str(tmp_path / "results")]


def _hostile_workload(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "bomb":  # 1 MB on disk, 1 GB of JSON whitespace: main read all of it (2.1 GB RSS)
        path = tmp_path / "bomb.workload.json.gz"
        path.write_bytes(gzip_bomb())
        return path, "larger than 128 MB once decompressed"
    text = json.dumps(_workload())
    if kind == "deep":  # main: RecursionError
        text = text.replace('"format"', f'"x": {DEEP}, "format"', 1)
        said = f"nested deeper than {JSON_DEPTH_LIMIT} levels"
    else:  # main: replayed a NaN delay without a word
        text, said = re.sub(r'"delay_s": [0-9.]+', '"delay_s": NaN', text, count=2), "not finite (NaN)"
    path = tmp_path / f"{kind}.workload.json"
    path.write_text(text)
    return path, said


@pytest.mark.parametrize("kind", ["bomb", "deep", "nan"])
def test_load_replay_of_a_hostile_workload_is_one_line(tmp_path: Path, kind: str) -> None:
    path, said = _hostile_workload(tmp_path, kind)
    _one_line_exit_2(_replay(path, tmp_path), f"cannot read the workload {path}: ", said)


def test_load_replay_of_a_trajectory_with_a_nan_timestamp_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl"
    path.write_text(re.sub(r'"ts": [0-9.]+', '"ts": NaN', TRAJECTORY.read_text(), count=1))
    _one_line_exit_2(_replay(path, tmp_path), f"cannot read the trajectory {path}: ", "not finite (NaN)")


def test_report_of_a_load_with_a_nan_start_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "load"
    write_load_folder(folder, requests=20)
    path = folder / "load.json"
    text = path.read_text()
    path.write_text(re.sub(r'"start_s": [0-9.e+-]+', '"start_s": NaN', text, count=1))  # main: ValueError
    _one_line_exit_2(["report", str(folder)], "not finite (NaN)")


@pytest.mark.parametrize("name", ["result.json", "trajectory.jsonl"])
def test_report_of_a_deeply_nested_run_file_is_one_line(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "run"
    write_run_folder(folder)
    path = folder / name
    if name == "result.json":  # main: RecursionError
        path.write_text(path.read_text().replace("{", '{"x": ' + DEEP + ",", 1))
    else:
        path.write_text(path.read_text() + '{"event": "note", "x": ' + DEEP + "}\n")
    _one_line_exit_2(["report", str(folder)], f"nested deeper than {JSON_DEPTH_LIMIT} levels")


def test_report_of_a_result_far_past_the_bound_reads_no_more_than_the_bound(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    write_run_folder(folder)
    with (folder / "result.json").open("r+b") as fh:  # sparse: 2 GB on no disk; main read it all
        fh.truncate(2 * 1024**3)
    _one_line_exit_2(["report", str(folder)], "larger than 128 MB (the bound on a file agentrun reads)")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (DEEP, "nested deeper than"),
        ("[" * 201 + "]" * 201, "nested deeper than 200"),
        ('{"t": NaN}', "not finite (NaN)"),
        ('{"t": -Infinity}', "not finite (-Infinity)"),
        ('{"t": 1e999}', "too large for a float"),
        ('{"n": 123456789012345678901234567890}', "past 64 bits"),
    ],
)
def test_strict_loads_refuses_what_the_code_after_it_cannot_take(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        strict_loads(text)


def test_strict_loads_takes_what_we_write(tmp_path: Path) -> None:
    value = {"a": [[[1, 2.5, -3e10, True, None]]], "s": "\u2028 \ud800", "n": -(2**63) + 1}
    assert strict_loads(json.dumps(value))["a"] == value["a"]
    assert strict_loads("[" * 200 + "]" * 200)
    packed = tmp_path / "w.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(value).encode()))
    assert read_json_file(packed)["s"] == "\u2028 \ufffd"  # gzip found by its magic, not its name
    lines = tmp_path / "t.jsonl"
    lines.write_text('{"a": 1}\n\n{"b": "x\u2028y"}\n')
    assert read_jsonl(lines) == [{"a": 1}, {"b": "x\u2028y"}]
    with pytest.raises(ValueError, match="larger than 1 MB"):
        lines.write_text(" " * (2**20 + 1))
        read_jsonl(lines, limit=2**20)


def test_a_replay_script_and_a_tools_file_go_through_the_same_reader(tmp_path: Path) -> None:
    from agentrun.commands.repair import load_tools
    from agentrun.errors import UserError
    from agentrun.replay import Script

    path = tmp_path / "deep.json"
    path.write_text('{"turns": ' + DEEP + "}")
    with pytest.raises(ValueError, match="nested deeper than"):  # main: RecursionError
        Script.load(path)
    with pytest.raises(UserError, match="nested deeper than"):
        load_tools(path)
