"""The ``fuzzcomp`` command: the argument parser (``main``), the command bodies, settings files,
finding lookup, ``doctor``, ``bisect`` and live progress.
"""
from fuzzcomp.cli.parser import main  # noqa: F401  (the console script is fuzzcomp.cli:main)
