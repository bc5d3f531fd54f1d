import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import todo  # noqa: E402

TODO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "todo.py")


def run(tmp_path, *args):
    return subprocess.run([sys.executable, TODO, "--file", str(tmp_path / "t.json"), *args],
                          capture_output=True, text=True)


def test_add_assigns_increasing_ids():
    items = []
    assert todo.add_item(items, "a")["id"] == 1
    assert todo.add_item(items, "b")["id"] == 2


def test_add_rejects_blank_text():
    with pytest.raises(ValueError):
        todo.add_item([], "   ")


def test_add_rejects_bad_priority_and_date():
    with pytest.raises(ValueError):
        todo.add_item([], "x", priority="urgent")
    with pytest.raises(ValueError):
        todo.add_item([], "x", due="2026-02-30")


def test_visible_sorted_by_priority():
    items = []
    todo.add_item(items, "low", "low")
    todo.add_item(items, "high", "high")
    assert [i["text"] for i in todo.visible_items(items)] == ["high", "low"]


def test_format_item():
    item = {"id": 3, "text": "Buy milk", "done": True, "priority": "high", "due": "2026-12-01"}
    assert todo.format_item(item) == "#3 [x] Buy milk (high) due 2026-12-01"


def test_cli_round_trip(tmp_path):
    assert run(tmp_path, "add", "Write report", "--priority", "high").stdout.strip() == "Added #1: Write report"
    assert run(tmp_path, "done", "1").returncode == 0
    assert run(tmp_path, "list").stdout.strip() == "No items."
    data = json.loads((tmp_path / "t.json").read_text())
    assert data[0]["done"] is True


def test_cli_unknown_id_fails(tmp_path):
    result = run(tmp_path, "done", "9")
    assert result.returncode == 1
    assert result.stderr.startswith("error:")
