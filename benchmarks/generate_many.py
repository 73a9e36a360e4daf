"""Generate many seeds (generation only: nothing is run) and count what raised.

    python benchmarks/generate_many.py --seeds 100000 [--first 0] [--jobs 1] [--force CAP ...]

Each seed is generated, emitted to source, compiled to Python bytecode (a syntax check, not
torch.compile) and read for its features and capabilities, as ``fuzzcomp stats`` does. Prints the
seeds, the wall time, the rate and every seed that raised (its exception), then exits 1 if any
did. ``tests/test_generate_many.py`` runs the same loop over fewer seeds as the regression.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
import traceback

from fuzzcomp.generators import GenConfig, emit, generate
from fuzzcomp.generators.capabilities import has
from fuzzcomp.generators.features import features


def one(seed: int, config: GenConfig) -> str | None:
    """None when the seed generates cleanly, else its exception in one line."""
    try:
        case = generate(seed, config)
        compile(emit(case.program), f"<seed {seed}>", "exec")
        has(case, features(case))
    except Exception as e:  # noqa: BLE001  (the count is the point: every failure, whatever it is)
        where = traceback.extract_tb(e.__traceback__)[-1]
        return f"{type(e).__name__}: {e} ({where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
    return None


def _chunk(args) -> list[tuple[int, str]]:
    first, n, force = args
    config = GenConfig(force=force)
    return [(s, err) for s in range(first, first + n) if (err := one(s, config)) is not None]


def run(seeds: int, first: int = 0, jobs: int = 1, force: tuple = ()) -> tuple[float, list[tuple[int, str]]]:
    start = time.perf_counter()
    step = 1000
    chunks = [(s, min(step, first + seeds - s), force) for s in range(first, first + seeds, step)]
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            errors = [e for part in pool.imap(_chunk, chunks) for e in part]
    else:
        errors = [e for c in chunks for e in _chunk(c)]
    return time.perf_counter() - start, errors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100_000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--force", action="append", default=[], help="a capability every case gets")
    args = ap.parse_args(argv)
    secs, errors = run(args.seeds, args.first, args.jobs, tuple(args.force))
    print(f"seeds {args.first}..{args.first + args.seeds - 1}: {args.seeds} generated in {secs:.1f} s "
          f"({args.seeds / secs:.0f} seeds/s, {args.jobs} process(es)); errors: {len(errors)}")
    for seed, err in errors[:50]:
        print(f"  seed {seed}: {err}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
