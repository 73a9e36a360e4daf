"""The corpus and report commands: ``promote`` a finding into the corpus, ``report`` a campaign
folder (summary, HTML, CI formats), ``recheck`` its buckets under another torch.
"""
from __future__ import annotations

import sys
from pathlib import Path
import json

from fuzzcomp.base import exitcodes
from fuzzcomp.base.errors import HarnessError, UsageError
from fuzzcomp.campaign.pipeline import run_repro
from fuzzcomp.cli.finding_lookup import find_finding
from fuzzcomp.findings.corpus import CorpusError, default_corpus_dir, promote, torch_affected
from fuzzcomp.findings.corpus_meta import corpus_run_hint, existing_entry, set_issue
from fuzzcomp.findings.recheck import exit_code, recheck, RecheckError, render
from fuzzcomp.findings.store import Store
from fuzzcomp.report.html import write_html
from fuzzcomp.report.summary import damage_counts, damage_lines, render_text, summarise, write_summary
from fuzzcomp.cli.run_settings import _check_writable, _ci_outputs, _user_errors


def _refresh_campaign(root: Path) -> None:
    """A finding minimised after its campaign shows in that campaign's summaries at once."""
    if not (root / "campaign.json").is_file():
        return
    try:
        store = Store(root)
        write_html(store, write_summary(store))
    except (OSError, *_user_errors()) as e:
        print(f"fuzzcomp: warning: could not rebuild the summary in {root}: {e}", file=sys.stderr)
        return
    print(f"summary: {root / 'summary.md'} (rebuilt)")


def cmd_promote(args) -> int:
    path = find_finding(args.finding, args.campaign)
    corpus = Path(args.corpus) if args.corpus else default_corpus_dir()
    if not corpus.is_dir():
        if args.corpus:
            raise UsageError(f"--corpus {args.corpus}: no such folder (create it first, or name an existing "
                             "corpus folder)")
        raise UsageError(f"no corpus folder at {corpus}: pass --corpus DIR")
    try:
        already = existing_entry(path, corpus)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    if already is not None and args.issue:
        try:
            set_issue(already, args.issue)
        except OSError as e:
            raise HarnessError(f"cannot update {already}: {e.strerror or e}") from None
        print(f"updated: {already} (issue={args.issue})")
        return exitcodes.CLEAN
    if args.torch_spec:
        try:
            torch_affected(args.torch_spec, "0")
        except CorpusError as e:
            raise UsageError(str(e)) from None
    try:
        target = promote(path, corpus, issue=args.issue, torch_spec=args.torch_spec, status=args.status,
                         run_repro=run_repro, trust_status=args.trust_status)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise HarnessError(f"cannot write into {corpus}: {e.strerror or e}") from None
    print(f"promoted: {target}")
    print(f"run the corpus: {corpus_run_hint(corpus)}")
    return exitcodes.CLEAN


def cmd_report(args) -> int:
    if not Path(args.folder).is_dir():
        raise UsageError(f"no such folder: {args.folder}")
    _check_writable("--junit-xml", args.junit_xml)
    _check_writable("--sarif", args.sarif)
    store = Store(Path(args.folder))
    try:
        s = summarise(store)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(json.dumps(s, indent=1) if args.json else render_text(s))
    written = None
    try:
        write_summary(store, s)
        write_html(store, s)
        if not args.json:
            print(f"report: {Path(args.folder) / 'report.html'}")
    except OSError as e:
        written = f"cannot write the summary into {args.folder}: {e.strerror or e} (the summary above is complete)"
    _ci_outputs(args, s)
    damage = damage_lines(s)
    for line in damage:
        print(f"fuzzcomp: warning: {line}", file=sys.stderr)
    if written:
        raise HarnessError(written)
    if damage:
        raise HarnessError(f"{args.folder} is damaged ({damage_counts(s)}; named above): the summary "
                           "above counts only what could be read")
    return exitcodes.BUG if s.get("findings") else exitcodes.CLEAN


def cmd_recheck(args) -> int:
    try:
        summary = recheck(Path(args.folder), args.python, args.timeout, args.jobs)
    except RecheckError as e:
        raise UsageError(str(e)) from None
    print(render(summary))
    return exit_code(summary)
