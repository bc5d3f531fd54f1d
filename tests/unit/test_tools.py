"""The in-sandbox tools (tools/builtin.py) run on the host against a temporary workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from agentrun.paths import data_dir
from agentrun.toolset import load_builtin_module


@pytest.fixture(scope="module")
def tools() -> ModuleType:
    return load_builtin_module()


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("AGENTRUN_WORKSPACE", str(root))
    return root


def failure(tools: ModuleType, kind: str, fn, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(tools.ToolFailure) as info:
        fn(*args, **kwargs)
    assert info.value.kind == kind, info.value.message
    return str(info.value.message)


def test_read_file_whole_and_ranges(tools: ModuleType, ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    assert tools.read_file("a.txt") == "one\ntwo\nthree\nfour\n"
    assert tools.read_file("a.txt", start_line=2, end_line=3) == "two\nthree\n"
    assert tools.read_file("a.txt", start_line=4) == "four\n"
    assert tools.read_file("a.txt", end_line=1) == "one\n"
    assert tools.read_file(str(ws / "a.txt"), 1, 1) == "one\n"
    assert "has 4 lines" in failure(tools, "validation", tools.read_file, "a.txt", start_line=9)
    failure(tools, "validation", tools.read_file, "a.txt", start_line=0)
    failure(tools, "validation", tools.read_file, "a.txt", start_line=3, end_line=2)
    failure(tools, "not_found", tools.read_file, "missing.txt")


def test_write_file_creates_parents(tools: ModuleType, ws: Path) -> None:
    assert "wrote 4 bytes" in tools.write_file("deep/er/b.txt", "héy")
    assert (ws / "deep/er/b.txt").read_text() == "héy"
    failure(tools, "validation", tools.write_file, "deep", "x")


def test_edit_file_needs_exactly_one_match(tools: ModuleType, ws: Path) -> None:
    (ws / "c.py").write_text("x = 1\ny = 1\nx = 1\n")
    assert "0 matches" in failure(tools, "edit", tools.edit_file, "c.py", "z = 1", "z = 2")
    assert "occurs 2 times" in failure(tools, "edit", tools.edit_file, "c.py", "x = 1", "x = 2")
    assert "line 2" in tools.edit_file("c.py", "y = 1", "y = 2")
    assert (ws / "c.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    failure(tools, "validation", tools.edit_file, "c.py", "", "q")


def test_paths_cannot_leave_the_workspace(tools: ModuleType, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    for path in ("../secret.txt", str(outside), "sub/../../secret.txt", "/etc/passwd"):
        failure(tools, "path", tools.read_file, path)
    failure(tools, "path", tools.write_file, "../evil.txt", "x")
    failure(tools, "path", tools.search, "x", path="..")
    failure(tools, "path", tools.list_files, "../*")
    (ws / "ok.txt").write_text("ok")
    assert tools.read_file("sub/../ok.txt") == "ok"


def test_symlinks_out_of_the_workspace_are_refused(tools: ModuleType, ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    (ws / "link.txt").symlink_to(tmp_path / "secret.txt")
    (ws / "linkdir").symlink_to(tmp_path)
    assert "symlink" in failure(tools, "path", tools.read_file, "link.txt")
    failure(tools, "path", tools.write_file, "linkdir/new.txt", "x")
    failure(tools, "path", tools.edit_file, "link.txt", "secret", "public")
    assert (tmp_path / "secret.txt").read_text() == "secret"
    assert not (tmp_path / "new.txt").exists()
    assert "link.txt" not in tools.list_files()
    (ws / "inner.txt").write_text("fine")
    (ws / "inner_link.txt").symlink_to(ws / "inner.txt")
    assert tools.read_file("inner_link.txt") == "fine"


def test_a_link_to_a_fifo_outside_is_refused_without_opening_it(
    tools: ModuleType, ws: Path, tmp_path: Path
) -> None:
    """``read_file`` checks where the path really is before it opens it to read: a FIFO outside
    the workspace would block the runtime at the open."""
    import threading

    os.mkfifo(tmp_path / "pipe")
    (ws / "link").symlink_to(tmp_path / "pipe")
    outcome: list[str] = []

    def read() -> None:
        try:
            tools.read_file("link")
        except tools.ToolFailure as exc:
            outcome.append(exc.kind)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert outcome == ["path"]


def test_list_files_globs_and_skips_git(tools: ModuleType, ws: Path) -> None:
    for rel in ("a.py", "pkg/b.py", "pkg/deep/c.py", "pkg/d.txt", ".git/config"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("")
    assert tools.list_files().splitlines() == ["a.py", "pkg/b.py", "pkg/d.txt", "pkg/deep/c.py"]
    assert tools.list_files("**/*.py").splitlines() == ["a.py", "pkg/b.py", "pkg/deep/c.py"]
    assert tools.list_files("pkg/*.py").splitlines() == ["pkg/b.py"]
    assert "no files match" in tools.list_files("*.rs")


def test_read_file_and_search_number_lines_as_grep_does(tools: ModuleType, ws: Path) -> None:
    """U+2028, U+0085, form feed... are text inside a line, not line ends (str.splitlines)."""
    inside = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    (ws / "a.txt").write_text(f"one{inside}still one\ntwo\r\nthree", encoding="utf-8", newline="")
    assert tools.read_file("a.txt", start_line=2) == "two\r\nthree"
    assert tools.read_file("a.txt", start_line=1, end_line=1) == f"one{inside}still one\n"
    assert "has 3 lines" in failure(tools, "validation", tools.read_file, "a.txt", start_line=4)
    assert tools.search("three|two") == "a.txt:2: two\na.txt:3: three"


def test_search_reports_file_line_text(tools: ModuleType, ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src/m.py").write_text("def alpha():\n    return 1\ndef beta():\n")
    (ws / "notes.txt").write_text("alpha notes\n")
    (ws / "blob.bin").write_bytes(b"\x00alpha")
    assert tools.search(r"def \w+").splitlines() == ["src/m.py:1: def alpha():", "src/m.py:3: def beta():"]
    assert tools.search("alpha", glob="**/*.txt") == "notes.txt:1: alpha notes"
    assert tools.search("alpha", path="src") == "src/m.py:1: def alpha():"
    assert "no matches" in tools.search("gamma")
    failure(tools, "validation", tools.search, "(unclosed")
    (ws / "many.txt").write_text("hit\n" * 500)
    capped = tools.search("hit", path="many.txt").splitlines()
    assert len(capped) == tools.MAX_SEARCH_MATCHES + 1 and "stopped after" in capped[-1]


def test_run_shell_exit_codes_and_stderr(tools: ModuleType, ws: Path) -> None:
    ok = tools.run_shell("echo out; echo err >&2; pwd")
    assert ok.exit_code == 0 and ok.text == f"out\nerr\n{ws}\n[exit code: 0]"
    failed = tools.run_shell("exit 7")
    assert failed.exit_code == 7 and failed.text == "[exit code: 7]"
    failure(tools, "validation", tools.run_shell, "   ")


def test_run_shell_timeout_kills_the_whole_group(tools: ModuleType, ws: Path) -> None:
    message = failure(
        tools,
        "timeout",
        tools.run_shell,
        "(sleep 300; echo x) & echo PID=$!; echo started; sleep 300; echo finished",
        timeout=1,
    )
    # killed at the timeout, not waited out: what the command prints after its sleeps is missing
    assert "timed out after 1s" in message and "started" in message
    assert "finished" not in message and "\nx\n" not in message
    child = int(message.split("PID=")[1].split()[0])
    assert _dies(child), "the background child survived the timeout"


def test_run_shell_stops_leftover_background_processes(tools: ModuleType, ws: Path) -> None:
    result = tools.run_shell("sleep 300 & echo $!")
    assert result.exit_code == 0
    assert _dies(int(result.text.split()[0]))


def test_run_shell_caps_output_keeping_head_and_tail(tools: ModuleType, ws: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tools, "MAX_OUTPUT_BYTES", 1000)
    result = tools.run_shell("echo FIRST; head -c 100000 /dev/zero | tr '\\0' x; echo; echo LAST")
    assert result.truncated and result.exit_code == 0
    assert result.text.startswith("FIRST\n") and result.text.endswith("LAST\n[exit code: 0]")
    cut = int(result.text.split("[... ")[1].split(" bytes")[0])
    assert cut == 6 + 100000 + 1 + 5 - 1000
    assert len(result.text) < 1200


def test_run_shell_unbounded_output_stays_bounded(tools: ModuleType, ws: Path) -> None:
    message = failure(tools, "timeout", tools.run_shell, "yes", timeout=1)
    assert "bytes of output cut" in message and len(message) < tools.MAX_OUTPUT_BYTES + 500


@pytest.fixture(params=["pidfd", "no pidfd"])
def exit_seen(request: pytest.FixtureRequest, tools: ModuleType, monkeypatch: pytest.MonkeyPatch) -> str:
    """run_shell sees its command's exit through a pidfd, or (a kernel or seccomp without
    ``pidfd_open``) by a timed wait: both ways end each call as the command does."""
    if request.param == "no pidfd":
        monkeypatch.setattr(tools, "_exit_fd", lambda pid: None)
    return str(request.param)


def test_run_shell_output_closed_before_the_exit(tools: ModuleType, ws: Path, exit_seen: str) -> None:
    result = tools.run_shell("echo out; exec >&- 2>&-; sleep 0.3; exit 3")
    assert result.exit_code == 3 and result.text == "out\n[exit code: 3]"


def test_run_shell_deadline_with_the_output_closed(tools: ModuleType, ws: Path, exit_seen: str) -> None:
    message = failure(tools, "timeout", tools.run_shell, "echo started; exec >&- 2>&-; sleep 300", timeout=1)
    assert "timed out after 1s" in message and "started" in message


def test_run_shell_background_child_holding_the_output(tools: ModuleType, ws: Path, exit_seen: str) -> None:
    result = tools.run_shell("sleep 300 & echo $!; exit 4")
    assert result.exit_code == 4
    assert _dies(int(result.text.split()[0]))


def test_an_exit_fd_is_readable_once_the_process_exits(tools: ModuleType) -> None:
    import select

    proc = subprocess.Popen(["sleep", "30"])
    fd = tools._exit_fd(proc.pid)
    if fd is None:
        proc.wait(timeout=10)
        pytest.skip("this kernel has no pidfd_open")
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        assert poller.poll(0) == [] and proc.poll() is None  # running: not readable
        proc.kill()
        assert poller.poll(10_000), "the pidfd did not wake when the process exited"
        assert proc.wait(timeout=1) == -9
    finally:
        os.close(fd)


def test_runtime_server_answers_json_lines(ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    requests = [
        {"id": "1", "op": "ping"},
        {"id": "2", "tool": "read_file", "args": {"path": "a.txt"}},
        "not json",
        {"id": "3", "tool": "nope", "args": {}},
        {"id": "4", "tool": "run_shell", "args": {"command": "python3 -c 'print(42)'; exit 2"}},
        {"id": "5", "tool": "read_file", "args": {"path": 5}},
        {"id": "6", "tool": "read_file", "args": {"path": "../x"}},
    ]
    stdin = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    proc = subprocess.run(
        [sys.executable, "-I", str(data_dir("tools") / "runtime.py")],
        input=stdin.encode(),
        capture_output=True,
        env={**os.environ, "AGENTRUN_WORKSPACE": str(ws)},
        timeout=30,
        check=True,
    )
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == ["1", "2", None, "3", "4", "5", "6"]
    assert replies[0]["output"] == "pong" and replies[1]["output"] == "hello\n"
    assert [r["error"] for r in replies] == [
        None,
        None,
        "runtime",
        "unknown_tool",
        None,
        "validation",
        "path",
    ]
    assert replies[4]["exit_code"] == 2 and replies[4]["output"] == "42\n[exit code: 2]"


def _dies(pid: int) -> bool:
    """Whether ``pid`` is gone within 10 s of its SIGKILL. The signal is sent before run_shell
    returns, but a killed process exits only once the scheduler runs it: a fixed 0.2 s sleep
    before one look is a race on a loaded machine."""
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


def test_a_full_disk_is_the_error_disk_full(
    tools: ModuleType, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC (the workspace's quota) is ``disk_full``, with the quota said: from a command
    (``/dev/full`` is a device that is always full) and from a file tool's OSError."""
    import errno

    monkeypatch.setenv("AGENTRUN_WORKSPACE_QUOTA_MB", "64")
    message = failure(tools, "disk_full", tools.run_shell, "echo x > /dev/full")
    assert "No space left on device" in message and "its quota is 64 MB" in message
    failed = tools._os_failure(OSError(errno.ENOSPC, "No space left on device"), str(ws / "a.txt"))
    assert failed.kind == "disk_full" and failed.message.startswith("a.txt: no space left")
    assert tools.run_shell("echo fine").exit_code == 0
