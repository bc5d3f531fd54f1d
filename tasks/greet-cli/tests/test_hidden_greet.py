"""Hidden acceptance tests for greet-cli: the function and the command line, by the spec.

greet.py is never imported here: each call and each command runs in a child process, as
another user (``boundary.py``)."""

import os
import sys

import pytest

import boundary

WORKSPACE = os.environ.get("GREET_WORKSPACE", "/workspace")
GREET = os.path.join(WORKSPACE, "greet.py")


@pytest.fixture()
def greet():
    return boundary.module("greet", WORKSPACE).greet


def cli(*args):
    return boundary.run([sys.executable, GREET, *args], cwd=WORKSPACE)


def test_plain_greeting(greet):
    assert greet("Ada") == "Hello, Ada!"


def test_other_name(greet):
    assert greet("Grace Hopper") == "Hello, Grace Hopper!"


def test_strips_surrounding_spaces(greet):
    assert greet("  Bob \t") == "Hello, Bob!"


def test_shout_upper_cases_everything(greet):
    assert greet("Ada", shout=True) == "HELLO, ADA!"


def test_shout_is_keyword_with_default_false(greet):
    assert greet("ada", False) == "Hello, ada!"
    assert greet(name="ada") == "Hello, ada!"


@pytest.mark.parametrize("name", ["", "   "])
def test_empty_name_raises_value_error(greet, name):
    with pytest.raises(ValueError):
        greet(name)


def test_cli_prints_greeting():
    result = cli("Ada")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello, Ada!"


def test_cli_shout():
    result = cli("Ada", "--shout")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "HELLO, ADA!"


def test_cli_empty_name_is_an_error():
    result = cli("")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: name must not be empty"
    assert result.stdout.strip() == ""


def test_cli_missing_name_is_a_usage_error():
    assert cli().returncode == 2


def test_importing_does_not_run_the_cli():
    result = boundary.run([sys.executable, "-c", "import greet"], cwd=WORKSPACE)
    assert result.returncode == 0
    assert result.stdout == ""
