"""Regenerate the screenshots in assets/: one per page of the dashboard, on the demo scenario.

Run from anywhere with the project's interpreter:  .venv/bin/python assets/make_screenshot.py
Serves the app (``streamlit run app.py``), opens each page in Debian's chromium (never
``playwright install``) at 1400 px wide, waits until the page has settled (its figures drawn, nothing
stale, nothing running) and saves ``assets/<page>.png``. The Calibration page is shown with the
``gong2020_count`` paper preset run; ``compare_1024.png`` shows the landing page at 1024 px wide.
The server and browser set-up is the browser tests' own (tests/browser_support.py).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402

from browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

SETTLED = f"""() => !!document.querySelector('{CHART} .main-svg')
  && !document.querySelectorAll('[data-stale="true"]').length
  && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')"""
PAGES = {"compare": "", "privacy_budget": "privacy_budget", "protection": "protection", "diagnostics": "diagnostics",
         "learn": "learn", "calibration": "calibration"}


def _settle(page, chart: bool = True) -> None:
    page.wait_for_timeout(800)  # a run starts and marks elements stale
    if chart:
        page.wait_for_function(SETTLED, timeout=180_000, polling=100)
    page.wait_for_timeout(1500)  # let plotly finish its transition


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp) / "streamlit.log") as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for name, path in PAGES.items():
                    page = browser.new_page(viewport={"width": 1400, "height": 1150})
                    page.goto(f"{url}/{path}")
                    page.get_by_role("heading").first.wait_for(timeout=120_000)
                    if name == "calibration":
                        page.get_by_role("tab", name="The papers' results").click()
                        page.get_by_role("button", name="Run preset").click()
                    _settle(page, chart=name != "learn")
                    page.screenshot(path=str(ROOT / "assets" / f"{name}.png"), full_page=name != "compare")
                    print(f"wrote assets/{name}.png")
                    page.close()
                page = browser.new_page(viewport={"width": 1024, "height": 900})
                page.goto(url)
                _settle(page)
                page.screenshot(path=str(ROOT / "assets" / "compare_1024.png"))
                print("wrote assets/compare_1024.png")
            finally:
                browser.close()


if __name__ == "__main__":
    main()
