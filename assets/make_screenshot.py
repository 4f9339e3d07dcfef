"""Regenerate assets/compare.png: serve the app, open the Compare page (demo scenario), screenshot it.

Run from anywhere with the project's interpreter:  .venv/bin/python assets/make_screenshot.py
Needs Debian's chromium at /usr/bin/chromium (``make test`` installs it); never ``playwright install``.
The server and browser set-up is the browser tests' own (tests/browser_support.py).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, TABLE, streamlit_server  # noqa: E402

OUT = ROOT / "assets" / "compare.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp) / "streamlit.log") as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1150})
                page.goto(url)
                expect(page.locator(CHART).first).to_be_visible(timeout=90_000)
                expect(page.locator(TABLE).first).to_be_visible(timeout=30_000)
                page.wait_for_timeout(1500)  # let plotly finish its transition
                page.screenshot(path=str(OUT))
            finally:
                browser.close()
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
