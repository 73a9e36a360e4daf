"""Repro sizes and the share that reproduce alone, for a campaign folder or the corpus.

    python benchmarks/repro_sizes.py fuzz-out        # a campaign: findings/*/repro.py + status.json
    python benchmarks/repro_sizes.py corpus          # the corpus files

Lines are what a person reads: the trailing ``# fuzzcomp-case:`` line is not counted. For a
campaign it also prints how many repros are the short form, how many fell back to the long form
(the short one did not reproduce in a fresh process) and how many were confirmed.
"""
import json
import statistics
import sys
from pathlib import Path

CASE_PREFIX = "# fuzzcomp-case: "


def lines(path: Path) -> int:
    return sum(not ln.startswith(CASE_PREFIX) for ln in path.read_text(errors="replace").splitlines())


def main(folder: str) -> int:
    root = Path(folder)
    if (root / "findings").is_dir():
        rows = []
        for d in sorted((root / "findings").iterdir()):
            st = d / "status.json"
            if (d / "repro.py").exists() and st.exists():
                s = json.loads(st.read_text())
                rows.append((lines(d / "repro.py"), s.get("repro_form"), s.get("confirmed")))
        if not rows:
            print("no repros")
            return 1
        n = len(rows)
        sizes = [r[0] for r in rows]
        short = sum(r[1] == "short" for r in rows)
        fell_back = sum(r[1] == "long" for r in rows)
        print(f"repros: {n}; lines median {statistics.median(sizes):g}, max {max(sizes)}; "
              f"under 60 lines: {sum(x < 60 for x in sizes)}/{n}")
        print(f"short form reproduced alone: {short}/{n}; fell back to the long form: {fell_back}/{n}; "
              f"confirmed in a fresh process: {sum(r[2] is True for r in rows)}/{n}")
        return 0
    files = [p for p in sorted(root.glob("*.py")) if p.name != "conftest.py"]
    sizes = [lines(p) for p in files]
    total = sum(len(p.read_text().splitlines()) for p in root.iterdir() if p.is_file())
    print(f"corpus repros: {len(files)}; lines median {statistics.median(sizes):g}, max {max(sizes)}; "
          f"all files in {root}: {total} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "corpus"))
