"""Novelty steering: known triggers are drawn less (never never), learned triggers survive resume,
and the feedback bandit rewards new bugs first. Generation only: nothing here compiles."""
from __future__ import annotations

import json

import pytest

from fuzzcomp.campaign import novelty as nov
from fuzzcomp.campaign.feedback import Feedback, reward_of
from fuzzcomp.findings.known import forget_cache
from fuzzcomp.findings.store import Store, case_to_json, write_json
from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.ir import op_names

SEEDS = range(600)


@pytest.fixture
def registry(tmp_path, monkeypatch):
    def make(bugs):
        corpus = tmp_path / "reg"
        corpus.mkdir(exist_ok=True)
        (corpus / "known_bugs.json").write_text(json.dumps({"bugs": bugs}))
        monkeypatch.setenv("FUZZCOMP_CORPUS", str(corpus))
        forget_cache()
    yield make
    forget_cache()


def _share(config, pred) -> float:
    return sum(bool(pred(generate(s, config))) for s in SEEDS) / len(SEEDS)


def test_a_known_trigger_is_drawn_less_but_still_drawn(registry):
    registry([{"id": "expm1-bug", "title": "t", "match": {"symptoms": ["numeric"], "ops_any": ["torch.expm1"]}},
              {"id": "gstate-bug", "title": "t", "buckets": ["b"], "trigger": {"caps": ["gstate"]}},
              {"id": "broad", "title": "t", "match": {"symptoms": ["mutation"], "ops_any": ["Tensor.*_"]}}])
    n = nov.Novelty("on", GenConfig())
    assert set(n.triggers) == {"registry: expm1-bug", "registry: gstate-bug"}  # a glob of every in-place op says nothing
    cfg = n.config()
    assert dict(cfg.op_scale) == {"torch.expm1": nov.LOWER}
    has_expm1 = lambda c: "torch.expm1" in op_names(c.program)  # noqa: E731
    has_gstate = lambda c: "gstate" in nov.trigger_of_case(c).caps  # noqa: E731
    before, after = _share(GenConfig(), has_expm1), _share(cfg, has_expm1)
    assert before > 0.01 and 0 < after < before / 2, (before, after)
    before, after = _share(GenConfig(), has_gstate), _share(cfg, has_gstate)
    assert before > 0.02 and after < before / 2, (before, after)
    # off: the very cases a plain campaign draws
    off = nov.Novelty("off", GenConfig())
    assert off.config() == GenConfig() and not off.triggers and not off.learn("x", generate(0), "why")


def test_a_fixed_bug_steers_nothing_on_a_torch_that_has_the_fix(registry):
    registry([{"id": "old", "title": "t", "fixed_in": "2.0", "match": {"symptoms": ["numeric"],
                                                                       "ops_any": ["torch.expm1"]}}])
    assert not nov.Novelty("on", GenConfig()).triggers


def test_a_campaign_bucket_lowers_its_minimised_programs_trigger_and_survives_resume(registry, tmp_path):
    registry([])
    case = next(generate(s) for s in range(200) if "torch_cond" in __import__(
        "fuzzcomp.generators.features", fromlist=["features"]).features(generate(s)))
    t = nov.trigger_of_case(case)
    assert "cond" in t.kinds and not (t.ops & nov.PLUMBING)
    n = nov.Novelty("on", GenConfig(), tmp_path)
    assert n.learn("numeric-inductor-abc", case, "confirmed in this campaign")
    assert not n.learn("numeric-inductor-abc", case, "again")     # one trigger per bucket
    assert dict(n.config().kind_scale)["cond"] == nov.LOWER
    saved = json.loads((tmp_path / nov.NOVELTY_FILE).read_text())
    assert saved["campaign_learned"] == [["numeric-inductor-abc", "confirmed in this campaign"]]
    assert any(r["what"] == "kind cond" and "campaign: numeric-inductor-abc" in r["why"] for r in saved["lowered"])
    # --resume: rebuilt from the store's minimised findings (a confirmed one counts, a flaky one not)
    store = Store(tmp_path / "camp")
    store.create({"config": {}, "versions": {}})
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.workers.isolation_verdicts import crash_verdict
    for status in ({"bucket": "numeric-inductor-abc", "confirmed": True},
                   {"bucket": "numeric-inductor-def", "confirmed": False, "flaky": True}):
        v = crash_verdict("died", "x")
        fid = store.record_finding(case, [v], bucket_of(v), origin="case 0")
        write_json(store.path(fid, "status.json"), status)
        write_json(store.path(fid, "minimized.json"), {"case": case_to_json(case)})
    again = nov.Novelty("on", GenConfig(), store.root)
    again.load(store)
    assert [k for k in again.triggers if k.startswith("campaign:")] == ["campaign: numeric-inductor-abc"]
    assert again.config() == n.config()


def test_steering_shows_what_is_lowered_and_the_rates(registry):
    registry([{"id": "expm1-bug", "title": "t", "match": {"symptoms": ["numeric"], "ops_any": ["torch.expm1"]}}])
    lines = nov.steering_table(nov.Novelty("on", GenConfig()), range(300))
    text = "\n".join(lines)
    assert "op torch.expm1" in text and "registry: expm1-bug" in text and "plain -> steered" in text


def test_the_bandit_rewards_a_new_bug_first_and_a_rediscovery_not_at_all(tmp_path):
    assert reward_of("new", False) == 1.0 > reward_of(None, True) > 0 == reward_of("known", True) == \
        reward_of("seen", True) == reward_of(None, False)
    fb = Feedback("on", 7, GenConfig(), tmp_path)
    for i, found in enumerate(("new", "known", None)):
        fb.case(i, i)
        fb.done(i, True, [f"sig-{i}"], found=found)
    entries = {e["index"]: e for e in fb.pool}
    assert set(entries) == {0, 2} and entries[0].get("new_bug") and not entries[2].get("new_bug")
    assert fb._score(entries[0]) > fb._score(entries[2])


def test_a_bug_of_another_device_steers_nothing_here(registry):
    registry([{"id": "cuda-only", "title": "t", "match": {"symptoms": ["numeric"], "ops_any": ["torch.expm1"],
                                                          "device": "cuda"}}])
    assert not nov.Novelty("on", GenConfig()).triggers
    assert set(nov.Novelty("on", GenConfig(device="cuda")).triggers) == {"registry: cuda-only"}
