"""The exit codes every fuzzcomp command and every generated repro file use.

Contract: one table, shared by ``run``, ``replay``, ``minimize``, ``report``,
``promote``, the corpus plugin and the repro files (which hard-code the same
numbers, since they import nothing but torch):

- ``CLEAN`` (0): the command did its job and found nothing wrong / the bug is
  fixed.
- ``BUG`` (1): findings exist / the bug still shows (a repro also prints one
  ``BUG:`` line).
- ``USAGE`` (2): the user asked for something invalid (bad flag, missing file,
  a file that is not a fuzzcomp repro).
- ``HARNESS`` (3): the harness or the environment is broken (a repro that
  cannot run here: no CUDA, a backend module that cannot be imported, a syntax
  error; an unreadable campaign folder). Never a passing xfail.
- ``INTERRUPTED`` (130): Ctrl-C / SIGTERM; everything was saved first.
"""
CLEAN = 0
BUG = 1
USAGE = 2
HARNESS = 3
INTERRUPTED = 130
