"""How often the short repro form can express a case, per symptom, and why not where it cannot.

    python benchmarks/short_coverage.py --seeds 200            # generated cases, not minimised
    python benchmarks/short_coverage.py --campaign fuzz-out     # a campaign's minimised findings

For generated cases every symptom is tried on every case (the case did not really fail: this
measures what the renderer can say, not whether the file reproduces; ``repro_sizes.py`` measures
that on real findings). Generated cases are not minimised, so they have more calls, inputs and
statements than a finding's case: read the figures as a lower bound. Each case runs eager once
(the oracle settings a repro is rendered with).
"""
import argparse
import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path


def _specs_generated(seeds):
    from fuzzcomp.generators.build import generate
    from fuzzcomp.render.repro import short_spec
    from fuzzcomp.findings.triage import BucketKey
    for seed in seeds:
        try:
            yield short_spec(generate(seed), BucketKey("numeric", "inductor", "x"), "x")
        except Exception:  # noqa: BLE001 - an eager failure: the campaign would not file it
            yield None


def _specs_campaign(folder):
    import fuzzcomp.findings.store as st
    from fuzzcomp.render.repro import short_spec
    from fuzzcomp.findings.triage import BucketKey
    for d in sorted(Path(folder, "findings").glob("*/finding.json")):
        f = json.loads(d.read_text())
        m = d.parent / "minimized.json"
        case = st.case_from_json(json.loads(m.read_text())["case"] if m.exists() else f["case"])
        key = BucketKey.from_json(f["bucket"])
        yield key, short_spec(case, key, key.signature)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--campaign", help="a campaign folder: its findings' minimised cases")
    a = ap.parse_args(argv)
    from fuzzcomp.render.shortrepro import short_or_reason
    from fuzzcomp.oracles.verdict import SYMPTOMS
    why: dict = {s: Counter() for s in SYMPTOMS}
    ok: Counter = Counter()
    total: Counter = Counter()
    if a.campaign:
        for key, spec in _specs_campaign(a.campaign):
            text, reason = short_or_reason(spec)
            total[key.symptom] += 1
            ok[key.symptom] += text is not None
            if text is None:
                why[key.symptom][reason] += 1
    else:
        skipped = 0
        for spec in _specs_generated(range(a.first, a.first + a.seeds)):
            if spec is None:
                skipped += 1
                continue
            for sym in SYMPTOMS:
                text, reason = short_or_reason(dataclasses.replace(spec, symptom=sym, signature="x"))
                total[sym] += 1
                ok[sym] += text is not None
                if text is None:
                    why[sym][reason] += 1
        print(f"{a.seeds} seeds from {a.first}; {skipped} not rendered (eager failed)")
    print(f"{'symptom':14} {'short':>9}  why not (count)")
    for sym in SYMPTOMS:
        if total[sym]:
            reasons = "; ".join(f"{r} ({n})" for r, n in why[sym].most_common(4))
            print(f"{sym:14} {ok[sym]:4}/{total[sym]:<4}  {reasons}")
    print(f"{'all':14} {sum(ok.values()):4}/{sum(total.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
