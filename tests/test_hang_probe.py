"""A hang finding is minimised with a short compile limit per probe and its stage named by the
backend ladder, each rung a separate probe (faked here: no compile hangs in the test)."""
from __future__ import annotations

from fuzzcomp.campaign.hang_probe import HANG_PROBE_S, hang_stage, probe_limits
from fuzzcomp.oracles import Verdict

from oracle_cases import case, mul_relu

HANG = Verdict("hang", "unknown", "isolation", "compiled run: compile over 30 s; eager alone completes",
               signature="hang")


def test_probe_limits_cut_the_compile_limit_only():
    assert probe_limits((150.0, 60.0)) == (HANG_PROBE_S, 60.0)
    assert probe_limits((10.0, 60.0)) == (10.0, 60.0)
    assert probe_limits((None, None)) == (HANG_PROBE_S, None)


def test_first_rung_that_hangs_names_the_stage():
    seen = []

    def probe(c, timeout_s, limits, deadline):
        seen.append((c.compile.backend, limits))
        return True, set(), [HANG] if c.compile.backend in ("aot_eager_decomp_partition", "inductor") else []
    got = hang_stage(probe, case(mul_relu(), "inductor"), 60.0, (30.0, 60.0))  # the decomposition rung hangs
    assert got["stage"] == "decomposition" and [b for b, _ in seen] == ["eager", "aot_eager",
                                                                       "aot_eager_decomp_partition"]
    assert all(lim == (30.0, 60.0) for _, lim in seen)


def test_no_rung_below_hangs_names_the_own_backend():
    quiet = lambda *a: (True, set(), [])  # noqa: E731
    assert hang_stage(quiet, case(mul_relu(), "inductor"), 60.0, (30.0, 60.0))["stage"] == "inductor"
    assert hang_stage(quiet, case(mul_relu(), "fuzzcomp.planted:hang"), 60.0, (30.0, 60.0))["stage"] == "backend"
