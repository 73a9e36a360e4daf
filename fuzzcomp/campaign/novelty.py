"""Novelty steering: generation spends less where bugs are already known.

Contract: ``Novelty(mode, base_config, root)``; ``config()`` is the GenConfig new cases are drawn
with. With mode "off" it is the base config and nothing is learned or written. With mode "on":

- A *trigger* is what a bug's minimised program needs: its distinctive generator ops (plumbing
  such as clone or reshape is never lowered), its reach capabilities (``generators.reach``) and
  its structure kinds (``generators.structure.KINDS``).
- Triggers come from the known-bug registry (an entry's ``trigger`` field, else its rule's op
  globs where each names at most ``NARROW`` generator ops) and from this campaign
  (``learn(slug, case, why)``: the minimised program of a confirmed new bucket, or of a known
  one whose label was checked).
- Each element in ``n`` triggers has its draw weight multiplied by ``max(FLOOR, LOWER ** n)``:
  the next case rarely draws one bug's trigger again (a trigger of two elements: ``LOWER**2`` of
  its old rate), yet never stops drawing those ops, since other bugs live near them.
- ``report()`` says what is lowered and why (summary.json, report.html, ``fuzzcomp stats``);
  it is written to ``OUT/novelty.json`` at each change. ``load(store)`` rebuilds the campaign's
  own triggers from its findings' minimised programs, so ``--resume`` continues with them.
"""
from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from pathlib import Path

from fuzzcomp.findings.known import default_registry, op_matches
from fuzzcomp.findings.store import case_from_json, write_json
from fuzzcomp.generators.edges import EDGE_CAPABILITIES
from fuzzcomp.generators.features import features
from fuzzcomp.generators.ir import op_names
from fuzzcomp.generators.reach import ARG_CAPABILITIES, CAPABILITIES, TAIL_CAPABILITIES, reach_features, weights_of
from fuzzcomp.generators.registry import REGISTRY
from fuzzcomp.generators.structure import KINDS

MODES = ("off", "on")
LOWER = 0.25   # one trigger: a quarter of the weight
FLOOR = LOWER ** 2  # never lower than this: bugs live near known ones
NARROW = 8     # a rule glob naming more generator ops than this says little about the trigger
NOVELTY_FILE = "novelty.json"

#: ops every program uses to move values around: lowering them would lower everything
PLUMBING = frozenset({
    "Tensor.clone", "Tensor.contiguous", "Tensor.view", "Tensor.reshape", "torch.reshape", "Tensor.flatten",
    "torch.flatten", "Tensor.to", "Tensor.float", "Tensor.detach", "Tensor.expand", "Tensor.permute",
    "Tensor.transpose", "Tensor.t", "torch.cat", "torch.stack", "Tensor.unsqueeze", "Tensor.squeeze",
    "Tensor.__getitem__", "torch.add", "torch.mul", "Tensor.sum", "torch.sum",
})
_OP_NAMES = tuple(op.name for op in REGISTRY)
_OP_SET = frozenset(_OP_NAMES)
PARTS = ("ops", "caps", "kinds")
_CAP_OF = {  # reach feature -> the capability that draws it
    "caller_": "caller", "special_inputs": "special", "const_graph": "constants", "nn_": "nnlib",
    "set_grad_enabled_inside": "gstate", "deterministic_inside": "gstate", "default_dtype_inside": "gstate",
    "global_rebound": "gstate", "scalar_": "scalars", "dd_": "scalars", "capture_": "scalars",
    **{name: name for name in ARG_CAPABILITIES},  # argument capabilities: the feature is their name
    **{name: name for name in TAIL_CAPABILITIES},  # and the tail forms' too
    **{name: name for name in EDGE_CAPABILITIES},  # and the edges'
}
_KIND_OF = {  # structural feature -> the structure kind that builds it
    "if_size": "if_size", "if_data_any": "if_data", "if_data_item": "if_data", "if_scalar": "if_scalar",
    "torch_cond": "cond", "for_range": "loop", "for_range_scalar": "loop", "for_tuple": "loop",
    "for_container": "loop", "while_size": "while", "helper_call": "helper", "submodule": "submodule",
    "autocast": "autocast", "autocast_nested_off": "autocast", "early_return": "early_return",
}


class NoveltyError(ValueError):
    pass


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise NoveltyError(f"--novelty must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


@dataclasses.dataclass(frozen=True)
class Trigger:
    ops: frozenset = frozenset()    # generator op names
    caps: frozenset = frozenset()   # reach capabilities
    kinds: frozenset = frozenset()  # structure kinds

    def __bool__(self) -> bool:
        return bool(self.ops or self.caps or self.kinds)


def resolve_ops(globs) -> frozenset:
    """Generator op names the globs match."""
    return frozenset(n for n in _OP_NAMES if any(op_matches(n, g) for g in globs))


def trigger_of_case(case) -> Trigger:
    """The trigger of one (minimised) program, read from its IR."""
    ops = frozenset(op_names(case.program)) & _OP_SET - PLUMBING
    feats = features(case)
    caps = {cap for f in reach_features(case) | (feats & set(TAIL_CAPABILITIES) | feats & set(EDGE_CAPABILITIES))
            for key, cap in _CAP_OF.items()
            if f == key or (key.endswith("_") and f.startswith(key))}
    kinds = {_KIND_OF[f] for f in feats if f in _KIND_OF}
    return Trigger(ops, frozenset(caps), frozenset(kinds))


def _on_device(bug, device: str) -> bool:
    """An entry whose every rule names another device (a CUDA codegen bug) steers nothing here."""
    devices = {r.device for r in bug.rules}
    return not bug.rules or None in devices or any(str(device).startswith(d) for d in devices)


def trigger_of_entry(bug) -> Trigger:
    """A registry entry's trigger: its own ``trigger`` field, else its rule's narrow op globs."""
    t = getattr(bug, "trigger", None) or {}
    if t:
        return Trigger(resolve_ops(t.get("ops", ())), frozenset(t.get("caps", ())), frozenset(t.get("kinds", ())))
    ops = set()
    for g in (g for rule in bug.rules for g in tuple(rule.ops_any) + tuple(rule.ops_all)):
        hit = resolve_ops([g])
        if len(hit) <= NARROW:
            ops |= hit
    return Trigger(frozenset(ops) - PLUMBING)


class Novelty:
    def __init__(self, mode: str, base_config, root: Path | None = None):
        self.mode = check_mode(mode)
        self.base = base_config
        self.root = Path(root) if root is not None else None
        self.triggers: dict[str, Trigger] = {}   # why ("registry: ID" / "campaign: SLUG") -> trigger
        self._learned: dict[str, str] = {}        # campaign bucket slug -> why its trigger was learned
        self._config = base_config
        if self.on:
            reg = default_registry()
            for bug in reg.bugs:  # a bug fixed in the running torch, or of another device, is not found here
                t = trigger_of_entry(bug) if reg.applies(bug) and _on_device(bug, base_config.device) else Trigger()
                if t:
                    self.triggers[f"registry: {bug.id}"] = t
            self._rebuild()

    @property
    def on(self) -> bool:
        return self.mode == "on"

    def config(self):
        return self._config

    def learn(self, slug: str, case, why: str) -> bool:
        """Add the trigger of a bucket's minimised program; True when the config changed."""
        if not self.on or f"campaign: {slug}" in self.triggers:
            return False
        t = trigger_of_case(case)
        if not t:
            return False
        self.triggers[f"campaign: {slug}"] = t
        self._learned[slug] = why
        self._rebuild()
        self.save()
        return True

    def load(self, store) -> None:
        """On --resume: the triggers of the findings this campaign already minimised."""
        if not self.on:
            return
        for fid in store.finding_ids():
            st = store.status(fid)
            if st is None:
                continue
            try:
                mini = json.loads(store.path(fid, "minimized.json").read_text())
            except (OSError, ValueError):
                continue
            slug = st.get("bucket")
            why = worth_learning(st)
            if slug and why:
                self.learn(slug, case_from_json(mini["case"]), why)

    # ---- the config ------------------------------------------------------------------------------
    def _reasons(self) -> dict[str, dict[str, list[str]]]:
        """part ("ops", "caps", "kinds") -> element -> the triggers that name it."""
        out: dict[str, dict[str, list[str]]] = {part: defaultdict(list) for part in PARTS}
        for reason, t in sorted(self.triggers.items()):
            for part in PARTS:
                for name in getattr(t, part):
                    out[part][name].append(reason)
        return out

    def factors(self) -> dict[str, dict[str, float]]:
        return {part: {n: max(FLOOR, LOWER ** len(r)) for n, r in sorted(names.items())}
                for part, names in self._reasons().items()}

    def _rebuild(self) -> None:
        f = self.factors()
        base_caps = weights_of(self.base.reach_weights)
        caps = tuple((n, base_caps[n] * f["caps"].get(n, 1.0)) for n in (*CAPABILITIES, *ARG_CAPABILITIES,
                                                                                   *TAIL_CAPABILITIES,
                                                                                   *EDGE_CAPABILITIES)
                     if n in f["caps"])
        kept = tuple((n, w) for n, w in self.base.reach_weights if n not in f["caps"])
        scale = dict(self.base.op_scale)
        ops = tuple(sorted((n, scale.get(n, 1.0) * x) for n, x in f["ops"].items()))
        ops += tuple((n, x) for n, x in sorted(scale.items()) if n not in f["ops"])
        kinds = tuple((k, x) for k, x in f["kinds"].items() if k in KINDS)
        self._config = dataclasses.replace(self.base, op_scale=ops, reach_weights=kept + caps, kind_scale=kinds)

    # ---- what it did -------------------------------------------------------------------------------
    def report(self) -> dict:
        if not self.on:
            return {"mode": "off"}
        f = self.factors()
        lowered = sorted(({"what": f"{part[:-1]} {name}", "factor": round(f[part][name], 4), "why": r}
                          for part, names in self._reasons().items() for name, r in names.items()),
                         key=lambda row: row["what"])
        return {"mode": "on", "lower": LOWER, "floor": FLOOR,
                "triggers": {r: {p: sorted(getattr(t, p)) for p in PARTS}
                             for r, t in sorted(self.triggers.items())},
                "campaign_learned": sorted(self._learned.items()), "lowered": lowered}

    def save(self) -> None:
        if self.on and self.root is not None:
            write_json(self.root / NOVELTY_FILE, self.report())


def worth_learning(status: dict) -> str | None:
    """Why a minimised finding's trigger steers generation away: a confirmed new bug, or a known one."""
    if isinstance(status.get("known"), dict):
        return f"known: {status['known'].get('id')}"
    if status.get("confirmed"):
        return "confirmed in this campaign"
    return None


def hit(t: Trigger, case_t: Trigger) -> bool:
    """A program draws a trigger: one of its ops (if it names ops), and all its capabilities and kinds."""
    return (not t.ops or bool(t.ops & case_t.ops)) and t.caps <= case_t.caps and t.kinds <= case_t.kinds


def steering_table(novelty: Novelty, seeds) -> list[str]:
    """Lines for ``fuzzcomp stats --novelty``: what is lowered and why, then the share of programs
    that draw each trigger, plain against steered, over the same seeds."""
    from fuzzcomp.generators import generate
    rep = novelty.report()
    lines = [f"novelty steering: {len(novelty.triggers)} triggers, weight x{LOWER} per trigger "
             f"(floor x{FLOOR:g})", "  lowered:"]
    lines += [f"    x{row['factor']:<7g} {row['what']:<44} {'; '.join(row['why'])}" for row in rep["lowered"]]
    seeds = list(seeds)
    plain = [trigger_of_case(generate(s, novelty.base)) for s in seeds]
    steered = [trigger_of_case(generate(s, novelty.config())) for s in seeds]
    lines.append(f"  programs drawing each trigger, over {len(seeds)} seeds: plain -> steered")
    for why, t in sorted(novelty.triggers.items()):
        a, b = sum(hit(t, c) for c in plain), sum(hit(t, c) for c in steered)
        lines.append(f"    {100 * a / len(seeds):5.1f}% -> {100 * b / len(seeds):5.1f}%  {why}")
    return lines
