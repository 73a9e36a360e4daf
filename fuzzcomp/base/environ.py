"""One environment variable set for a block of code, and put back after it.

Contract: ``with environ_var(NAME, VALUE):`` sets ``os.environ[NAME]`` to VALUE (left as it is
when VALUE is None) and, whatever the block did to it, restores the value it had before, or its
absence. In-process callers (tests, ``fuzzcomp link``) must not leave a variable behind for
the code that runs next in the same process.
"""
from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def environ_var(name: str, value: str | None = None):
    old = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
