"""Issue 20 in a real browser: the three personas' walk and what only a browser shows about layout.

* A lecturer opens every Learn preset: each lands on Compare with its figure and table, no error and no
  not-converged or too-few-draws warning (a teaching preset opens on converged results).
* At 1400 px and at 390 px (a phone), Compare's results table shows every row (no inner scroll hides
  any), no button label is cut, and the page title and the figure title fit their boxes.
"""
import pytest
from playwright.sync_api import expect, sync_playwright

from browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, TABLE, streamlit_server
from ui.presets import BAYES_VS_MLE, EPSILON_ONE, PRESETS

pytestmark = pytest.mark.serial  # a server of its own: make test runs these files alone, after the rest

SETTLED = f"""() => !!document.querySelector('{CHART} .main-svg')
  && !document.querySelectorAll('[data-stale="true"]').length
  && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')"""
ALARMS = """() => [...document.querySelectorAll('[data-testid="stAlert"], [data-testid="stException"]')]
  .map(e => e.innerText.trim()).filter(t => /Not converged|Too few draws|Traceback|Error|error/.test(t))"""
CUT = """() => [...document.querySelectorAll('[data-testid="stDownloadButton"] button, [data-testid="stButton"] button, h1')]
  .filter(b => b.offsetParent !== null)
  .map(b => ({text: b.innerText.trim(), cut: [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)}))
  .filter(b => b.cut)"""
TABLE_ROWS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(t => {
  const scroller = t.querySelector('.dvn-scroller') || t;
  return {inner: scroller.scrollHeight, outer: scroller.clientHeight, wide: scroller.scrollWidth,
          shown: scroller.clientWidth};
})"""


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    with streamlit_server(tmp_path_factory.mktemp("personas") / "streamlit.log") as url:
        yield url


def _settle(page) -> None:
    page.wait_for_timeout(600)
    page.wait_for_function(SETTLED, timeout=180_000, polling=100)
    page.wait_for_timeout(400)


def test_three_personas_open_every_learn_preset_without_an_alarm(app_url):
    """The lecturer's presets land on Compare (figure and table), the stakeholder's 'What ε = 1 means' on
    What it protects (its three figures), and the curator's count of 2,000 people on Privacy budget: no
    error, no not-converged or too-few-draws warning anywhere."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            walk = [(preset, f"Load “{preset.title}”", TABLE) for preset in (*PRESETS, BAYES_VS_MLE)]
            walk += [(preset, f"Open “{preset.title}” in What it protects", CHART) for preset in EPSILON_ONE]
            for preset, label, lands_on in walk:
                page.goto(f"{app_url}/learn")
                button = page.get_by_role("button", name=label)
                expect(button).to_be_visible(timeout=120_000)
                button.click()
                expect(page.get_by_text(f"Loaded the preset “{preset.title}”.")).to_be_visible(timeout=120_000)
                _settle(page)
                expect(page.locator(lands_on).first).to_be_visible(timeout=60_000)
                assert page.evaluate(ALARMS) == [], (preset.name, page.evaluate(ALARMS))
            page.goto(f"{app_url}/privacy_budget?model=beta_binomial&n=2000&prior.a=1.0&prior.b=1.0&mech=laplace"
                      "&budget=epsilon&epsilon=1.0&data=simulate&truth=0.3&seed=7&methods=naive%2Cexact")
            _settle(page)
            expect(page.get_by_text("Choose ε: what it protects and what it costs")).to_be_visible(timeout=60_000)
            assert page.evaluate(ALARMS) == [], page.evaluate(ALARMS)
        finally:
            browser.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_compare_shows_every_row_and_every_label_at(app_url, width):
    """A 36-row Dirichlet table (k = 6 cells) must show all its rows; buttons and titles are not cut. At 1,280 px
    (a presenter's window, sidebar open) every column too: it was 857 px of grid in 818 before the parameter's pinned
    column took "param" as its header and the method, ESS and R-hat columns their measured widths."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(f"{app_url}/?model=dirichlet_multinomial&n=200&prior.alpha=1%2C+1%2C+1%2C+1%2C+1%2C+1"
                      "&mech=laplace&budget=epsilon&epsilon=1.0&data=simulate"
                      "&truth=0.1%2C+0.1%2C+0.2%2C+0.2%2C+0.2%2C+0.2&seed=3&methods=naive%2Cauto")
            _settle(page)
            toggle = page.get_by_text("Every parameter in the table (6)")
            toggle.click()
            _settle(page)
            tables = page.evaluate(TABLE_ROWS)
            assert tables and all(t["inner"] <= t["outer"] + 2 for t in tables), tables  # nothing scrolls inside
            if width >= 1280:  # a desktop shows every column too (a phone scrolls them, the names pinned)
                assert all(t["wide"] <= t["shown"] + 2 for t in tables), tables
            assert page.evaluate(CUT) == [], page.evaluate(CUT)
            title = page.locator(f"{CHART} .gtitle").first
            box, chart = title.bounding_box(), page.locator(CHART).first.bounding_box()
            assert box["x"] >= chart["x"] - 1 and box["x"] + box["width"] <= chart["x"] + chart["width"] + 1
        finally:
            browser.close()
