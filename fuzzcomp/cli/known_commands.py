"""The known-bug registry at the keyboard: ``link`` a finding's bucket to an upstream issue (or an
entry), ``known`` to list what the registry holds.

Contract: ``cmd_link(args)`` adds the finding's bucket to the registry entry of ``--issue`` (or
``--id``), or makes a new entry for it, writes ``known_bugs.json`` atomically, and rebuilds the
campaign's summary so the bucket shows as known at once; the next campaign labels it known when
it is found. A corpus file of that bucket gets the entry's issue in its metadata line
(``issue=``). ``--fixed-in`` records the first torch release without the bug (``fuzzcomp
recheck`` tells which). A finding an entry's rule already claims is not pinned (its bucket id
is shared by every finding with its symptom, stage and signature): the entry's issue, state and
fixed release are updated, a different entry is refused; ``--pin`` pins it anyway.
``cmd_known(args)`` prints one line per entry: id, state, next step, buckets and repro. Usage
mistakes (no such finding, a URL that is not one, a broken registry) are one line and exit 2.
"""
from __future__ import annotations

import re
from pathlib import Path

from fuzzcomp.base import exitcodes
from fuzzcomp.base.errors import HarnessError, UsageError
from fuzzcomp.base.environ import environ_var
from fuzzcomp.cli.corpus_commands import _refresh_campaign
from fuzzcomp.cli.finding_lookup import find_finding
from fuzzcomp.findings.corpus import CorpusError, default_corpus_dir, release
from fuzzcomp.findings.known import (REGISTRY_NAME, Registry, RegistryError, case_identity, forget_cache,
                                     link_bucket, load_registry, sync_corpus_issues)
from fuzzcomp.findings.store import StoreError, load_finding

_SLUG = re.compile(r"[a-z-]+-[a-z]+-[0-9a-f]{8}")


def _registry_path(args) -> Path:
    corpus = Path(args.corpus) if args.corpus else default_corpus_dir()
    if not corpus.is_dir():
        raise UsageError(f"no corpus folder at {corpus} (the registry is {REGISTRY_NAME} in it)")
    return corpus / REGISTRY_NAME


def _bucket_and_title(args) -> tuple[str, str, Path | None, dict | None]:
    if _SLUG.fullmatch(args.finding) and not Path(args.finding).exists():
        return args.finding, args.finding, None, None
    folder = find_finding(args.finding, args.campaign)
    try:
        data = load_finding(folder / "finding.json")
    except StoreError as e:
        raise UsageError(str(e)) from None
    key = data["bucket_obj"]
    title = f"{key.symptom} ({key.stage}): {key.signature}"[:160]
    return key.slug(), title, folder, data


def _ruled_by(reg: Registry, data: dict | None):
    """The entry whose rule claims this finding under the running torch (by what its program
    does, as a campaign asks), or None."""
    if data is None or data.get("case_obj") is None:
        return None
    import torch
    m = Registry(reg.bugs, torch.__version__, reg.path).match(case_identity(data["bucket_obj"], data["case_obj"]))
    return m.bug if m is not None and m.how == "rule" else None


def cmd_link(args) -> int:
    if not (args.issue or args.id):
        raise UsageError("link needs --issue URL (the upstream report) or --id ENTRY (a registry entry)")
    if args.issue and not re.match(r"https?://\S+$", args.issue):
        raise UsageError(f"--issue {args.issue!r} is not a URL")
    if args.fixed_in:
        try:
            release(args.fixed_in)
        except CorpusError as e:
            raise UsageError(f"--fixed-in: {e}") from None
    path = _registry_path(args)
    slug, title, folder, data = _bucket_and_title(args)
    try:
        reg = load_registry(path, "0")   # a broken file is refused before anything is written
        ruled = None if args.pin else _ruled_by(reg, data)
        bug_id = args.id
        if ruled is not None:
            # a bucket id is shared by every finding with its symptom, stage and signature; the
            # rule keeps root causes apart where the id does not (CPU 1518: pinning a ViewMeta
            # crash's bucket to one entry claimed another entry's findings of H200 1304)
            named = bug_id or next((b.id for b in reg.bugs if args.issue and b.issue == args.issue), ruled.id)
            if named != ruled.id:
                raise UsageError(f"{slug} is claimed by entry {ruled.id}'s rule (what the program does), not "
                                 f"{named}: check the finding; --pin adds the bucket to {named} anyway")
            bug_id = ruled.id
            if not (args.issue or args.state or args.fixed_in):
                print(f"{slug} is already known by entry {ruled.id}'s rule: nothing to pin (a bucket id is "
                      "shared by every finding with its symptom, stage and signature; --pin pins it anyway)")
                return exitcodes.CLEAN
        entry, created = link_bucket(path, slug=slug, title=title, issue=args.issue, state=args.state,
                                     fixed_in=args.fixed_in, bug_id=bug_id, pin=ruled is None)
    except RegistryError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise HarnessError(f"cannot write {path}: {e.strerror or e}") from None
    forget_cache()
    if ruled is not None:
        print(f"entry {entry} updated{' (' + args.issue + ')' if args.issue else ''} in {path}; bucket {slug} "
              "stays claimed by its rule, not pinned")
    else:
        print(f"{'new entry' if created else 'linked to entry'} {entry}: bucket {slug} is known"
              f"{' (' + args.issue + ')' if args.issue else ''} in {path}")
    try:  # the corpus file of that bucket says the same issue as its entry
        for f in sync_corpus_issues(path.parent, load_registry(path, "0")):
            print(f"corpus file {f.name}: issue= now names its entry's issue")
    except (RegistryError, CorpusError, OSError) as e:
        raise HarnessError(f"linked, but the corpus files' issue= could not be updated: {e}") from None
    if ruled is None:
        print("the next campaign labels it known and spends no minimisation on it")
    if folder is not None:
        # the rebuilt summary asks the registry just written: --corpus names it for the rebuild
        # only (an in-process caller's later lookups must not read a temporary corpus)
        with environ_var("FUZZCOMP_CORPUS", str(Path(args.corpus).resolve()) if args.corpus else None):
            _refresh_campaign(folder.parent.parent)
    return exitcodes.CLEAN


def cmd_known(args) -> int:
    path = _registry_path(args)
    try:
        reg = load_registry(path, args.torch or "0")
    except RegistryError as e:
        raise UsageError(str(e)) from None
    print(f"{len(reg.bugs)} known bugs in {path}")
    for b in reg.bugs:
        state = b.state or ("not reported" if b.issue is None else "?")
        print(f"- {b.id}  [{state}]  {b.title}")
        print(f"    {b.advice()}; buckets {len(b.buckets)}{'; repro corpus/' + b.repro if b.repro else ''}")
    return exitcodes.CLEAN
