"""The symptom table is the one place a symptom is described, and every part reads it."""
from fuzzcomp.base import symptoms
from fuzzcomp.oracles import SYMPTOMS as ORACLE_SYMPTOMS
from fuzzcomp.render.short_checks import CHECKS


def test_the_table_names_exactly_the_oracles_symptoms():
    assert tuple(symptoms.SYMPTOMS) == tuple(ORACLE_SYMPTOMS)


def test_every_symptom_has_a_short_form_check():
    assert set(CHECKS) == set(symptoms.SYMPTOMS)


def test_severity_ranks():
    by_rank = {r: {n for n, s in symptoms.SYMPTOMS.items() if s.rank == r} for r in (1, 2, 3, 4)}
    assert by_rank == {1: {"numeric", "gradient", "mutation"},
                       2: {"compile-crash", "runtime-crash", "segfault", "hang"},
                       3: {"aliasing", "error-parity"}, 4: {"recompile"}}


def test_identity_rules():
    assert symptoms.VALUE == ("numeric", "gradient", "mutation")
    assert symptoms.RAISES == ("compile-crash", "runtime-crash", "error-parity")


def test_printed_phrases_stay_as_they_were():
    # the report and the repro title have always said aliasing in two ways; the text is pinned
    assert symptoms.phrase("aliasing") == "changes output/input aliasing"
    assert symptoms.title_phrase("aliasing") == "changes which inputs outputs alias"
    assert symptoms.phrase("no-such") == symptoms.title_phrase("no-such") == "disagrees with eager"
    assert symptoms.title_kind("hang") == "Hang" and symptoms.title_kind("numeric") == "Eager/Compile Divergence"
