"""The harness's two error classes, at the bottom so that every layer may raise them.

Contract: ``UsageError`` is a user mistake (one line, exit 2); ``HarnessError`` is the harness or
the environment broken, not the user and not torch.compile (one line, exit 3). ``fuzzcomp.cli``
catches both and prints the line.
"""


class UsageError(Exception):
    """A user mistake: one line, exit 2."""


class HarnessError(Exception):
    """The harness or the environment is broken (not the user, not torch.compile): one line, exit 3."""
