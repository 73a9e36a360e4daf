"""Signal feedback for a campaign: keep programs that reach new compiler paths, and mutate them.

Contract: a campaign asks ``Feedback.case(index, seed)`` for each new case
and tells ``Feedback.done(index, valid, signals)`` what it showed (the
signals of ``fuzzcomp.run.compiler_signals``); ``done`` returns the extra fields for that
case's event. With ``mode="off"`` every case is the fresh ``generate(seed)``
and nothing else happens, so a blind campaign is unchanged.

With ``mode="on"``:
- A case whose finding opened a new bucket (new to the campaign and to the
  known-bug registry), or whose signals include one never seen before, or a
  pair of rare signals (each seen fewer than ``RARE`` times) never seen
  together, enters the seed pool with the full record of its choice stream.
  A case that only rediscovered a bug (known, or a bucket seen before) does
  not, and counts against the pool entry it was mutated from.
- Each new case is either fresh (``generate(seed)``, the very case a blind
  campaign runs at that index) or a mutant of a pool entry
  (``generators.mutate``), picked with weight on entries whose signals are
  still rare or that led to new bugs. Which of the two is a Thompson-sampling
  bandit over their reward (``reward_of``: 1 for a new bug, ``SIGNAL_REWARD``
  for new signals alone, 0 for a rediscovery), discounted so that it
  follows a campaign whose yield changes, with at least ``FLOOR`` of the
  cases on each arm, and each arm tried ``MIN_TRIES`` times first.
- Every decision draws from ``random.Random("<campaign seed>:<index>")``:
  given the pool, a case is deterministic, and its event records how to
  rebuild it: ``origin`` (arm, parent index, mutation seed, edits) and, for a
  mutant, ``choices``, the full choice record that
  ``generate_from_choices(choices, seed)`` turns back into the same Case.
  Findings store the case itself, so replay and minimisation need neither.
- The pool and the bandit live in ``OUT/pool.json`` (written atomically, at
  most every ``SAVE_EVERY_S`` seconds and at ``close``); signal counts are
  rebuilt from the event log, so ``--resume`` continues with both.

A guided campaign as a whole is not reproducible from its seed when cases
finish in a different order (jobs > 1): the pool depends on the order. Each
case is, from its event.
"""
from __future__ import annotations

import json
import random
import time
from collections import Counter
from itertools import combinations
from pathlib import Path

from fuzzcomp.generators import GenConfig, generate, generate_from_choices
from fuzzcomp.generators.mutate import mutant, recorded
from fuzzcomp.findings.store import write_json

MODES = ("off", "on")
RARE = 3              # a signal seen fewer times than this is rare
MAX_RARE_PAIRS = 10   # pairs are formed among a case's rarest signals only (bounded work)
POOL_MAX = 400
FLOOR = 0.1           # each arm gets at least this share of the cases
MIN_TRIES = 5         # each arm's first results before the bandit may judge it
DISCOUNT = 0.995      # per result: old yield fades, so the mix follows the campaign
SAVE_EVERY_S = 10.0
SIGNAL_REWARD = 0.5   # a case with new signals: half the reward of one that found a new bug
NEW_BUG_GAIN = 3      # a pool entry whose case (or child) found a new bug: worth 3 signal gains
POOL_FILE = "pool.json"


class FeedbackError(ValueError):
    pass


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise FeedbackError(f"--feedback must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


class Feedback:
    def __init__(self, mode: str, campaign_seed: int, gen_config, root: Path | None = None):
        self.mode = check_mode(mode)
        self.seed = campaign_seed
        self.gen_config = gen_config
        self.root = Path(root) if root is not None else None
        self.counts: Counter = Counter()
        self.pairs: set = set()
        self.pool: list[dict] = []
        self.arms = {"fresh": [1.0, 1.0], "mutate": [1.0, 1.0]}  # Beta(successes+1, failures+1)
        self.tries = {"fresh": 0, "mutate": 0}
        self.pending: dict[int, dict] = {}
        self._saved_at = 0.0
        self._dirty = False

    @property
    def on(self) -> bool:
        return self.mode == "on"

    # ---- resume -------------------------------------------------------------------------
    def load(self, events) -> None:
        """Signal counts from the event log; the pool and the bandit from pool.json."""
        for ev in events:
            if ev.get("event") == "case" and ev.get("valid") and ev.get("signals"):
                self._learn(ev["signals"])
        path = self.root / POOL_FILE if self.root is not None else None
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
                self.pool = [dict(e) for e in data.get("pool", [])]
                self.arms.update({k: list(v) for k, v in data.get("arms", {}).items() if k in self.arms})
                self.tries.update({k: int(v) for k, v in data.get("tries", {}).items() if k in self.tries})
            except (ValueError, TypeError, AttributeError) as e:
                raise FeedbackError(f"{path} is unreadable ({e}); move it away to start a new pool") from None

    # ---- one case -----------------------------------------------------------------------
    def case(self, index: int, seed: int):
        """The Case to run at ``index`` (``seed``: the blind campaign's seed for it)."""
        if not self.on:
            return generate(seed, self.gen_config)
        rng = random.Random(f"{self.seed}:{index}")
        arm = self._arm(rng)
        if arm == "fresh":
            case, record, ranges = recorded(seed, self.gen_config)
            self.pending[index] = {"arm": arm, "record": record, "ranges": ranges, "seed": seed}
            return case
        parent = self._pick(rng)
        donor = self.pool[rng.randrange(len(self.pool))]["record"] if len(self.pool) > 1 else None
        mseed = rng.randrange(2 ** 31)
        m = mutant(parent["record"], parent["ranges"], mseed, seed, self.gen_config, donor=donor)
        parent["picks"] = parent.get("picks", 0) + 1
        self.pending[index] = {"arm": arm, "record": m.record, "ranges": m.ranges, "seed": seed,
                               "parent": parent["index"], "mutation_seed": mseed, "edits": list(m.ops)}
        return m.case

    def done(self, index: int, valid: bool, signals, found: str | None = None) -> dict:
        """Learn from a finished case; the fields to add to its event. ``found``: the bucket of
        its finding was "new" (to the campaign and the registry), "known", or "seen" before."""
        p = self.pending.pop(index, None)
        signals = list(signals or ()) if valid else []
        new, pairs = self._learn(signals)
        if p is None:
            return {}
        reward = reward_of(found, bool(new or pairs))
        for arm, ab in self.arms.items():
            ab[0], ab[1] = 1.0 + (ab[0] - 1.0) * DISCOUNT, 1.0 + (ab[1] - 1.0) * DISCOUNT
        self.arms[p["arm"]][0] += reward
        self.arms[p["arm"]][1] += 1.0 - reward
        self.tries[p["arm"]] += 1
        if reward > 0:
            self._add({"index": index, "seed": p["seed"], "record": list(p["record"]),
                       "ranges": list(p["ranges"]), "signals": sorted(set(new) | _flat(pairs)), "picks": 0,
                       **({"new_bug": True} if found == "new" else {})})
        if "parent" in p and (reward > 0 or found in ("known", "seen")):
            for e in self.pool:
                if e["index"] == p["parent"]:
                    if reward > 0:  # a child that found a new bug counts as several that found signals
                        e["gains"] = e.get("gains", 0) + (NEW_BUG_GAIN if found == "new" else 1)
                    else:           # its children rediscover what is known: pick it less
                        e["rediscoveries"] = e.get("rediscoveries", 0) + 1
        self._maybe_save()
        origin = {k: p[k] for k in ("arm", "parent", "mutation_seed", "edits") if k in p}
        extra = {"origin": origin, "new_signals": len(new), "new_pairs": len(pairs)}
        if p["arm"] == "mutate":
            extra["choices"] = list(p["record"])
        return extra

    def close(self) -> None:
        if self.on and self._dirty:
            self._save()

    # ---- internals ------------------------------------------------------------------------
    def _learn(self, signals) -> tuple[list[str], set]:
        new = [s for s in signals if self.counts[s] == 0]
        rare = sorted((s for s in signals if self.counts[s] < RARE), key=lambda s: (self.counts[s], s))
        fresh_pairs = {pair for pair in combinations(sorted(rare[:MAX_RARE_PAIRS]), 2) if pair not in self.pairs}
        self.pairs |= fresh_pairs
        self.counts.update(set(signals))
        return new, fresh_pairs

    def _arm(self, rng: random.Random) -> str:
        if not self.pool:
            return "fresh"
        untried = [arm for arm in sorted(self.tries) if self.tries[arm] < MIN_TRIES]
        if untried:
            return rng.choice(untried)
        if rng.random() < 2 * FLOOR:
            return rng.choice(("fresh", "mutate"))
        draws = {arm: rng.betavariate(a, b) for arm, (a, b) in sorted(self.arms.items())}
        return max(sorted(draws), key=lambda arm: draws[arm])

    def _score(self, e: dict) -> float:
        rarity = sum(1.0 / max(1, self.counts[s]) for s in e.get("signals", ()))
        bug = NEW_BUG_GAIN if e.get("new_bug") else 0
        return (0.05 + rarity + bug) * (1 + e.get("gains", 0)) / (1 + e.get("picks", 0)) ** 0.5 \
            / (1 + e.get("rediscoveries", 0))

    def _pick(self, rng: random.Random) -> dict:
        weights = [self._score(e) for e in self.pool]
        return rng.choices(self.pool, weights=weights)[0]

    def _add(self, entry: dict) -> None:
        self.pool.append(entry)
        if len(self.pool) > POOL_MAX:
            self.pool.remove(min(self.pool, key=self._score))
        self._dirty = True

    def _maybe_save(self) -> None:
        if self._dirty and time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self._save()

    def _save(self) -> None:
        if self.root is None:
            return
        write_json(self.root / POOL_FILE, {"version": 1, "pool": self.pool, "arms": self.arms, "tries": self.tries,
                                           "signals_seen": len(self.counts)})
        self._saved_at = time.monotonic()
        self._dirty = False


def reward_of(found: str | None, signal_gain: bool) -> float:
    """A case's reward for the bandit: a new bug is the main one, new compiler signals second,
    and a rediscovered bug (known, or a bucket seen before) earns nothing for its signals."""
    if found == "new":
        return 1.0
    if found in ("known", "seen"):
        return 0.0
    return SIGNAL_REWARD if signal_gain else 0.0


def _flat(pairs) -> set:
    return {s for pair in pairs for s in pair}


def regenerate(event: dict, gen_config=None):
    """The Case a case event describes (fresh: its seed; mutant: its recorded choices)."""
    cfg = gen_config or GenConfig()
    if event.get("choices"):
        return generate_from_choices(list(event["choices"]), event["seed"], cfg)
    return generate(event["seed"], cfg)
