"""[Fuzzer][Runtime Crash] torch.compile (runtime_crash, cpu) raises at run time: compiled raised RuntimeError: planted fault: compiled kernel failed at run time

Found by fuzzcomp 0.0-golden (seed 0) on torch 2.x-golden; bucket runtime-crash-backend-50ae4741.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
from fuzzcomp.planted import runtime_crash as planted_backend  # the custom backend under test


def fn(x0):
    torch.mul(x0, x0, out=x0)
    return (x0,)


def inputs(call):
    if call == 0:
        x0 = torch.tensor(1.880212, dtype=torch.float32)  # float32 (), strides ()
        return [x0]
    x0 = torch.tensor(1.3529396, dtype=torch.float32)  # float32 (), strides ()
    return [x0]


compiled = torch.compile(fn, backend=planted_backend)
for call in range(2):  # the sizes change between calls
    fn(*inputs(call))  # eager is fine
    try:
        compiled(*inputs(call))
    except Exception as e:
        traceback.print_exc()
        why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
        print(f"BUG: call {call}: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNrdVE1v2zAM/SuBThuwGU6KYUOAnnraYcCw9lYEhiLTsRBZ0vSR1THy30fKjuu0ToFee0mkx0eK74lyx4rA1gt2xz2wLwsmuFIegQ7xaBXg8rEbOUqdOeBekDYnjOyU2fJX+X3I8bJoTElI2lAlqStwoAUUUtsYKLHCfMBQw91+tpCDv1E68EUqsl7oqBTCHrvibq7185o9LfHMVZZvTqmQB6D8nJbyCK8PQ9KHkv41z75/uxS/vC4+0YRprEzQ6ESP3FsQJGPLxR40lWJVPB6Jn1nFdYBy7aIOsoFCOO7r5J7RldzNKSvhIEXyR9hI1LLVvJHiWWSFfyjb1lOjek+JkXwGDY4H44oDOC+Npnp59oPqWWcwu5kI+T0gJMKU7ZWZ/xUDD+llcLe79jD+QEUM7DhJeMrZZHTeG0x+GEtblCLqrInq0cSwIWLALiAMVNpDg24HuGB/6pZ0xAp/MO+2y0+fh7JvDGkNyoKbDY0DOqf9JwWTP0pyX5iKwP6y8fqH97WX/YgE0N44iireYm/pwg1OyS6a6F84MTPw54v3OH2SqwkSWjud0od00AOBNExDlFXK8HCzIszXfMy4ePLsIOFfEtF7hkMWFTwP4rnDSlMZFFGM6lKdHpxxjDT1b69ttkbNfm/Gj9LpP8Mnvoc=
