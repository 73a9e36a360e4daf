"""[Fuzzer][Eager/Compile Divergence] torch.compile (perturb_add, cpu) returns wrong values: output[0]: rmse vs fp64: compiled 0.00142 > 3 x eager 4.27e-08 + 6.8e-07; max abs diff 0.00142; first at [] ...

Found by fuzzcomp 0.0-golden (seed 4) on torch 2.x-golden; bucket numeric-backend-f5459b33.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same
from fuzzcomp.planted import perturb_add as planted_backend  # the custom backend under test

torch.set_num_threads(1)  # a parallel sum adds in another order


def cond_true0(v6, v7):
    v8 = v6 * 0.5 + v7 * 0.5
    v9 = v8 * 0.5
    return v9


def cond_false0(v10, v11):
    v12 = torch.tanh(v10)
    v13 = torch.sigmoid(v12)
    return v13


def fn(m_buf0):
    v0 = m_buf0.clone()
    v0 = v0 * 0.5 + torch.tanh(v0) * 0.5
    v15 = v0.clone()
    return (v15,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    m_buf0 = up(torch.tensor(1.880212, dtype=torch.float32)).requires_grad_()  # float32 (), strides (), requires grad
    return [m_buf0]


compiled = torch.compile(fn, backend=planted_backend)
ref, fp64, res = fn(*inputs()), fn(*inputs(fp64=True)), compiled(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNrNVk1v2zAM/SuGT+1WBE67rl1uw4ABuw1bb0NhKDKdCJUlTR/Z0iD/faTsOGritAWaDj3ZfvwA3yMtcZWXPp9k+RfmID/Lcs6kdAisEA9GAr7+WvU+Um58wO443a7RMpN6yvbiW5NlVdnoipD4QZmEqsGC4lAKZYKnwBrjAU0Ns3eDiSz8DsKCK2OSSaaClAg7rIrZwQgHQI4FvYp72PdZRzeuGyMi1BNukZ8GOFU7ZfwOFKXK63B/T/4jI5nyUE0MWB/stGRVJMa1qsVsqJgKFoJHEbgJ5FotFWsE3zKp8YHczDxVoxWOPKKYoMAyr225AOuEVpSvGF1TPmM1RjcJje8dQhR0tTzQ3c/OiZkiJ2Znh0bgB9TkgRVHCk05DXWRt/ppQ5DU2kyEEp78dIhRi4I+PDSolo+Bq2I94lIrODmNpqVJdb8B5bS9IZAE6qx5LTXzF+eEuTnrI5I+YhkvoYN1JhkGjLs8ObN2+RTR7F1WjC6z9xn2i89Hnqn5yWq8Pm3xN0Y/YTi1TPH5pG9VynN8+b86+tS5MgeJ/94hhl+D4p7+j+PP/uLjY8Ny9UBKPA6qSSP+phJePzYqOB9vbzyu9zn1NafMPh1kdvzJ2BRH1ZTeBoh/oGF43g3R2rxT985eXsNtJ+k27dVx0nY3nQtyI2nSvNcc6nGx3+TtufXgCDjfbXN6vhXrN3WwY7EHaGGyRovqAbOLYWad6/HJ7U9yvPefO8rj4nVmeTx+nWFGfVusX/qGWviNjLHNUjBX6prAdrcKynf73J1o9zEfqyOrZMuujyikF7OggxtYWQYWyc2u5XDdE0wmyLEajZaFgD+RSKsA7nVBwnb321RZq24gy55hzNOCA6rFK7nddpfNVA/clckm/GH9DzGOohk=
