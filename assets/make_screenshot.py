"""Regenerate assets/compare.png: serve the app, open the Compare page (demo scenario), screenshot it.

Run from anywhere with the project's interpreter:  .venv/bin/python assets/make_screenshot.py
Needs Debian's chromium at /usr/bin/chromium (``make test`` installs it); never ``playwright install``.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "assets" / "compare.png"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(proc: subprocess.Popen, url: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"streamlit was not healthy after {timeout} s")


def main() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_healthy(proc, url)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1150})
                page.goto(url)
                expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible(timeout=90_000)
                expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible(timeout=30_000)
                page.wait_for_timeout(1500)  # let plotly finish its transition
                page.screenshot(path=str(OUT))
            finally:
                browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
