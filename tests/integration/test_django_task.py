"""Checking the checker: the django-reservations task in its real sandbox image.

The reference solution (put in place by solve.sh, as Harbor's oracle does) must pass every
hidden test and its own tests; each broken variant must fail the hidden tests aimed at its bug
and pass most of the rest.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from agentrun import grading
from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.images import ensure_task_image
from agentrun.tasks import TaskSpec, load_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Tests that must fail for each variant (by name, any parameter), and the files its failures
# may come from.
BROKEN: dict[str, tuple[set[str], set[str]]] = {
    "naive-datetimes": (
        {
            "test_availability_in_auckland_uses_local_opening_hours",
            "test_availability_in_tokyo_crosses_utc_date",
            "test_naive_start_is_local_wall_time",
            "test_start_outside_local_hours_refused",
            "test_closure_blocks_in_local_time",
            "test_spring_forward_day_uses_summer_offset",
            "test_fall_back_night_lists_both_one_oclocks",
            "test_reservation_across_spring_forward_lasts_real_minutes",
            "test_booking_across_midnight_accepted",
        },
        {"test_time_zones", "test_dst", "test_midnight"},
    ),
    "expiry-ignored": (
        {
            "test_expired_hold_no_longer_blocks",
            "test_expired_hold_returns_to_availability",
            "test_confirm_expired_hold_refused",
            "test_confirm_hold_service_checks_the_clock",
            "test_accept_expired_offer_refused",
            "test_accept_offer_service_checks_the_clock",
        },
        {"test_expiry"},
    ),
    "unvalidated-fks": (
        {
            "test_unknown_foreign_key_in_reservation_is_400",
            "test_unknown_foreign_key_in_hold_is_400",
            "test_unknown_foreign_key_in_waitlist_is_400",
            "test_confirm_hold_needs_a_real_guest",
            "test_offer_with_unknown_table_is_400",
        },
        {"test_validation"},
    ),
}


@pytest.fixture(scope="module")
def task() -> TaskSpec:
    return load_task("django-reservations")


@pytest.fixture(scope="module")
def image(docker_client: Any, task: TaskSpec) -> str:
    return ensure_task_image(task, client=docker_client)


def _start(image: str, task: TaskSpec, name: str) -> DockerSandbox:
    env = task.config.environment
    return DockerSandbox.start(
        image,
        run_id=f"test-django-{name}",
        cpus=env.cpus,
        memory_mb=env.memory_mb,
        labels={"purpose": "test"},
    )


def _solve(sandbox: DockerSandbox, task: TaskSpec) -> None:
    sandbox.put_dir(task.solution_dir, "/tmp/solution")
    result = sandbox.exec("bash /tmp/solution/solve.sh", timeout=60)
    assert result.exit_code == 0, result.output


def _failed_cases(junit: bytes | None) -> list[tuple[str, str]]:
    """(module, test name without parameters) of every failed or erroring hidden test."""
    assert junit is not None
    root = ET.fromstring(junit)
    return [
        (case.get("classname", "").rsplit(".", 1)[-1], case.get("name", "").split("[", 1)[0])
        for case in root.iter("testcase")
        if {child.tag for child in case} & {"failure", "error"}
    ]


@pytest.fixture(scope="module")
def oracle(image: str, task: TaskSpec) -> Iterator[tuple[grading.Grade, float, DockerSandbox]]:
    with _start(image, task, "oracle") as sandbox:
        _solve(sandbox, task)
        started = time.perf_counter()
        graded = grading.grade(task, sandbox)
        yield graded, time.perf_counter() - started, sandbox


def test_oracle_passes_every_hidden_test(oracle: tuple[grading.Grade, float, DockerSandbox]) -> None:
    graded, _, _ = oracle
    hidden = graded.hidden_tests
    assert hidden.total >= 40 and hidden.passed == hidden.total, graded.hidden_output_tail
    assert graded.reward == 1.0


def test_oracle_own_tests_pass_through_manage_py_test(
    oracle: tuple[grading.Grade, float, DockerSandbox],
) -> None:
    graded, _, _ = oracle
    own = graded.own_tests
    assert own.total >= 50 and own.passed == own.total, graded.own_output_tail


def test_grading_stays_quick(oracle: tuple[grading.Grade, float, DockerSandbox]) -> None:
    _, seconds, _ = oracle
    assert seconds < 150


def test_sandbox_has_no_network(oracle: tuple[grading.Grade, float, DockerSandbox]) -> None:
    _, _, sandbox = oracle
    probe = "import socket; socket.create_connection(('pypi.org', 443), timeout=3)"
    assert sandbox.exec(f'python -c "{probe}"', timeout=30).exit_code != 0
    assert sandbox.exec("python -c 'import django; assert django.VERSION[0] == 5'", timeout=30).exit_code == 0


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_broken_variant_fails_the_tests_aimed_at_it(image: str, task: TaskSpec, variant: str) -> None:
    must_fail, aimed_files = BROKEN[variant]
    with _start(image, task, variant) as sandbox:
        _solve(sandbox, task)
        sandbox.put_dir(task.path / "broken" / variant, "/workspace")
        run = grading.run_hidden_tests(task, sandbox)
        hidden, reward, tail = run.tally, run.reward, run.output_tail
        failed = _failed_cases(run.junit)
    failed_names = {name for _, name in failed}
    assert must_fail <= failed_names, (sorted(must_fail - failed_names), tail)
    assert {module for module, _ in failed} <= aimed_files, failed
    assert hidden.passed >= 0.75 * hidden.total, (hidden, tail)
    assert reward is not None and 0 < reward < 1


# Imported into a pytest, this turns every report of that pytest into a pass.
HOOK_ON_IMPORT = """import gc
try:
    import pytest
    from _pytest.config import Config
except ImportError:
    Config = None


class ForcePass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None


if Config is not None:
    for config in [o for o in gc.get_objects() if isinstance(o, Config)]:
        if not config.pluginmanager.has_plugin("force-pass"):
            config.pluginmanager.register(ForcePass(), "force-pass")
"""
FORGING_PROJECT = {  # a project that starts and answers nothing, and forges every pytest it meets
    "manage.py": "import os, sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\n"
    "from django.core.management import execute_from_command_line\nexecute_from_command_line(sys.argv)\n",
    "config/__init__.py": HOOK_ON_IMPORT,
    "config/settings.py": HOOK_ON_IMPORT + "SECRET_KEY = 'x'\nDEBUG = True\nALLOWED_HOSTS = ['*']\n"
    "USE_TZ = True\nROOT_URLCONF = 'config.urls'\nINSTALLED_APPS = ['django.contrib.contenttypes', "
    "'django.contrib.auth', 'reservations']\n",
    "config/urls.py": "urlpatterns = []\n",
    "reservations/__init__.py": HOOK_ON_IMPORT,
    "reservations/models.py": HOOK_ON_IMPORT,
    "reservations/services.py": HOOK_ON_IMPORT,
    "conftest.py": HOOK_ON_IMPORT,
    "pytest.py": "raise SystemExit(0)\n",
    "sitecustomize.py": HOOK_ON_IMPORT,
}


def test_a_project_that_registers_a_pytest_hook_on_import_scores_zero(image: str, task: TaskSpec) -> None:
    """Every module of the project forges the pytest that imports it: the hidden tests serve it
    as another user and import none of it, so it scores 0 (the control shows the forgery works)."""
    with _start(image, task, "forge") as sandbox:
        for path, content in FORGING_PROJECT.items():
            call = ParsedCall(id="w", name="write_file", arguments={"path": path, "content": content})
            assert sandbox.call(call).ok
        control = sandbox.exec(
            'mkdir -p /tmp/forge && cd /tmp/forge && printf \'import sys\\nsys.path.insert(0, "/workspace")\\n'
            "import reservations.services\\n\\ndef test_fails():\\n    assert False\\n' > test_forge.py "
            "&& python -m pytest -q -p no:cacheprovider test_forge.py",
            timeout=60,
        )
        assert control.exit_code == 0 and "1 passed" in control.output, control.output
        run = grading.run_hidden_tests(task, sandbox)
    assert run.tally.total == task.config.agentrun.hidden_tests_count, run.output_tail
    assert run.tally.passed == 0, run.output_tail
    assert run.reward == 0.0
