"""Hidden acceptance tests for todo-cli: the module API and the command line, by the spec.

todo.py is never imported here: each module call and each command runs in a child process, as
another user (``boundary.py``), and ``tmp_path`` is a folder that user owns (``conftest.py``)."""

import json
import os
import sys

import pytest

import boundary

WORKSPACE = os.environ.get("TODO_WORKSPACE", "/workspace")
TODO = os.path.join(WORKSPACE, "todo.py")


@pytest.fixture()
def todo():
    return boundary.module("todo", WORKSPACE)


def cli(store, *args, env=None):
    return boundary.run([sys.executable, TODO, "--file", str(store), *args], env=env)


def test_load_missing_file_is_empty(todo, tmp_path):
    assert todo.load_items(str(tmp_path / "none.json")) == []


def test_load_rejects_non_list(todo, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"items": []}')
    with pytest.raises(ValueError):
        todo.load_items(str(path))


def test_save_then_load_round_trip(todo, tmp_path):
    path = str(tmp_path / "t.json")
    items = []
    todo.add_item(items, "  Buy milk  ", "high", "2026-12-01")
    todo.save_items(path, items)
    loaded = todo.load_items(path)
    assert loaded == [{"id": 1, "text": "Buy milk", "done": False, "priority": "high", "due": "2026-12-01"}]
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]  # no temporary file left behind


def test_ids_follow_largest_existing(todo):
    items = [{"id": 7, "text": "x", "done": False, "priority": "low", "due": None}]
    assert todo.add_item(items, "y")["id"] == 8


def test_add_validation(todo):
    for bad in ({"text": ""}, {"text": "   "}, {"text": "x", "priority": "urgent"},
                {"text": "x", "due": "2026-13-01"}, {"text": "x", "due": "tomorrow"}):
        with pytest.raises(ValueError):
            todo.add_item([], **bad)


def test_default_priority_is_medium(todo):
    assert todo.add_item([], "x")["priority"] == "medium"


def test_complete_and_remove_unknown_raise_keyerror(todo):
    items = []
    todo.add_item(items, "a")
    with pytest.raises(KeyError):
        todo.complete_item(items, 2)
    with pytest.raises(KeyError):
        todo.remove_item(items, 2)
    assert todo.remove_item(items, 1)["text"] == "a" and items == []


def test_visible_items_filters_and_sorts(todo):
    items = []
    todo.add_item(items, "l1", "low")
    todo.add_item(items, "h1", "high")
    todo.add_item(items, "m1", "medium")
    todo.add_item(items, "h2", "high")
    todo.complete_item(items, 4)
    assert [i["text"] for i in todo.visible_items(items)] == ["h1", "m1", "l1"]
    assert [i["text"] for i in todo.visible_items(items, show_all=True)] == ["h1", "h2", "m1", "l1"]
    assert [i["text"] for i in todo.visible_items(items, show_all=True, priority="high")] == ["h1", "h2"]


def test_format_item_variants(todo):
    assert todo.format_item({"id": 1, "text": "a", "done": False, "priority": "low", "due": None}) == "#1 [ ] a (low)"
    assert (todo.format_item({"id": 2, "text": "b", "done": True, "priority": "high", "due": "2027-01-31"})
            == "#2 [x] b (high) due 2027-01-31")


def test_cli_add_and_list(tmp_path):
    store = tmp_path / "t.json"
    out = cli(store, "add", "Write report", "--priority", "high")
    assert out.returncode == 0 and out.stdout.strip() == "Added #1: Write report"
    cli(store, "add", "Water plants", "--due", "2026-12-24")
    listing = cli(store, "list")
    assert listing.returncode == 0
    assert listing.stdout.strip().splitlines() == [
        "#1 [ ] Write report (high)",
        "#2 [ ] Water plants (medium) due 2026-12-24",
    ]


def test_cli_done_remove_and_all(tmp_path):
    store = tmp_path / "t.json"
    cli(store, "add", "a")
    cli(store, "add", "b")
    assert cli(store, "done", "1").stdout.strip() == "Completed #1"
    assert cli(store, "list").stdout.strip() == "#2 [ ] b (medium)"
    assert cli(store, "list", "--all").stdout.strip().splitlines()[0] == "#1 [x] a (medium)"
    assert cli(store, "remove", "2").stdout.strip() == "Removed #2"
    assert json.loads(store.read_text())[0]["done"] is True


def test_cli_empty_list(tmp_path):
    out = cli(tmp_path / "t.json", "list")
    assert out.returncode == 0 and out.stdout.strip() == "No items."


def test_cli_errors_exit_1_with_message(tmp_path):
    store = tmp_path / "t.json"
    for args in (("done", "5"), ("remove", "5"), ("add", "   "), ("add", "x", "--priority", "meh")):
        out = cli(store, *args)
        assert out.returncode == 1, args
        assert out.stderr.strip().startswith("error:"), args


def test_cli_corrupt_file_is_an_error_not_a_traceback(tmp_path):
    store = tmp_path / "t.json"
    store.write_text("{not json")
    out = cli(store, "list")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and out.stderr.startswith("error:")


def test_cli_uses_todo_file_env(tmp_path):
    store = tmp_path / "env.json"
    env = dict(os.environ, TODO_FILE=str(store))
    out = boundary.run([sys.executable, TODO, "add", "from env"], env=env, cwd=tmp_path)
    assert out.returncode == 0
    assert json.loads(store.read_text())[0]["text"] == "from env"


def test_cli_default_file_in_cwd(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TODO_FILE"}
    out = boundary.run([sys.executable, TODO, "add", "here"], env=env, cwd=tmp_path)
    assert out.returncode == 0
    assert (tmp_path / "todo.json").exists()
