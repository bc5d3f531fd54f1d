import pytest

from greet import greet


def test_plain():
    assert greet("Ada") == "Hello, Ada!"


def test_strips_spaces():
    assert greet("  Bob ") == "Hello, Bob!"


def test_shout():
    assert greet("Ada", shout=True) == "HELLO, ADA!"


def test_empty_raises():
    with pytest.raises(ValueError):
        greet("   ")
