"""Oracles: judge an Observation of eager vs compiled runs into Verdicts.

A leaf package: it imports torch and itself, never ``fuzzcomp`` or the
generators. Installed as ``fuzzcomp.oracles``.
"""
from .judge import caller_reference_calls, judge, needs_perturbation, notes
from .observation import CallRecord, Observation
from .verdict import SYMPTOMS, STAGES, Verdict, error_signature, primary

__all__ = ["caller_reference_calls", "judge", "needs_perturbation", "notes", "CallRecord", "Observation", "SYMPTOMS", "STAGES",
           "Verdict", "error_signature", "primary"]
