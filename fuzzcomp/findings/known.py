"""The registry of known torch.compile bugs: one entry per root cause, and its matcher.

Contract: ``load_registry(path)`` reads ``corpus/known_bugs.json`` into frozen
``KnownBug`` entries (a broken file raises ``RegistryError`` naming the entry
and the field). ``Registry.match(identity)`` answers "is this finding a known
bug?" the way the minimiser answers "is this still the same bug?": from the
finding's identity (its BucketKey and the ops of its program), never from free
text. An entry matches when the finding's bucket is one the bug has shown up
under, or when the entry's rule holds: the symptom, a regular expression on the
normalised signature (the bucket's own), the ops the program must contain (shell
globs on op names, so ``*expm1*`` covers ``torch.expm1``, ``Tensor.expm1_`` and a
constant subgraph's ``const:torch.expm1``; ``input_markers`` adds what the inputs are, such as
``input:written`` for a program that writes in place into an input), the ops it must not
contain (``ops_none``) and the device. A rule names the root
cause, so a downstream symptom of it (the ``-0.0`` of ``expm1`` read back by
``atan2``) matches too. An entry whose fix is in the running torch, or whose
affected range leaves it out, never matches: a rediscovery there is a
regression, and ``Match.regression`` says which entry it resembles.
``label(match)`` is what ``summary.json`` stores as a bucket's ``known``.
``add_bucket`` and ``save_registry`` are the one way the file is written
(``fuzzcomp link``): atomically, with its layout kept.
"""
from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzcomp.findings.corpus import (CorpusError, META_PREFIX, default_corpus_dir, load_known, parse_meta, release,
                                      torch_affected)
from fuzzcomp.findings.store import write_atomic
from fuzzcomp.findings.triage import BucketKey, culprit_named, op_set
from fuzzcomp.generators.ops_view import VIEW_OPS
from fuzzcomp.run.branches import taken_program
from fuzzcomp.run.fix_probes import NAMES as FIX_PROBES, could_close

REGISTRY_NAME = "known_bugs.json"
STATES = ("open", "closed")
_RULE_KEYS = {"symptoms", "signature", "ops_all", "ops_any", "ops_none", "device", "stages", "label_check"}
_ENTRY_KEYS = {"id", "title", "root_cause", "issue", "state", "fix_pr", "fixed_in", "affected", "repro",
               "buckets", "match", "searched", "searched_on", "notes", "related", "trigger", "fix_probe"}
_TRIGGER_KEYS = {"ops", "caps", "kinds"}  # generator op globs, reach capabilities, structure kinds


class RegistryError(ValueError):
    """The registry file cannot be used: it says which entry and field."""


@dataclass(frozen=True)
class Rule:
    symptoms: tuple[str, ...] = ()
    signature: str | None = None           # regex, searched in the bucket's normalised signature
    ops_all: tuple[str, ...] = ()          # globs: each must match some op of the program
    ops_any: tuple[str, ...] = ()          # globs: one of them must match some op
    #: globs none of which may match: what sends the program down another root cause's path
    #: (aliased inputs take AOTAutograd's synthetic-base path, another bug than a lone offset view)
    ops_none: tuple[str, ...] = ()
    device: str | None = None
    stages: tuple[str, ...] = ()
    #: a raised message too common to settle the identity alone (``IndexError: list index out of
    #: range``): the finding gets a label check on its minimised program, as a silent one does
    label_check: bool = False

    def specificity(self) -> int:
        """How much of a finding the rule names: a signature counts double."""
        return 2 * bool(self.signature) + len(self.ops_all) + bool(self.ops_any) + bool(self.device) \
            + bool(self.stages) + bool(self.symptoms)  # an exclusion (ops_none) names nothing of it

    def pinned(self) -> bool:
        """The rule names where the bug lives (a stage), what it looks like (a symptom) and what
        the program must hold (an op or input marker), and asks for no label check. On its own
        (no other entry's rule holds) such a claim is settled without a probe: every wrong label
        of the judged campaigns came from a rule missing one of these or from a contested claim,
        while the knock-outs of the others (11 in CPU 1506 and 1507) never refuted one."""
        return bool(self.symptoms and self.stages and (self.ops_all or self.ops_any) and not self.label_check)

    def names_any(self, ops) -> bool:
        """One of the rule's op globs matches one of ``ops``."""
        return any(op_matches(op, g) for g in self.ops_all + self.ops_any for op in ops)

    def holds(self, ident: "Identity") -> bool:
        if self.symptoms and ident.symptom not in self.symptoms:
            return False
        if self.stages and ident.stage not in self.stages:
            return False
        if self.device and ident.device != self.device:
            return False
        if self.signature and not re.search(self.signature, ident.signature):
            return False
        return self.ops_hold(ident.ops)

    def ops_hold(self, ops) -> bool:
        """The rule's op and marker conditions alone (ops_all, ops_any, ops_none) hold on ``ops``."""
        if any(not _has_op(ops, g) for g in self.ops_all):
            return False
        if any(_has_op(ops, g) for g in self.ops_none):
            return False
        return not self.ops_any or any(_has_op(ops, g) for g in self.ops_any)


def _culprit_ops(ident: "Identity") -> set[str]:
    """The op the bucket's culprit search named (``culprit op: X`` in its signature), with the
    program's ops that carry it under a prefix (``sarg:inf_remainder`` for ``inf_remainder``)."""
    name = culprit_named(ident.signature)
    if name is None:
        return set()
    return {name} | {op for op in ident.ops if op.endswith(":" + name)}


_WRITING_DUNDER = re.compile(r"(.*\.)?__(setitem|i[a-z]+)__$")


def op_matches(op: str, glob: str) -> bool:
    """``op`` matches the registry's op ``glob`` (fnmatch, case-sensitive). A glob of in-place
    methods (ending in one ``_``, e.g. ``Tensor.*_``) names writes: of the operator dunders it
    matches only those that write (``__setitem__``, ``__iadd__`` ...), never ``__getitem__`` or
    ``__add__``, which fnmatch's ``*`` alone would let it name."""
    if not fnmatch.fnmatchcase(op, glob):
        return False
    if glob.endswith("_") and not glob.endswith("__") and op.endswith("__") and "__" in op[:-2]:
        return bool(_WRITING_DUNDER.match(op))
    return True


def _has_op(ops: frozenset[str], glob: str) -> bool:
    return any(op_matches(op, glob) for op in ops)


@dataclass(frozen=True)
class KnownBug:
    id: str
    title: str
    issue: str | None = None               # the upstream issue, None when not reported upstream
    state: str | None = None               # the issue's state: open / closed
    fix_pr: str | None = None
    fixed_in: str | None = None            # the first torch release with the fix
    affected: str | None = None            # torch versions that show it, e.g. ">=2.11,<2.13"
    repro: str | None = None               # a corpus file that shows it
    buckets: tuple[str, ...] = ()          # bucket slugs it has shown up under
    rules: tuple[Rule, ...] = ()           # any one holding claims a finding
    root_cause: str = ""
    searched: tuple[str, ...] = ()         # the upstream searches made for it
    searched_on: str | None = None
    notes: str = ""
    related: tuple[str, ...] = ()          # upstream threads that resemble it without being it
    trigger: dict | None = None            # what generation needs to hit it (campaign.novelty)
    fix_probe: str | None = None           # a candidate fix (fuzzcomp.run.fix_probes) that closes it

    @property
    def rule(self) -> Rule | None:
        return self.rules[0] if self.rules else None

    def advice(self) -> str:
        """The next step for a user who meets it."""
        if self.fixed_in:
            return f"fixed in torch {self.fixed_in}: upgrade"
        if self.issue is None:
            when = f" on {self.searched_on}" if self.searched_on else ""
            return (f"not reported upstream (searched {len(self.searched)} ways{when}; the registry lists them): "
                    "file it")
        if self.state == "closed":
            return f"closed upstream: {self.issue}" + (f" (fix: {self.fix_pr})" if self.fix_pr else "")
        return f"open upstream: {self.issue}"


@dataclass(frozen=True)
class Identity:
    """What matching reads of a finding: its bucket and the ops of its program."""
    slug: str
    symptom: str
    stage: str
    signature: str
    ops: frozenset[str] = frozenset()
    device: str = "cpu"


@dataclass(frozen=True)
class Match:
    bug: KnownBug
    how: str                               # "bucket" (seen under this identity), "rule" or "fix probe"
    regression: bool = False               # the running torch has its fix: a rediscovery is news
    rule: "Rule | None" = None             # the rule that held (an entry may have several)
    rivals: tuple = ()                     # the other live entries whose rules hold too

    @property
    def contested(self) -> bool:
        """Another entry's rule holds too: a label check decides between them."""
        return bool(self.rivals)


def _strs(value, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise RegistryError(f"{where}: a list of strings, not {value!r}")
    return tuple(value)


def _rules(data, where: str) -> tuple[Rule, ...]:
    """``match``: one rule object, or a list of them (one root cause seen under several symptoms)."""
    if isinstance(data, list):
        if not data:
            raise RegistryError(f"{where}: 'match' must be a non-empty object or list of objects")
        return tuple(_rule(d, f"{where}.match[{i}]") for i, d in enumerate(data))
    r = _rule(data, where)
    return () if r is None else (r,)


def _rule(data, where: str) -> Rule | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not data:
        raise RegistryError(f"{where}: 'match' must be a non-empty object")
    bad = set(data) - _RULE_KEYS
    if bad:
        raise RegistryError(f"{where}: unknown match key {sorted(bad)[0]!r}; known: {', '.join(sorted(_RULE_KEYS))}")
    sig = data.get("signature")
    if sig is not None:
        try:
            re.compile(sig)
        except re.error as e:
            raise RegistryError(f"{where}: match.signature is not a regular expression: {e}") from None
    rule = Rule(symptoms=_strs(data.get("symptoms"), where + ".symptoms"), signature=sig,
                ops_all=_strs(data.get("ops_all"), where + ".ops_all"),
                ops_any=_strs(data.get("ops_any"), where + ".ops_any"),
                ops_none=_strs(data.get("ops_none"), where + ".ops_none"),
                device=data.get("device"), stages=_strs(data.get("stages"), where + ".stages"),
                label_check=data.get("label_check", False))
    if not isinstance(rule.label_check, bool):
        raise RegistryError(f"{where}: match.label_check is true or false, not {rule.label_check!r}")
    for g in rule.ops_all + rule.ops_any + rule.ops_none:
        if "[" in g.replace("[[]", ""):  # fnmatch reads [..] as a character class: "*[scalar]" matched torch.mul
            raise RegistryError(f"{where}: op glob {g!r} holds a '[' character class; op names carry literal "
                                "brackets (Tensor.add_[scalar]): write '[[]' for each '['")
    if not (rule.signature or rule.ops_all or rule.ops_any):
        raise RegistryError(f"{where}: a rule needs a signature or ops, or it matches every finding "
                            "of its symptom")
    return rule


def _trigger(data, where: str) -> dict | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - _TRIGGER_KEYS:
        raise RegistryError(f"{where}.trigger: an object with lists under {', '.join(sorted(_TRIGGER_KEYS))}")
    return {k: _strs(v, f"{where}.trigger.{k}") for k, v in data.items()}


def _fix_probe(name, where: str) -> str | None:
    if name is not None and name not in FIX_PROBES:
        raise RegistryError(f"{where}: fix_probe {name!r} is not a probe of fuzzcomp.run.fix_probes "
                            f"({', '.join(sorted(FIX_PROBES))})")
    return name


def entry_from_json(data: dict, where: str) -> KnownBug:
    if not isinstance(data, dict):
        raise RegistryError(f"{where}: an entry is an object")
    bad = set(data) - _ENTRY_KEYS
    if bad:
        raise RegistryError(f"{where}: unknown key {sorted(bad)[0]!r}")
    for req in ("id", "title"):
        if not isinstance(data.get(req), str) or not data[req]:
            raise RegistryError(f"{where}: {req!r} is required")
    where = f"{where} ({data['id']})"
    if data.get("state") not in (None, *STATES):
        raise RegistryError(f"{where}: state must be one of {', '.join(STATES)}")
    try:
        if data.get("affected"):
            torch_affected(data["affected"], "2.11.0")
        if data.get("fixed_in"):
            release(data["fixed_in"])
    except CorpusError as e:
        raise RegistryError(f"{where}: {e}") from None
    bug = KnownBug(id=data["id"], title=data["title"], issue=data.get("issue"), state=data.get("state"),
                   fix_pr=data.get("fix_pr"), fixed_in=data.get("fixed_in"), affected=data.get("affected"),
                   repro=data.get("repro"), buckets=_strs(data.get("buckets"), where + ".buckets"),
                   rules=_rules(data.get("match"), where), root_cause=data.get("root_cause", ""),
                   searched=_strs(data.get("searched"), where + ".searched"),
                   searched_on=data.get("searched_on"), notes=data.get("notes", ""),
                   related=_strs(data.get("related"), where + ".related"),
                   trigger=_trigger(data.get("trigger"), where), fix_probe=_fix_probe(data.get("fix_probe"), where))
    if not bug.buckets and not bug.rules:
        raise RegistryError(f"{where}: needs 'buckets' or 'match', or nothing can match it")
    return bug


class Registry:
    """The known bugs, matched against the torch version running now."""

    def __init__(self, bugs: list[KnownBug], torch_version: str, path: Path | None = None):
        self.bugs, self.torch, self.path = list(bugs), torch_version, path

    def applies(self, bug: KnownBug) -> bool:
        """The running torch can show this bug (not fixed in it, and within its affected range)."""
        if bug.fixed_in and _at_least(self.torch, bug.fixed_in):
            return False
        return torch_affected(bug.affected, self.torch)

    def match(self, ident: Identity) -> Match | None:
        """The entry for this finding's root cause; an identity seen before wins over a rule."""
        hits = [Match(b, "bucket") for b in self.bugs if ident.slug in b.buckets]
        ruled = []
        for b in self.bugs:
            r = next((r for r in b.rules if r.holds(ident)), None)
            if r is not None:
                ruled.append(Match(b, "rule", rule=r))
        # where several rules hold, the one that names the most of the finding decides (a zero-sign
        # rule on neg and CUDA over a rule on any clone and in-place write); between equals, one
        # naming the finding's culprit op (CPU 1506: a remainder by -inf, culprit inf_remainder,
        # was claimed by an equally specific softshrink rule, the program also holding a
        # softshrink; the culprit is where values first diverge, not always the cause, so it only
        # breaks ties); then file order
        culprit = _culprit_ops(ident)
        hits += sorted(ruled, key=lambda m: (-m.rule.specificity(), -m.rule.names_any(culprit)))
        live = [m for m in hits if self.applies(m.bug)]
        if live:
            rivals = tuple(dict.fromkeys(m.bug.id for m in live if m.how == "rule" and m.bug.id != live[0].bug.id))
            return replace(live[0], rivals=rivals) if live[0].how == "rule" else live[0]
        return Match(hits[0].bug, hits[0].how, regression=True, rule=hits[0].rule) if hits else None

    def fix_candidates(self, stage: str) -> list[KnownBug]:
        """Entries with a fix probe that could explain a finding of this stage, whatever its
        symptom (a root cause comes back as another symptom: #195451 as an aliasing output, then
        as an input's changed shape): the running torch can show them, and their fix patches
        that stage. Their probes ask whether the fix closes the finding."""
        return [b for b in self.bugs if b.fix_probe and self.applies(b) and could_close(b.fix_probe, stage)]

    def get(self, bug_id: str) -> KnownBug | None:
        return next((b for b in self.bugs if b.id == bug_id), None)


def settled(match: Match) -> bool:
    """The identity is certain before minimisation: the bucket was seen before, or a rule on a
    raised exception's message claimed it, or a rule whose signature alone names the cause (no
    ops: a changed torch global), or a pinned rule (``Rule.pinned``) no other entry's rule
    contests; a silent finding's unminimised ops prove little under a looser rule."""
    from fuzzcomp.base.symptoms import VALUE
    rule = match.rule or match.bug.rule
    if match.how == "bucket" or rule is None:
        return True
    if match.contested:  # another entry's rule holds too, even on a raised message (CPU 1508:
        return False     # one assertion message, an in-place view op's bug or #198095's)
    if rule.pinned():
        return True
    if rule.label_check or rule.signature is None:
        return False
    # a raised message, or a signature that alone names the cause (a rule with no ops: "torch
    # globals: default_dtype" can only come from the program changing that global)
    return not (set(rule.symptoms or VALUE) & set(VALUE)) or not (rule.ops_all or rule.ops_any)


def label(match: Match | None):
    """A bucket's ``known`` field: False, or the entry with its link and the next step."""
    if match is None or match.regression:
        return False
    b = match.bug
    return {"id": b.id, "title": b.title, "issue": b.issue, "state": b.state, "fix_pr": b.fix_pr,
            "fixed_in": b.fixed_in, "repro": b.repro, "matched_by": match.how, "advice": b.advice()}


def load_registry(path: Path, torch_version: str) -> Registry:
    path = Path(path)
    if not path.exists():
        return Registry([], torch_version, path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RegistryError(f"{path} cannot be read: {type(e).__name__}: {e}") from None
    bugs_json = data.get("bugs") if isinstance(data, dict) else None
    if not isinstance(bugs_json, list):
        raise RegistryError(f"{path}: expected an object with a 'bugs' list")
    bugs = [entry_from_json(e, f"{path.name}: bugs[{i}]") for i, e in enumerate(bugs_json)]
    ids = [b.id for b in bugs]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise RegistryError(f"{path}: id {dup!r} appears twice: one entry per root cause")
    return Registry(bugs, torch_version, path)


def _at_least(version: str, floor: str) -> bool:
    have, want = release(version), release(floor)
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) >= want + (0,) * (width - len(want))


#: what a rule can name beside ops: ``input:alias`` (an input is a view of another input),
#: ``input:expanded`` (a tensor input with stride 0: expanded from size 1), ``input:0d-float64``
#: (a 0-dim float64 tensor input), ``input:written`` (the function writes in place into an
#: input, directly or through a view of it) and ``resume:written`` (it writes in place, after a
#: graph break, a value computed before it: an input of the resume graph, ``resume_writes``)
def input_markers(program) -> set[str]:
    out = {"input:alias"} if any(i.kind == "alias" for i in program.inputs) else set()
    if any(i.kind == "alias" and i.view.endswith("transposed") for i in program.inputs):
        out.add("input:alias-transposed")
    if any(i.kind == "alias" and i.view.endswith("offset") for i in program.inputs):
        out.add("input:alias-offset")
    tensors = [i for i in program.inputs if i.kind == "tensor"]
    if any(i.layout == "expanded" for i in tensors):
        out.add("input:expanded")
    if any(i.type.rank == 0 and i.type.dtype == "float64" for i in tensors):
        out.add("input:0d-float64")
    if any(i.special for i in program.inputs):  # salted with NaN, +-inf, -0.0, huge or tiny values
        out.add("input:special")
    if _writes_an_input(program):
        out.add("input:written")
    if resume_writes(program):
        out.add("resume:written")
    if any(getattr(h, "nested", False) for h in program.helpers):  # torch.compiler.nested_compile_region
        out.add("region:nested")
    return out


def input_writes(program) -> list:
    """The in-place statements of the main body (at any depth, in order) that write a graph
    input or a view of one: an argument, a module's parameter or buffer (``self.*``), a tensor
    global: what ``input:written`` names, and what a knock-out of it deletes. (Module state is a
    graph input too: H200 seed 1504's buffer update, recomputed in backward after the forward
    wrote it, was refuted as its entry's bug because only arguments counted.)"""
    from fuzzcomp.generators.ir import Assign, Mutate, Ref, walk
    out = []
    names = {i.name for i in program.inputs} | {g.name for g in program.globals if g.kind == "tensor"}

    def state(name: str) -> bool:
        return name in names or name.startswith("self.")
    for st in walk(program.body):
        if isinstance(st, Assign) and st.op in VIEW_OPS and any(
                isinstance(a, Ref) and state(a.name) for a in st.args[:1]):
            names.add(st.out)
        elif isinstance(st, Mutate) and state(st.target):
            out.append(st)
    return out


#: what Dynamo breaks the graph at in a statement (an ``if`` on data breaks it too)
_BREAKS = (".item()", ".tolist()", "graph_break(", "print(")


def resume_writes(program) -> list:
    """The in-place statements of the main body that write a value the body computed before a
    graph break (an ``if`` on tensor data, ``.item()``, ``.tolist()``, ``print``), or a view of
    one, after that break: in the resume graph that value is a graph input written in place,
    what ``resume:written`` names (CPU 1512's ``v5[::2].sin_()`` after a ``.item()``, the crash
    form of remat-reads-mutated-input). Inputs and module state are ``input_writes``' business."""
    from fuzzcomp.generators.ir import Assign, CallFn, CondOp, DataCond, If, Mutate, Ref, walk
    graph_of, root, out, graph = {}, {}, [], 0
    for st in walk(program.body):
        if isinstance(st, If) and isinstance(st.cond, DataCond):
            graph += 1
            continue
        if isinstance(st, Assign) and st.op in VIEW_OPS and any(isinstance(a, Ref) for a in st.args[:1]):
            root[st.out] = root.get(st.args[0].name, st.args[0].name)
        elif isinstance(st, (Assign, CallFn, CondOp)):
            root.pop(st.out, None)
            graph_of[st.out] = graph  # (re)bound in this graph
        if isinstance(st, Mutate) and graph_of.get(root.get(st.target, st.target), graph) < graph:
            out.append(st)
        if isinstance(st, (Assign, Mutate)) and any(b in st.template for b in _BREAKS):
            graph += 1
    return out


def _writes_an_input(program) -> bool:
    """Some in-place statement of the main body writes an input or a view of one (a root cause
    such as "backward recomputes a read of an input the forward overwrote" needs exactly that)."""
    return bool(input_writes(program))


def identity(key: BucketKey, program, device: str) -> Identity:
    """A finding's identity for matching: its bucket, the op set of its program and its input
    markers (``input_markers``)."""
    return Identity(key.slug(), key.symptom, key.stage, key.signature,
                    frozenset(op_set(program) | input_markers(program)), device)


def case_identity(key: BucketKey, case) -> Identity:
    """``identity`` of the statements ``case``'s calls run (``taken_program``: a branch no call
    takes is no part of what the compiler got wrong)."""
    return identity(key, taken_program(case), case.compile.device)


def claim(key: BucketKey, case, torch_version: str | None = None) -> Match | None:
    """The registry entry that claims a finding of ``case``, None when it is new: asked of the
    statements its calls run (``taken_program``: a branch no call takes is no part of it). The registry
    holds torch's bugs: a finding of a custom backend (``module:function``, a planted fault or
    the user's own) is never one of them, and one outside an entry's torch range is news.
    ``torch_version``: the torch the finding was made with (default: the running one)."""
    if ":" in case.compile.backend:
        return None
    m = default_registry(torch_version).match(case_identity(key, case))
    return None if m is None or m.regression else m


def agreement(bug: KnownBug, status: str, torch_version: str | None, slug: str) -> dict:
    """Do a recheck's answer (``fixed`` / ``still-shows``) under ``torch_version`` and the entry's
    ``fixed_in`` say the same? The hint says how to make them agree."""
    out = {"id": bug.id, "fixed_in": bug.fixed_in, "agrees": True, "hint": ""}
    if torch_version is None or status not in ("fixed", "still-shows"):
        return out
    version = torch_version.split("+")[0]
    says_fixed = bool(bug.fixed_in) and _at_least(version, bug.fixed_in)
    if status == "still-shows" and says_fixed:
        out.update(agrees=False, hint=f"the registry says fixed in {bug.fixed_in}, yet it shows on {version}: "
                   "a regression, or an entry to correct")
    elif status == "fixed" and not says_fixed:
        out.update(agrees=False, hint=f"fixed on {version}; the registry says "
                   + (f"fixed in {bug.fixed_in}" if bug.fixed_in else "nothing of a fix")
                   + f": `fuzzcomp link {slug} --id {bug.id} --fixed-in {version}` records it")
    return out


def _corpus_entries(corpus_dir: Path, named: set[str]) -> list[KnownBug]:
    """Open corpus files no registry entry names (as repro or bucket): known by their bucket."""
    out = []
    for e in load_known(corpus_dir):
        if e.source in named or e.bucket in named:
            continue
        issue = e.issue if e.issue not in (None, "none") else None
        out.append(KnownBug(id=f"corpus:{e.source}", title=f"the corpus repro {e.source}", issue=issue,
                            affected=e.torch, repro=e.source, buckets=(e.bucket,),
                            notes="known from the corpus file's metadata alone"))
    return out


_CACHE: dict = {}


def default_registry(torch_version: str | None = None) -> Registry:
    """The registry of the corpus folder (``$FUZZCOMP_CORPUS`` or the checkout's corpus/), plus
    its open corpus files, for the running torch; loaded once per process. A broken file warns
    and counts as empty: a campaign never stops for it (``fuzzcomp link`` refuses to write it)."""
    import torch
    version = torch_version or torch.__version__
    corpus = default_corpus_dir()
    key = (str(corpus), version)
    if key not in _CACHE:
        try:
            reg = load_registry(corpus / REGISTRY_NAME, version)
            named = {b.repro for b in reg.bugs if b.repro} | {s for b in reg.bugs for s in b.buckets}
            reg.bugs += _corpus_entries(corpus, named)
        except (RegistryError, CorpusError) as e:
            import sys
            print(f"fuzzcomp: warning: the known-bug registry is ignored: {e}", file=sys.stderr)
            reg = Registry([], version, corpus / REGISTRY_NAME)
        _CACHE[key] = reg
    return _CACHE[key]


def forget_cache() -> None:
    """Drop the loaded registries (after ``fuzzcomp link`` wrote one)."""
    _CACHE.clear()


def corpus_issue_fixes(corpus_dir: Path, reg: Registry) -> list[tuple[Path, str, str]]:
    """[(corpus file, its ``issue=``, the issue its registry entry names)] for each file whose
    metadata disagrees with the entry that names it (as ``repro``, or by a listed bucket): the
    corpus and the registry say the same upstream issue, and a file of an entry not reported
    upstream says ``none``. A file no entry names keeps its own."""
    out = []
    for path in sorted(Path(corpus_dir).glob("*.py")):
        meta = parse_meta(path.read_text(errors="replace")) if path.name != "conftest.py" else None
        if not meta:
            continue
        bug = next((b for b in reg.bugs if not b.id.startswith("corpus:") and b.repro
                    and b.repro.split()[0] == path.name), None) \
            or next((b for b in reg.bugs if not b.id.startswith("corpus:") and meta.get("bucket") in b.buckets),
                    None)
        want = (bug.issue or "none") if bug is not None else None
        if want is not None and meta.get("issue", "none") != want:
            out.append((path, meta.get("issue", "none"), want))
    return out


def sync_corpus_issues(corpus_dir: Path, reg: Registry) -> list[Path]:
    """Rewrite the metadata line of each corpus file ``corpus_issue_fixes`` names (atomically,
    nothing else in the file changes). Returns the files rewritten."""
    done = []
    for path, _old, want in corpus_issue_fixes(corpus_dir, reg):
        lines = path.read_text().splitlines(keepends=True)
        i = next(i for i, line in enumerate(lines[:5]) if line.startswith(META_PREFIX))
        head = re.sub(r"\s+issue=\S*", "", lines[i].rstrip("\n"))
        lines[i] = f"{head} issue={want}\n"
        write_atomic(path, "".join(lines))
        done.append(path)
    return done


def link_bucket(path: Path, *, slug: str, title: str, issue: str | None, state: str | None = None,
                fixed_in: str | None = None, bug_id: str | None = None, pin: bool = True) -> tuple[str, bool]:
    """Record that bucket ``slug`` is the bug of ``issue`` (or entry ``bug_id``): added to that
    entry's buckets, or a new entry. Returns (entry id, created?). The file is rewritten atomically;
    entries keep their order and every field they had. ``pin=False`` updates the entry's issue,
    state and fixed release and leaves its buckets alone (a rule already claims the finding)."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"bugs": []}
    bugs = data.setdefault("bugs", [])
    target = next((e for e in bugs if (bug_id and e.get("id") == bug_id)
                   or (issue and not bug_id and e.get("issue") == issue)), None)
    if bug_id and target is None:
        raise RegistryError(f"no entry {bug_id!r} in {path}")
    created = target is None
    if created:
        target = {"id": slug, "title": title, "issue": issue, "state": state or ("open" if issue else None),
                  "buckets": []}
        bugs.append(target)
    if pin and slug not in target.setdefault("buckets", []):
        target["buckets"].append(slug)
    if issue and not target.get("issue"):
        target["issue"] = issue
    if state:
        target["state"] = state
    if fixed_in:
        target["fixed_in"] = fixed_in
    entry_from_json(target, f"{path.name}: {target['id']}")   # never write what load would refuse
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return target["id"], created
