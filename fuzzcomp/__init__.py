"""fuzzcomp: differential fuzzing of torch.compile against eager PyTorch.

Data flows one way: generators -> execute (in a worker) -> oracles.judge ->
triage -> store -> minimise -> repro/report. ``fuzzcomp.generators`` and
``fuzzcomp.oracles`` are leaf packages that never import the rest.
"""
__version__ = "0.1.0"
