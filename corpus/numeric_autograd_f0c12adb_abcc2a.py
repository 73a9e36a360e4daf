# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=numeric-autograd-f0c12adb dedup=numeric-autograd-f0c12adb:Tensor.zero_+torch.cos symptom=numeric device=cpu issue=none
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) returns wrong values: output[0]: rmse vs fp64: compiled 1.3 > 3 x eager 0 + 8.9e-16; max abs diff 1.3; first at []: eager=1.0 compiled=-0.3045

Found by fuzzcomp 0.1.0 (seed 1301003962) on torch 2.13.0+cpu; bucket numeric-autograd-f0c12adb.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x0, x1):
    x1.zero_()
    v0 = torch.cos(x0)
    return (v0,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x0 = up(torch.tensor(1.8802120072262123, dtype=torch.float64))  # float64 (), strides ()
    x1 = x0  # a view of x0
    return [x0, x1]


compiled = torch.compile(fn)
ref, fp64, res = fn(*inputs()), fn(*inputs(fp64=True)), compiled(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print("BUG: compiled output differs from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNq1VMtu2zAQ/BVDpwQoDDkugja3IqccChRtbkEg0NRKJkyRLB9uFEP/nl1SVlSHQVMgOdmanV3OLEc6FJUvrhbFNXNQfFoUnEnpEDggHowE/Ht3mDhSHjlgT0j3A1ZaqTfsRX8qWVZXna4JiQ80SagGLCgOlVAmeGpssB+w1DG7yw6y8DsIC66KQ64WKkiJsENVzGY7HAARS/orHuElZ4g0rjsjIjQZTsgvA5zUbhjfgaJRKLwO3Gsb16FVI9rcwTXsBY+GuQlErXvFOsGfVTf4gz7Mdu48LYkYcXGgwDI8q9qDdUIrmlcuv9A8YzV2dzPJP0aE5Oq6f+UmvwfPfLxvZtvXrvsnNMRAxdHCw6pIe9KGHm9BOW2Xj2B1RTSPk8CPRHqGzkg6BJFDOSTi2XmBE44HfHNOtOo/VZR/qcC18O2Sa0ccHWLHvjw9f2KdoZLzWO3N/KKTmVsC6ZbGatFIzfzlZ8Lclk0ds+AM/4r9FqSBfCynyOds31AxrkYK5irdEJjSFpQf07wTKY0+yqeqZP24BUylF23QwZ2sL/MKHZPnMOiCyRnyXnvCyl7An2hiloCsy6Qx5zOy3mRz9WE21xdvs+lISooHvtBBwvNLf1TZqDG11XSRcVYCM+GgaKcvWt9tdCZws6/dal2uynL99fJieAJDQNCa
