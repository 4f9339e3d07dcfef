"""Browser benchmark of the dashboard (issue "The first minute"): what a person waits for.

Each figure is measured the way a visitor meets it: a server started by ``streamlit run`` (as
``make run`` does; the numba cache already warm, which ``--prime`` ensures), Debian's chromium
driven by Playwright (never ``playwright install``), a fresh page, and the clock stopped when the
page has *settled*: the figure and the table are on screen, nothing is stale and nothing runs
(Streamlit marks every element a run has not redrawn yet with ``data-stale="true"`` and shows a
running icon while the script runs).

bare_first_view_s
    ``bench/bare_app.py`` (one plotly chart, one table) on a freshly started server: the yardstick.
app_first_view_s
    The Compare page on a freshly started server: start-up work, the demo's runs, the figure.
first_view_ratio
    app / bare; the issue's goal is at most 1.5.
epsilon_change_s
    p50 / p95 / max over ``--changes`` ε edits on the warm Compare page, from Enter in the ε box to
    the figure whose title states the new ε, settled.
page_switch_s
    Compare -> Privacy budget -> Diagnostics -> Compare through the sidebar, each to its settled first figure.
load
    With ``--load``: ``tests/test_load.py`` (six concurrent browser sessions) is run and its
    latency report (p50 / p95 per change kind) is included.
thirty
    With ``--thirty``: ``tests/test_load_thirty.py`` (thirty concurrent websocket sessions on one
    server, DPL_CHAIN_THREADS=1) is run and its report is included: p50 / p95 of the ε change (request
    to finished run) and of the first view, runs per second, the server's memory.

    python bench/app.py [--json] [--changes N] [--load] [--thirty] [--prime]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402

from browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, TABLE, streamlit_server  # noqa: E402

VIEWPORT = {"width": 1400, "height": 1100}
SETTLED = f"""(want) => {{
  const chart = document.querySelector('{CHART}');
  if (!chart || !document.querySelector('{TABLE}')) return false;
  if (document.querySelectorAll('[data-stale="true"]').length) return false;
  if (document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')) return false;
  if (!want) return true;
  return Array.from(document.querySelectorAll('{CHART} .gtitle')).some((t) => t.textContent.includes(want));
}}"""
SETTLED_CHART = f"""() => !!document.querySelector('{CHART} .main-svg')
  && !document.querySelectorAll('[data-stale="true"]').length
  && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')"""


def _quantiles(values: list[float]) -> dict:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return {"n": len(values), "p50_s": round(statistics.median(values), 3), "p95_s": round(p95, 3),
            "max_s": round(values[-1], 3)}


def first_view(browser, script: str, log: Path) -> tuple[float, object, object]:
    """Seconds from opening a fresh server's page to its settled figure and table; returns the open
    page and the server context for further measurements (the caller closes both)."""
    server = streamlit_server(log, script=script)
    url = server.__enter__()
    page = browser.new_page(viewport=VIEWPORT)
    t0 = time.perf_counter()
    page.goto(url)
    page.wait_for_function(SETTLED, arg=None, timeout=300_000, polling=50)
    return time.perf_counter() - t0, page, server


def epsilon_changes(page, count: int) -> list[float]:
    box = page.get_by_role("spinbutton", name="ε (epsilon)", exact=True)
    out = []
    for i in range(count):
        value = f"{0.35 + 0.05 * (i % 6) + 0.001 * i:g}"
        box.fill(value)
        t0 = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(SETTLED, arg=f"pure {float(value):.4g}-DP", timeout=120_000, polling=25)
        out.append(time.perf_counter() - t0)
    return out


def page_switches(page) -> dict:
    out = {}
    nav = page.locator('[data-testid="stSidebarNav"]')
    for title in ("Privacy budget", "Diagnostics", "Compare methods"):
        t0 = time.perf_counter()
        nav.get_by_text(title, exact=True).click()
        page.get_by_role("heading").first.wait_for(timeout=60_000)
        page.wait_for_timeout(300)  # the rerun starts and marks elements stale
        page.wait_for_function(SETTLED_CHART, timeout=120_000, polling=50)
        out[title] = round(time.perf_counter() - t0, 3)
    return out


def prime() -> None:
    """Compile or load every kernel once in a separate process, so the server meets a warm numba cache."""
    subprocess.run([sys.executable, "-c", "import engine; p = engine.prepare(engine.spec_from_dict(engine.DEMO_SPEC));"
                    "[engine.run_method(p, {'name': m}, seed=0) for m in engine.METHOD_NAMES]"],
                   cwd=ROOT, check=True)


def load_report(test: str = "tests/test_load.py", variable: str = "DPL_LOAD_REPORT") -> dict | None:
    """Run a load test with ``variable`` pointing at a report file; its report, or None if it wrote none."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "load.json"
        subprocess.run([sys.executable, "-m", "pytest", "-q", test], cwd=ROOT, check=True,
                       env={**os.environ, variable: str(report)})
        return json.loads(report.read_text()) if report.exists() else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--changes", type=int, default=12, help="ε edits on the warm page (default 12)")
    ap.add_argument("--load", action="store_true", help="also run the six-session load test and report it")
    ap.add_argument("--thirty", action="store_true",
                    help="also run the thirty-session websocket load test and report it")
    ap.add_argument("--prime", action="store_true", help="warm the numba cache in a separate process first")
    args = ap.parse_args(argv)
    if args.prime:
        prime()
    out: dict = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            bare_s, page, server = first_view(browser, "bench/bare_app.py", Path(tmp) / "bare.log")
            page.close()
            server.__exit__(None, None, None)
            app_s, page, server = first_view(browser, "app.py", Path(tmp) / "app.log")
            try:
                changes = epsilon_changes(page, args.changes)
                switches = page_switches(page)
            finally:
                page.close()
                server.__exit__(None, None, None)
        finally:
            browser.close()
    out |= {"bare_first_view_s": round(bare_s, 3), "app_first_view_s": round(app_s, 3),
            "first_view_ratio": round(app_s / bare_s, 2), "epsilon_change_s": _quantiles(changes),
            "page_switch_s": switches}
    if args.load:
        out["load"] = load_report()
    if args.thirty:
        out["thirty"] = load_report("tests/test_load_thirty.py", "DPL_LOAD_REPORT30")
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:22s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
