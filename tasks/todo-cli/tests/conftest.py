"""``tmp_path`` is a folder the program user owns: the CLI under test writes its files there."""

import pytest

import boundary


@pytest.fixture
def tmp_path():
    return boundary.workdir()
