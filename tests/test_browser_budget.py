"""Real-browser checks of the Privacy budget page: what only a browser shows (issue 20, items 2 and 17).

The page's own widgets keep their values through an invalid grid and a page switch *in the browser* (the
server kept them before too, while the browser drew the widgets at their defaults), and the figures'
download buttons show their whole labels at 1400 px and at 390 px; the two figures side by side keep most of
their width for the plot (their legends below it) at 1024 px."""
import pytest
from playwright.sync_api import expect, sync_playwright

from browser_support import CHART, CHROMIUM, CHROMIUM_ARGS, streamlit_server

pytestmark = pytest.mark.serial  # a server of its own: make test runs these files alone, after the rest

TRUNCATED = """() => [...document.querySelectorAll('[data-testid="stDownloadButton"] button')].map(b => {
    const cut = [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1);
    return {text: b.innerText.trim(), cut: cut, width: b.getBoundingClientRect().width};
})"""


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    with streamlit_server(tmp_path_factory.mktemp("budget") / "streamlit.log") as url:
        yield url


def _open(p, url, width):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.goto(f"{url}/privacy_budget")
    expect(page.locator(CHART).nth(2)).to_be_visible(timeout=120_000)
    return browser, page


def _target(page):
    return page.get_by_role("textbox", name="Target posterior sd T", exact=False)


def _methods(page) -> str:
    return page.locator('[data-testid="stMultiSelect"]').first.inner_text()


@pytest.mark.parametrize("width", [1400, 390])
def test_download_buttons_show_their_whole_labels(app_url, width):
    with sync_playwright() as p:
        browser, page = _open(p, app_url, width)
        try:
            buttons = page.locator('[data-testid="stDownloadButton"] button')
            expect(buttons.first).to_be_visible()
            # the sweep's CSV button is drawn after the figures: read the labels once all seven are on the page (a
            # fresh clone read them at 390 px while the last was still coming: 6 found)
            page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stDownloadButton\"] button')"
                                   ".length >= 7", timeout=60_000)
            found = page.evaluate(TRUNCATED)
            assert len(found) >= 7, found  # PNG and HTML under each of the three figures, the sweep's CSV
            assert {b["text"].split()[-1] for b in found} == {"PNG", "HTML", "(CSV)"}, found
            assert not [b for b in found if b["cut"]], found
        finally:
            browser.close()


def test_side_by_side_figures_give_their_width_to_the_plot(app_url):
    """At 1024 px the interval and sd figures share the row (274 px each): with the legend on the right the plot
    kept a quarter of that (the sd figure's long legend entries); with it below, most of it."""
    with sync_playwright() as p:
        browser, page = _open(p, app_url, 1024)
        try:
            for i in range(2):
                chart = page.locator(CHART).nth(i)
                chart.scroll_into_view_if_needed()
                plot = chart.locator("rect.nsewdrag").first
                expect(plot).to_be_attached()
                share = plot.bounding_box()["width"] / chart.bounding_box()["width"]
                assert share >= 0.5, (i, share)
        finally:
            browser.close()


def test_page_widgets_survive_a_bad_grid_and_a_page_switch(app_url):
    with sync_playwright() as p:
        browser, page = _open(p, app_url, 1400)
        try:
            _target(page).fill("0.05")
            _target(page).press("Enter")
            expect(page.get_by_text("T = 0.05").first).to_be_visible(timeout=60_000)
            before = _methods(page)
            grid = page.get_by_role("textbox", name="ε grid", exact=False)
            grid.fill("0.5, abc")
            grid.press("Enter")
            expect(page.get_by_text("ε grid = '0.5, abc' is invalid")).to_be_visible(timeout=60_000)
            grid.fill("0.5, 1, 2")
            grid.press("Enter")
            expect(page.locator(CHART).nth(2)).to_be_visible(timeout=120_000)
            expect(_target(page)).to_have_value("0.05", timeout=30_000)  # the browser shows what the server keeps
            assert _methods(page) == before
            page.get_by_role("link", name="Compare methods").click()
            page.wait_for_url(lambda u: "privacy_budget" not in u, timeout=60_000)
            expect(page.locator(CHART).first).to_be_visible(timeout=120_000)
            page.get_by_role("link", name="Privacy budget").click()
            expect(page.locator(CHART).nth(2)).to_be_visible(timeout=120_000)
            expect(_target(page)).to_have_value("0.05", timeout=30_000)
            expect(grid).to_have_value("0.5, 1, 2")
            assert _methods(page) == before
            # Back and Forward move the page's own choices with the URL (they were read on a first run only)
            grid.fill("0.2, 2, 20")
            grid.press("Enter")
            page.wait_for_function("() => window.location.search.includes('grid=0.2%2C2.0%2C20.0')", timeout=60_000)
            page.go_back()
            expect(grid).to_have_value("0.5, 1, 2", timeout=60_000)
            page.go_forward()
            expect(grid).to_have_value("0.2, 2, 20", timeout=60_000)
        finally:
            browser.close()
