"""The campaign folder on disk: write-ahead findings, an event log, summaries.

Contract: every write is atomic (temp file, fsync, rename), so a crash or
Ctrl-C leaves either the old file or the new one, never half of one. A finding
is written by ``record_finding`` before anything else is done with it; what
later stages add (minimised case, repro, report) goes beside it. Layout::

    OUT/campaign.json            config, versions, start time
    OUT/events.jsonl             one JSON object per line, appended and flushed
    OUT/findings/<id>/finding.json     the case and verdicts, as first seen
    OUT/findings/<id>/minimized.json   the reduced case (when minimised)
    OUT/findings/<id>/repro.py, report.md
    OUT/summary.md, summary.json
    OUT/.lock                    pid of the live process using the folder

One live process at a time: ``lock()`` takes ``OUT/.lock`` (atomic create); a
second process gets a ``StoreError`` naming the holder's pid, and a lock left by a
dead process is taken over. ``claim_new_folder`` makes a fresh, never-shared
folder for a campaign started without ``--out``.
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from fuzzcomp.generators import Case, from_jsonable, to_jsonable
from fuzzcomp.oracles import Verdict

from fuzzcomp.findings.triage import BucketKey


class StoreError(RuntimeError):
    pass


_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600: others on the box must read findings
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


def verdict_to_json(v: Verdict) -> dict:
    return dict(v.__dict__)


def verdict_from_json(d: dict) -> Verdict:
    return Verdict(**d)


def case_to_json(case: Case) -> dict:
    return to_jsonable(case)


def case_from_json(d: dict) -> Case:
    case = from_jsonable(d)
    if not isinstance(case, Case):
        raise StoreError("not a fuzzcomp case")
    return case


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def claim_new_folder(pattern: str = "reports/run-%Y%m%d-%H%M%S") -> str:
    """Create and return a new folder named from ``pattern`` (UTC time); a suffix -2, -3...
    keeps two campaigns started in the same second apart (mkdir is atomic)."""
    base = time.strftime(pattern, time.gmtime())
    Path(base).parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        name = base if n == 1 else f"{base}-{n}"
        try:
            os.mkdir(name)
            return name
        except FileExistsError:
            continue
    raise StoreError(f"cannot find a free folder name like {base}")


class Store:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.findings_dir = self.root / "findings"
        self._locked = False

    # ---- one live process per folder ---------------------------------------------
    def lock(self) -> None:
        """Take the folder for this process; StoreError if a live process holds it."""
        path = self.root / ".lock"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create {self.root}: {e.strerror or e}") from None
        me = f"{os.getpid()} {socket.gethostname()} {time.time():.0f}\n"
        for _ in range(3):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    fields = path.read_text().split()
                    pid, host = int(fields[0]), fields[1]
                except (OSError, ValueError, IndexError):
                    pid, host = -1, socket.gethostname()  # torn or empty: its writer died mid-write
                if pid == os.getpid() and host == socket.gethostname():
                    self._locked = True
                    return
                if host != socket.gethostname() or _pid_alive(pid):
                    where = f" on {host}" if host != socket.gethostname() else ""
                    raise StoreError(f"{self.root} is in use by another fuzzcomp process (pid {pid}{where}); "
                                     "wait for it to end or stop it, or choose another --out") from None
                try:  # stale: its process is gone
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                continue
            except OSError as e:
                raise StoreError(f"cannot lock {self.root}: {e.strerror or e}") from None
            with os.fdopen(fd, "w") as f:
                f.write(me)
            self._locked = True
            return
        raise StoreError(f"cannot lock {self.root}: another process keeps taking {path}")

    def unlock(self) -> None:
        if self._locked:
            try:
                os.unlink(self.root / ".lock")
            except OSError:
                pass
            self._locked = False

    def create(self, meta: dict) -> None:
        try:
            self.findings_dir.mkdir(parents=True, exist_ok=True)
            write_json(self.root / "campaign.json", meta)
        except OSError as e:
            raise StoreError(f"cannot write to {self.root}: {e.strerror or e}") from None

    def meta(self) -> dict:
        path = self.root / "campaign.json"
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            raise StoreError(f"{self.root} is not a fuzzcomp campaign folder (no campaign.json)") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise StoreError(f"{path} is corrupt: {e}") from None

    # ---- events --------------------------------------------------------------
    def event(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"t": round(time.time(), 3), "event": kind, **fields}, sort_keys=True)
        with open(self.root / "events.jsonl", "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def repair_log(self) -> int:
        """Make a torn last line (power cut, kill -9 mid-write) its own line again.

        Returns how many lines are not valid JSON; they are kept (for a human to
        look at) and skipped by ``events``. Without the repair the next event
        would be glued to the torn fragment and lost with it.
        """
        path = self.root / "events.jsonl"
        if not path.exists():
            return 0
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(path, "ab") as f:
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
        bad = 0
        for line in data.splitlines():
            try:
                json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                bad += 1
        return bad

    def events(self) -> Iterator[dict]:
        """Every well-formed event; a torn last line (power cut) is skipped."""
        path = self.root / "events.jsonl"
        if not path.exists():
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(ev, dict):
                    yield ev

    # ---- findings ----------------------------------------------------------------
    def record_finding(self, case: Case, verdicts: list[Verdict], key: BucketKey, origin: str) -> str:
        """Write-ahead: the finding is on disk when this returns."""
        fid = f"{int(time.time() * 1000) % 10**10:010d}-s{case.seed}"
        d = self.findings_dir / fid
        n = 1
        while d.exists():
            d = self.findings_dir / f"{fid}-{n}"
            n += 1
        write_json(d / "finding.json", {
            "id": d.name, "origin": origin, "found_at": time.time(), "bucket": key.to_json(),
            "verdicts": [verdict_to_json(v) for v in verdicts], "case": case_to_json(case)})
        return d.name

    def finding(self, fid: str) -> dict:
        return load_finding(self.findings_dir / fid / "finding.json")

    def finding_ids(self) -> list[str]:
        if not self.findings_dir.exists():
            return []
        return sorted(p.name for p in self.findings_dir.iterdir() if (p / "finding.json").exists())

    def path(self, fid: str, name: str) -> Path:
        return self.findings_dir / fid / name

    def status(self, fid: str) -> dict | None:
        """A finding's ``status.json`` (what its minimisation and checks settled), None when it
        has none yet or it cannot be read as an object."""
        try:
            st = json.loads(self.path(fid, "status.json").read_text())
        except (OSError, ValueError):
            return None
        return st if isinstance(st, dict) else None


def load_finding(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
        data["case_obj"] = case_from_json(data["case"])
        data["bucket_obj"] = BucketKey.from_json(data["bucket"])
        data["verdict_objs"] = [verdict_from_json(v) for v in data["verdicts"]]
        if "minimized" in data:
            data["minimized_obj"] = case_from_json(data["minimized"])
        return data
    except FileNotFoundError:
        raise StoreError(f"no such finding: {path}") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, UnicodeDecodeError) as e:
        raise StoreError(f"{path} is not a valid fuzzcomp finding: {type(e).__name__}: {e}") from None
