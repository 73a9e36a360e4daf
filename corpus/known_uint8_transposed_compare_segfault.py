# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-uint8-transposed-compare-segfault dedup=known:uint8-transposed-compare-segfault symptom=segfault device=cpu issue=none
"""[Known] CPU Inductor: gt(x, x) on a transposed uint8 (17, 17) input, then select(0, 0), kills the process (SIGSEGV)

Registry entry uint8-transposed-compare-segfault; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import subprocess
import sys

CHILD = """
import torch


def fn(x):
    return torch.gt(x, x).select(0, 0)


x = torch.randint(0, 256, (17, 17), dtype=torch.uint8, generator=torch.Generator().manual_seed(0)).t()  # uint8 (17, 17), strides (1, 17)
assert not fn(x).any()  # eager: a row of False
print(torch.compile(fn)(x).tolist())
"""

# the compiled call runs in a child process: a segfault kills the child, not this check
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
if p.returncode < 0:
    print(f"BUG: the compiled call killed the process with signal {-p.returncode}")
    raise SystemExit(1)
if p.returncode != 0:
    raise RuntimeError(f"the child failed otherwise (exit {p.returncode}): {p.stderr.strip()[-300:]}")
print("OK: compiled call returned", p.stdout.strip())
