"""The symptom table: everything the pipeline knows about each symptom, in one place.

Contract: ``SYMPTOMS[name]`` is a frozen ``Symptom`` for each of the oracles' symptom names
(``fuzzcomp.oracles.SYMPTOMS``: the judge produces them; this table must name exactly those):

- ``rank``: severity for the user, 1 silent wrong values or gradients, 2 crashes (the process,
  the compiler or the call), 3 aliasing and error parity, 4 recompiles and other performance
  notes;
- ``identity``: what separates two bugs of the symptom in a bucket: ``"culprit"`` (a value
  finding: where it differs and the culprit op), ``"exception"`` (the normalised exception the
  compiled call raised) or ``"signature"`` (the oracle's own signature);
- ``culprit_deep``: the culprit search may run the first-diverging-intermediate pass;
- ``phrase`` (the bug report: "torch.compile(...) PHRASE on the program below") and
  ``title_phrase`` (the repro title); they differ only where the printed text always has
  (aliasing), and the printed text does not change here;
- ``title_kind``: the bracket of an upstream fuzzer-issue title; ``expected``: the report's
  **Expected** line;
- ``repro_runs_backward``: the report says the repro runs backward too;
- ``child_process``: the short repro runs the calls in a child process (the bug kills or hangs it).

The short form's check of each symptom is registered by name in ``fuzzcomp.render.short_checks``.
Adding a symptom: its row here, its check there, its test.
"""
from __future__ import annotations

from dataclasses import dataclass

from fuzzcomp.oracles import SYMPTOMS as _ORACLE_SYMPTOMS

DIVERGENCE = "Eager/Compile Divergence"


@dataclass(frozen=True)
class Symptom:
    name: str
    rank: int
    identity: str
    phrase: str
    title_phrase: str
    expected: str
    title_kind: str = DIVERGENCE
    culprit_deep: bool = False
    repro_runs_backward: bool = False
    child_process: bool = False


_SAME_RUNS = "The compiled function runs, as eager does."
SYMPTOMS: dict[str, Symptom] = {s.name: s for s in (
    Symptom("numeric", 1, "culprit", "returns wrong values", "returns wrong values",
            "`torch.compile` returns values that agree with eager within the fp64-reference rule "
            "(PyTorch's fuzzer rule, as in `torch._dynamo.utils.same(..., fp64_ref)`).", culprit_deep=True),
    Symptom("gradient", 1, "culprit", "computes wrong gradients", "computes wrong gradients",
            "Gradients agree with eager's within the fp64-reference rule.", repro_runs_backward=True),
    Symptom("mutation", 1, "culprit", "leaves an input with wrong values", "leaves an input with wrong values",
            "After each call the inputs hold the same values as after the eager call.", culprit_deep=True),
    Symptom("aliasing", 3, "signature", "changes output/input aliasing", "changes which inputs outputs alias",
            "Outputs alias the same inputs as in eager."),
    Symptom("recompile", 4, "signature", "recompiles a call it has already seen",
            "recompiles a call it has already seen", "No call that was already seen compiles again.",
            title_kind="Recompilation"),
    Symptom("compile-crash", 2, "exception", "fails to compile", "fails to compile", _SAME_RUNS,
            title_kind="Compile Crash", repro_runs_backward=True),
    Symptom("runtime-crash", 2, "exception", "raises at run time", "raises at run time", _SAME_RUNS,
            title_kind="Runtime Crash", repro_runs_backward=True),
    Symptom("error-parity", 3, "exception", "returns where eager raises", "returns where eager raises",
            "The compiled function raises the same error that eager raises."),
    Symptom("hang", 2, "signature", "hangs", "hangs", "Compilation and the call finish, as the eager call does.",
            title_kind="Hang", child_process=True),
    Symptom("segfault", 2, "signature", "crashes the process", "crashes the process",
            "The process survives compilation and the call, as it does in eager.", title_kind="Crash",
            child_process=True),
)}
assert tuple(SYMPTOMS) == tuple(_ORACLE_SYMPTOMS), "the symptom table must name the oracles' symptoms, in order"

#: silent wrong values or gradients: judged by the fp64 rule, bucketed by the culprit op
VALUE = tuple(n for n, s in SYMPTOMS.items() if s.identity == "culprit")
#: the compiled call raised: the ladder and buckets tell them apart by the normalised exception
RAISES = tuple(n for n, s in SYMPTOMS.items() if s.identity == "exception")
#: the compiled call or its compilation raised where eager did not
CRASHES = ("compile-crash", "runtime-crash")


#: a mutation finding whose label is not an input: its own phrase (label prefix, phrase, title phrase)
STATE_PHRASES = (
    ("state torch globals", "leaves torch's global state (grad mode, deterministic algorithms or default "
                            "dtype) different from eager", "leaves torch's global state different from eager"),
    ("state global", "rebinds a Python global to a value eager does not give it",
     "rebinds a Python global differently from eager"),
    ("buffer ", "leaves a module buffer with wrong values", "leaves a module buffer with wrong values"),
)


def state_row(name: str, label: str, signature: str = "") -> tuple | None:
    """The STATE_PHRASES row of a mutation finding by its verdict label (or a "torch globals" bucket)."""
    if name != "mutation":
        return None
    if signature.startswith("torch globals"):
        label = "state torch globals"
    return next((r for r in STATE_PHRASES if label.startswith(r[0])), None)


def phrase_for(name: str, label: str = "", signature: str = "") -> str:
    """The report's phrase, chosen by what went wrong: a global-state bug is not an input mutation."""
    row = state_row(name, label, signature)
    return row[1] if row else phrase(name)


def phrase(name: str) -> str:
    """The bug report's phrase for a symptom ("disagrees with eager" for a name not in the table)."""
    s = SYMPTOMS.get(name)
    return s.phrase if s else "disagrees with eager"


def title_phrase(name: str) -> str:
    s = SYMPTOMS.get(name)
    return s.title_phrase if s else "disagrees with eager"


def title_kind(name: str) -> str:
    s = SYMPTOMS.get(name)
    return s.title_kind if s else DIVERGENCE


def expected(name: str) -> str:
    s = SYMPTOMS.get(name)
    return s.expected if s else "Compiled and eager agree."


def rank(name: str) -> int:
    s = SYMPTOMS.get(name)
    return s.rank if s else 4
