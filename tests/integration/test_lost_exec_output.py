"""Docker 20.10 sometimes answers a short exec with its exit code and none of its output
(moby/moby#27289). Under load that graded a run whose 16 hidden tests had passed 0/16: the
verifier's ``head`` of junit.xml came back empty. Here a real verifier container's replies are
cut the way the engine cut them, and the report, the reward and the process check still hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from docker.models.containers import ExecResult

from agentrun import grading
from agentrun.errors import SandboxError
from agentrun.sandbox import container as ct
from agentrun.sandbox.checked_exec import ATTEMPTS
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.verifier import PROGRAM_USER, VERIFIER_USER, DockerVerifier

pytestmark = pytest.mark.docker

JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">'
    '<testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite></testsuites>'
)


class CuttingEngine:
    """The real container, except that its next exec replies come back as the engine cut them:
    ``mode`` "empty" (exit code, no output) or "short" (the output's last bytes missing)."""

    def __init__(self, real: Any, cut: int, mode: str = "empty") -> None:
        self._real, self.cut, self.mode, self.calls = real, cut, mode, 0

    def exec_run(self, *args: Any, **kwargs: Any) -> ExecResult:
        result = self._real.exec_run(*args, **kwargs)
        self.calls += 1
        if self.cut <= 0:
            return result
        self.cut -= 1
        out, err = result.output if kwargs.get("demux") else (result.output, None)
        kept = b"" if self.mode == "empty" else (out or b"")[:-3]
        return ExecResult(result.exit_code, (kept or None, err) if kwargs.get("demux") else kept)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture(scope="module")
def verifier(
    todo_image: str, docker_client: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DockerVerifier]:
    root = tmp_path_factory.mktemp("lost")
    sandbox = DockerSandbox.start(todo_image, run_id="test-lost-output", root=root / "run")
    with sandbox, sandbox.open_verifier(sandbox.workspace_archive()) as box:
        done = box.exec(
            f"mkdir -p /logs/verifier && printf '%s' '{JUNIT}' > /logs/verifier/junit.xml"
            " && echo 1 > /logs/verifier/reward.txt",
            timeout=30,
        )
        assert done.exit_code == 0, done.output
        yield box


def _cut(box: DockerVerifier, cut: int, mode: str = "empty") -> tuple[DockerVerifier, CuttingEngine]:
    engine = CuttingEngine(box.container, cut, mode)
    return DockerVerifier(box.client, engine), engine


@pytest.mark.parametrize("mode", ["empty", "short"])
def test_a_cut_reply_is_read_again_and_the_grade_stays_true(verifier: DockerVerifier, mode: str) -> None:
    box, engine = _cut(verifier, cut=2, mode=mode)
    junit = grading._read(box, "/logs/verifier/junit.xml")  # on the verifier's tmpfs: read by exec
    assert junit == JUNIT.encode()
    assert engine.calls == 3  # two cut replies, then the whole one
    tally, verdict, _ = grading.judge(junit, 1.0, expected=2)
    assert (tally.passed, tally.total, verdict) == (2, 2, "graded")
    uncut = grading._read(verifier, "/logs/verifier/reward.txt")
    assert grading._read(_cut(verifier, cut=1)[0], "/logs/verifier/reward.txt") == uncut == b"1\n"


def test_an_engine_that_keeps_cutting_is_an_error_not_an_empty_file(verifier: DockerVerifier) -> None:
    box, engine = _cut(verifier, cut=ATTEMPTS)
    with pytest.raises(SandboxError, match="lost the output"):
        box.read_file("/logs/verifier/junit.xml")
    assert engine.calls == ATTEMPTS
    box, _ = _cut(verifier, cut=ATTEMPTS)
    assert grading._read(box, "/logs/verifier/junit.xml") is None  # grading then counts no report


def test_a_missing_file_is_missing_at_once(verifier: DockerVerifier) -> None:
    box, engine = _cut(verifier, cut=0)
    with pytest.raises(FileNotFoundError, match="No such file"):
        box.read_file("/logs/verifier/absent.xml")
    assert engine.calls == 1  # a whole reply that says "no such file" is not retried


def test_a_cut_process_listing_is_not_taken_for_none_left(verifier: DockerVerifier) -> None:
    """The listing after ``kill -9 -1`` must come back whole: a cut one read as "none left"."""
    assert (
        ct.run_exec(verifier.container, "setsid -f sleep 600", timeout=30, user=PROGRAM_USER).exit_code == 0
    )
    assert _sleeping(verifier)
    engine = CuttingEngine(verifier.container, cut=10**6)  # every reply cut
    with pytest.raises(SandboxError, match="lost the output"):
        ct.stop_user_processes(engine, PROGRAM_USER)
    ct.stop_user_processes(CuttingEngine(verifier.container, cut=3), PROGRAM_USER)  # recovers
    assert not _sleeping(verifier)


def _sleeping(box: DockerVerifier) -> list[str]:
    probe = (
        "import os; print(' '.join(p for p in os.listdir('/proc') if p.isdigit()"
        " and open(f'/proc/{p}/cmdline', 'rb').read() == b'sleep\\x00600\\x00'))"
    )
    return box.exec(f'python3 -c "{probe}"', timeout=30).output.split()


class LateExit:
    """The engine's API, except that its first ``late`` answers about an exec come before the
    engine has recorded the exit: ``Running`` true and no ``ExitCode``, as it does under load."""

    def __init__(self, api: Any, late: int) -> None:
        self._api, self.late = api, late

    def exec_inspect(self, exec_id: Any) -> dict[str, Any]:
        state = dict(self._api.exec_inspect(exec_id))
        if self.late > 0:
            self.late -= 1
            state.update(Running=True, ExitCode=None)
        return state


def test_an_exit_the_engine_has_not_recorded_yet_is_waited_for(verifier: DockerVerifier) -> None:
    api = verifier.client.api
    exec_id = api.exec_create(verifier.container.id, ["sh", "-c", "echo out; exit 3"], user=VERIFIER_USER)
    assert api.exec_start(exec_id) == b"out\n"
    late = LateExit(api, late=3)
    assert ct.exit_code(late, exec_id) == 3 and late.late == 0  # not None (was: -1, or 0 after an untar)
