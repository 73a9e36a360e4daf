"""The headline: new bugs first by severity, known bugs with their next step, then notes."""
from fuzzcomp.report.headline import counts_line, group_of, groups, markdown, text_lines


def _b(symptom, status="confirmed", known=False, n=1, signature="sig"):
    return {"symptom": symptom, "stage": "inductor", "status": status, "known": known, "signature": signature,
            "findings": [f"f{i}" for i in range(n)], "severity": {"numeric": 1, "gradient": 1, "compile-crash": 2,
                                                                  "aliasing": 3, "recompile": 4}[symptom],
            "notes": []}


def test_new_bugs_lead_by_severity_then_known_then_notes():
    known = {"id": "k1", "issue": "https://x/1", "advice": "fixed in torch 2.13: upgrade"}
    s = {"out": "/o", "minimise_s_by_group": {"new": 90.0, "known": 10.0}, "buckets": {
        "recompile-capture-1": _b("recompile"),
        "compile-crash-inductor-2": _b("compile-crash"),
        "numeric-inductor-3": _b("numeric", status="not-verified"),
        "gradient-inductor-4": _b("gradient"),
        "aliasing-inductor-5": _b("aliasing", known=known),
        "numeric-inductor-6": _b("numeric", status="flaky"),
    }}
    g = groups(s)
    assert [slug for slug, _ in g["new"]] == ["gradient-inductor-4", "numeric-inductor-3",
                                              "compile-crash-inductor-2", "recompile-capture-1"]
    assert [slug for slug, _ in g["known"]] == ["aliasing-inductor-5"]
    assert [slug for slug, _ in g["notes"]] == ["numeric-inductor-6"]
    assert group_of(s["buckets"]["numeric-inductor-6"]) == "notes"
    assert counts_line(s) == ("4 new (3 confirmed in every fresh process), 1 known, 1 notes; "
                              "minimisation time on new bugs 90%")
    text = "\n".join(text_lines(s, {}))
    assert text.index("New bugs") < text.index("Known bugs") < text.index("Notes")
    assert "known: k1 - fixed in torch 2.13: upgrade" in text
    assert "fixed in torch 2.13: upgrade" in markdown(s)
