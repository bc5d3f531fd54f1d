"""Python source a model wrote (quoted strings, pythonic calls), read with ``ast`` the same way under
any warning filter."""

from __future__ import annotations

import ast
import warnings
from typing import Any

__all__ = ["python_source"]


def python_source(source: str, mode: str = "literal") -> Any:
    """``ast.literal_eval(source)`` (or ``ast.parse(source, mode="eval")`` with ``mode="parse"``)
    whatever the process's warning filters say: an invalid escape in a string (``\\w`` in a
    regex a model wrote) is a warning Python can be told to raise (``-W error``, pytest's
    filterwarnings), and the same text must read the same way in a test, the CLI and the gateway."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.literal_eval(source) if mode == "literal" else ast.parse(source, mode="eval")
