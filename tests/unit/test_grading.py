from agentrun.grading import count_test_functions, parse_junit
from agentrun.tasks import load_task

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">
<testcase classname="t" name="ok1"/>
<testcase classname="t" name="ok2"><system-out>noise</system-out></testcase>
<testcase classname="t" name="bad"><failure message="assert 1 == 2">...</failure></testcase>
<testcase classname="t" name="err"><error message="fixture">...</error></testcase>
<testcase classname="t" name="skip"><skipped message="no"/></testcase>
</testsuite></testsuites>"""


def test_counts_come_from_testcases_not_the_summary_attributes():
    tally = parse_junit(JUNIT)
    assert (tally.passed, tally.failed, tally.total) == (2, 2, 5)


def test_single_testsuite_root_and_bytes():
    tally = parse_junit(
        b'<testsuite><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>'
    )
    assert (tally.passed, tally.failed, tally.total) == (1, 1, 2)
    assert tally.fraction == 0.5


def test_count_test_functions(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "def test_x():\n    pass\n\nclass TestY:\n    def test_z(self):\n        pass\n"
    )
    (tmp_path / "helper.py").write_text("def test_not_collected():\n    pass\n")
    (tmp_path / "test_broken.py").write_text("def test_(:\n")
    assert count_test_functions(tmp_path) == 2
    assert count_test_functions(load_task("todo-cli").tests_dir) == 16
