from pathlib import Path

import pytest

from agentrun.errors import TaskError
from agentrun.tasks import list_tasks, load_task


def make_task(root: Path, toml: str) -> Path:
    task = root / "demo"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "instruction.md").write_text("# Demo\nDo it.")
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "tests" / "test.sh").write_text("true\n")
    (task / "task.toml").write_text(toml)
    return task


def test_builtin_tasks_load():
    assert "todo-cli" in list_tasks()
    task = load_task("todo-cli")
    assert task.config.agentrun.own_tests_command
    assert task.config.environment.allow_internet is False
    assert (task.solution_dir / "solve.sh").is_file()


def test_unknown_task_lists_known_ones():
    with pytest.raises(TaskError, match="todo-cli"):
        load_task("no-such-task")


def test_bad_field_is_named(tmp_path):
    task = make_task(tmp_path, "[agentrun]\nmax_turns = -3\n")
    with pytest.raises(TaskError, match=r"agentrun\.max_turns"):
        load_task(str(task))


def test_unknown_agentrun_key_is_refused_but_harbor_extras_allowed(tmp_path):
    task = make_task(tmp_path, '[environment]\ngpu_types = ["H100"]\n[agentrun]\nmax_turnz = 3\n')
    with pytest.raises(TaskError, match="max_turnz"):
        load_task(str(task))


def test_invalid_toml_and_missing_parts(tmp_path):
    task = make_task(tmp_path, "version = \n")
    with pytest.raises(TaskError, match="not valid TOML"):
        load_task(str(task))
    (task / "task.toml").write_text('version = "1.0"\n')
    (task / "tests" / "test.sh").unlink()
    with pytest.raises(TaskError, match=r"tests/test\.sh"):
        load_task(str(task))


def test_user_tasks_dir_env(tmp_path, monkeypatch):
    make_task(tmp_path, 'version = "1.0"\n')
    monkeypatch.setenv("AGENTRUN_TASKS_DIR", str(tmp_path))
    assert "demo" in list_tasks()
    assert load_task("demo").instruction.startswith("# Demo")


def test_hidden_tests_never_import_the_agents_code():
    """agentrun's own tasks drive the agent's program across a process boundary only: every
    copy of ``boundary.py`` is the same, every task's tests use it (django-reservations through
    ``app_client.py``), none imports Django or the project, and test.sh no longer puts
    /workspace on the pytest's ``sys.path``."""
    import ast

    tasks_dir = Path(__file__).resolve().parents[2] / "tasks"
    copies = sorted(tasks_dir.glob("*/tests/boundary.py"))
    assert {p.parent.parent.name for p in copies} >= {"todo-cli", "greet-cli", "django-reservations"}
    assert len({p.read_bytes() for p in copies}) == 1
    for folder in {p.parent for p in copies}:
        test_sh = (folder / "test.sh").read_text()
        assert "pythonpath" not in test_sh and "DJANGO_SETTINGS_MODULE" not in test_sh
        assert "pytest_django" not in (folder / "pytest.ini").read_text()
        runner_side = [*folder.glob("test_*.py"), *folder.glob("conftest.py"), *folder.glob("app_client.py")]
        used: set[str] = set()
        for test_file in runner_side:
            tree = ast.parse(test_file.read_text())
            imported = {
                alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
            }
            imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
            roots = {name.split(".")[0] for name in imported}
            assert not roots & {"importlib", "django", "reservations", "config", "todo", "greet"}, test_file
            used |= roots
            assert "sys.path" not in test_file.read_text(), test_file
        assert "boundary" in used, folder
