# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-inductor-074feadf dedup=known:remat-reads-mutated-input symptom=gradient device=cpu issue=none
"""[Known] A value read before an in-place write to a graph input is recomputed in backward after the write: silent wrong gradient

Registry entry remat-reads-mutated-input; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


class M(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.register_buffer("buf", torch.tensor(-1.5, dtype=dtype))  # a graph input the forward writes

    def forward(self, x):
        v = torch.sigmoid(self.buf)  # read before the write
        self.buf.mul_(0.9).add_(v * 0.1)
        return self.buf * x


def grad(f, dtype=torch.float32):
    x = torch.tensor(2.0, dtype=dtype, requires_grad=True)  # ()
    f(x).backward()
    return x.grad


m = M(torch.float32)
ref, fp64, res = grad(M(torch.float32)), grad(M(torch.float64), torch.float64), grad(torch.compile(m))
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: grad of x (the updated buffer) compiled {res.item():.6f}, eager {ref.item():.6f}: the update is applied twice")
    raise SystemExit(1)
print("OK: compiled gradient matches eager")
