"""fuzzcomp.base.environ: one variable set for a block, and put back after it."""
from __future__ import annotations

import os

import pytest

from fuzzcomp.base.environ import environ_var

NAME = "FUZZCOMP_TEST_ENVIRON_VAR"


def test_a_variable_set_inside_comes_back_as_it_was_or_absent(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    with environ_var(NAME, "inside"):
        assert os.environ[NAME] == "inside"
    assert NAME not in os.environ
    monkeypatch.setenv(NAME, "before")
    with pytest.raises(RuntimeError):
        with environ_var(NAME, "inside"):
            raise RuntimeError("the block failed")
    assert os.environ[NAME] == "before"


def test_without_a_value_it_only_restores_what_the_block_changed(monkeypatch):
    monkeypatch.setenv(NAME, "before")
    with environ_var(NAME):
        assert os.environ[NAME] == "before"
        os.environ[NAME] = "changed by the block"
    assert os.environ[NAME] == "before"
    monkeypatch.delenv(NAME)
    with environ_var(NAME):
        os.environ[NAME] = "made by the block"
    assert NAME not in os.environ
