"""Generators: seeded random PyTorch programs and call schedules.

A leaf package: it imports torch and itself, never ``fuzzcomp`` or the oracles.
Installed as ``fuzzcomp.generators``.
"""
from .build import GENERATOR_VERSION, GenConfig, generate, generate_from_choices
from .emit import emit
from .ir import Case, from_jsonable, to_jsonable

__all__ = ["GENERATOR_VERSION", "GenConfig", "generate", "generate_from_choices", "emit", "Case",
           "from_jsonable", "to_jsonable"]
