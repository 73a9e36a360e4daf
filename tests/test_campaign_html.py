"""The campaign's HTML report renders in a real headless browser (Debian's chromium).

Skips, with the reason shown, where no chromium is installed
(``apt-get install -y chromium``).
"""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from fuzzcomp.report.html import write_html
from fuzzcomp.report.summary import summarise

from test_campaign import synthetic_campaign

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH: apt-get install -y chromium")


def _chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(prefix="fuzzcomp-chromium-")
    try:
        return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@needs_browser
def test_report_renders_in_headless_chromium(tmp_path):
    store = synthetic_campaign(tmp_path / "c")
    write_html(store, summarise(store))
    page = (tmp_path / "c" / "report.html").resolve()
    dom = _chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 6 and "segfault-unknown-" in dom.stdout
    assert "<parsererror" not in dom.stdout          # every inline SVG parsed
    shot = tmp_path / "report.png"
    r = _chromium("--window-size=1400,1600", f"--screenshot={shot}", page.as_uri())
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1600)
    assert len(data) > 30_000                          # a blank page compresses to a few KB
