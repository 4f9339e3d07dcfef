"""One real-browser test: the app served by `streamlit run`, driven by Debian's chromium via Playwright."""
import pytest
from playwright.sync_api import expect, sync_playwright

from browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, TABLE, streamlit_server

pytestmark = pytest.mark.serial  # a server of its own: make test runs these files alone, after the rest


#: the results table's glide grid: the width of its columns (wide) and of its box (shown)
TABLE_WIDTH = f"""() => {{
  const scroller = document.querySelector('{TABLE} .dvn-scroller');
  return {{wide: scroller.scrollWidth, shown: scroller.clientWidth}};
}}"""


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """One server for the tests that do not need a fresh one (a server start is about 3 s)."""
    with streamlit_server(tmp_path_factory.mktemp("browser") / "streamlit.log") as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path):
    """A server no browser has visited yet."""
    with streamlit_server(tmp_path / "streamlit.log") as url:
        yield url


def test_compare_page_updates_when_epsilon_changes(app_url, tmp_path):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(app_url)
            chart = page.locator(CHART).first
            expect(chart).to_be_visible(timeout=90_000)
            expect(chart.locator(".gtitle")).to_contain_text("pure 0.3-DP", timeout=60_000)
            expect(page.locator(TABLE).first).to_be_visible()
            # a presenter's 1,280 px window, sidebar open: the demo's table shows every column without scrolling
            # (its last column, the sampler's time, was cut: 855 px of grid in 818)
            page.set_viewport_size({"width": 1280, "height": 800})
            page.wait_for_timeout(500)
            grid = page.evaluate(TABLE_WIDTH)
            assert grid["wide"] <= grid["shown"] + 2, grid
            page.set_viewport_size({"width": 1400, "height": 1100})

            epsilon = page.get_by_role("textbox", name="ε (epsilon)", exact=True)
            epsilon.fill("2")
            epsilon.press("Enter")

            expect(chart.locator(".gtitle")).to_contain_text("pure 2-DP", timeout=60_000)
            expect(page.locator(TABLE).first).to_be_visible()
            assert page.locator(f"{CHART} .scatterlayer .trace").count() >= 5  # every method + truth
            box = page.locator(TABLE).first.bounding_box()
            assert box is not None and box["height"] > 100
            page.wait_for_function("() => window.location.search.includes('epsilon=2.0')", timeout=10_000)
            shot = tmp_path / "compare.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 20_000
            # Back undoes the change and Forward redoes it (a lecturer's Back did nothing twice: the page kept ε = 2
            # and wrote it into the URL again)
            page.go_back()
            expect(chart.locator(".gtitle")).to_contain_text("pure 0.3-DP", timeout=60_000)
            expect(epsilon).to_have_value("0.3")
            page.go_forward()
            expect(chart.locator(".gtitle")).to_contain_text("pure 2-DP", timeout=60_000)
            expect(epsilon).to_have_value("2")
        finally:
            browser.close()


DRAWN = """() => {
  const bg = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
  const strokes = [...document.querySelectorAll('[data-testid="stPlotlyChart"] .scatterlayer .trace path.js-line')]
    .map(p => p.style.stroke || getComputedStyle(p).stroke).filter(s => s && s !== 'none');
  return {bg, strokes: [...new Set(strokes)]};
}"""


def test_curves_keep_their_contrast_on_the_dark_theme(app_url):
    """With the browser set to dark, Streamlit's theme takes the figures' background (figures/palette.py assumes
    BACKGROUNDS["dark"]) and keeps their line colours: every curve on Compare is 3:1 or more against the page's
    background as the browser draws it (the best method's indigo was 1.5:1)."""
    from figures.palette import BACKGROUNDS, MIN_CONTRAST, contrast_ratio

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1100}, color_scheme="dark").new_page()
            page.goto(app_url)
            chart = page.locator(CHART).first
            expect(chart.locator(".gtitle")).to_contain_text("pure 0.3-DP", timeout=90_000)
            expect(page.locator(f"{CHART} .scatterlayer .trace path.js-line").first).to_be_visible(timeout=30_000)
            drawn = page.evaluate(DRAWN)
            # the reader can switch themes in the app too: its menu keeps the theme's choice (phone audit s23: with
            # the toolbar "minimal" there was no menu, and the theme only followed the operating system)
            page.locator('[data-testid="stMainMenu"]').click()
            expect(page.get_by_role("menuitemradio", name="Dark")).to_be_visible(timeout=10_000)
        finally:
            browser.close()
    assert drawn["bg"] == "rgb(23, 22, 20)" and contrast_ratio(BACKGROUNDS["dark"], drawn["bg"]) == 1.0, drawn
    assert len(drawn["strokes"]) >= 5, drawn  # naive, DA-MCMC, ABC, exact, confidential, truth
    low = {s: round(contrast_ratio(s, drawn["bg"]), 2) for s in drawn["strokes"]
           if contrast_ratio(s, drawn["bg"]) < MIN_CONTRAST}
    assert not low, low


def test_shared_deep_link_opens_through_the_router(fresh_app_url):
    """First visit to a fresh server is a shared link to the Privacy budget page: the router's
    navigation and the linked scenario (Gong's count) must show, not Streamlit's pages/ fallback."""
    from urllib.parse import urlencode

    from ui.params.query import to_query
    from ui.presets import PRESETS

    gong = next(p.scenario for p in PRESETS if p.name == "gong")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(f"{fresh_app_url}/privacy_budget?{urlencode(to_query(gong))}")
            expect(page.get_by_role("heading", name="Privacy budget")).to_be_visible(timeout=90_000)
            nav = page.locator('[data-testid="stSidebarNav"]')
            expect(nav.get_by_text("Compare methods")).to_be_visible()
            expect(nav.get_by_text("app", exact=True)).to_have_count(0)
            # the page's heading can come before the sidebar's widgets (a loaded machine: 5 s did not suffice)
            expect(page.get_by_role("textbox", name="ε (epsilon)", exact=True)).to_have_value("0.2", timeout=30_000)
            expect(page.locator(CHART).first).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Page not found")).to_have_count(0)
        finally:
            browser.close()


def test_compare_page_is_usable_at_1024_px(app_url):
    """At 1024 px the figure and the results table fit the window (the table scrolls inside its own frame,
    nothing is cut off at the window's edge) and the sidebar can be collapsed for more room."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 900})
            page.goto(app_url)
            chart = page.locator(CHART).first
            expect(chart).to_be_visible(timeout=90_000)
            table = page.locator(TABLE).first
            expect(table).to_be_visible(timeout=60_000)
            for element in (chart, table):
                box = element.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1024
            # a keyboard user sees where they are: the focused link, and the box around a focused text box (its
            # own <input> is clipped), get the ring of ui/style.py; the links had only the current page's grey
            ring = "() => { const e = document.activeElement; return [e.tagName, getComputedStyle(e).outline, " \
                   "getComputedStyle(e.closest('[data-testid=stTextInputRootElement]') || e).outline]; }"
            page.locator('[data-testid="stSidebarNav"] a').nth(1).focus()
            page.keyboard.press("Tab")
            tag, outline, _ = page.evaluate(ring)
            assert tag == "A" and outline == "rgb(47, 126, 232) solid 3px", (tag, outline)
            page.get_by_role("textbox", name="n (number of confidential records)").focus()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")
            tag, _, outline = page.evaluate(ring)
            assert tag == "INPUT" and outline == "rgb(47, 126, 232) solid 3px", (tag, outline)
            sidebar = page.locator('[data-testid="stSidebar"]')
            expect(sidebar).to_have_attribute("data-collapsed", "false")
            sidebar.hover()  # the collapse control shows on hover
            page.get_by_role("button", name="Collapse sidebar").click()
            expect(sidebar).to_have_attribute("data-collapsed", "true", timeout=10_000)
        finally:
            browser.close()


def test_what_it_protects_page_follows_epsilon(app_url):
    """The What it protects page, opened by its link: three figures and the computed sentence, which
    follows the sidebar's epsilon (demo: Laplace at 0.3 -> at most 57%; at 1 -> at most 73%)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(f"{app_url}/protection")
            expect(page.get_by_role("heading", name="What it protects")).to_be_visible(timeout=90_000)
            expect(page.locator(CHART)).to_have_count(3, timeout=60_000)
            expect(page.get_by_text("could move a 50% guess about one person to at most 57%")).to_be_visible()
            # the trade-off plot is square and its axes are error rates: no tick outside [0, 1] on either axis
            # (a wide column once stretched the x-axis to -0.5 .. 1.5 to keep the square)
            tradeoff = page.locator(CHART).first
            for axis in ("xtick", "ytick"):
                ticks = tradeoff.locator(f"g.{axis} text").all_text_contents()
                values = [float(t.replace("\u2212", "-")) for t in ticks]
                assert values and 0.0 <= min(values) and max(values) <= 1.0, (axis, ticks)
            epsilon = page.get_by_role("textbox", name="ε (epsilon)", exact=True)
            epsilon.fill("1")
            epsilon.press("Enter")
            expect(page.get_by_text("could move a 50% guess about one person to at most 73%")).to_be_visible(timeout=60_000)
            expect(page.locator(CHART)).to_have_count(3)
        finally:
            browser.close()
