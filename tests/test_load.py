"""Load test (issue "Reliability": concurrency): one `streamlit run` server, six browser sessions at
once, each changing ε and its method selection over and over. Every session must only ever see its
own results, with nothing on screen saying something went wrong, and a change made while a run is
in progress must leave the latest input's result only.

Whose result is on screen: session i sets ε = 0.2 + 0.1 i + 0.01 k at iteration k, unique to the
session and the iteration, and the Compare page states the Laplace scale it implies (b = 1/ε) in the
figure title (and in the sidebar's "Implied noise" caption on the pages that show it); the legend, the results table and the
URL say which methods ran. A MutationObserver, installed before the page loads, records every
figure title, noise caption and error element ever drawn, so a foreign or stale result that only
flashes by is caught as well as one that stays.

"Finished running" is Streamlit's own state: from the moment a rerun is requested until it ends,
every element the run has not redrawn yet carries ``data-stale="true"`` (after 0.5 s the header
also shows the running icon); when the run ends nothing is stale. An interaction is done when
nothing is stale, nothing runs and the screen is exactly the expected one; a foreign result or an
error element ends the wait at once. Its latency runs from the change (Enter in the ε box, a click
on a method switch) to the updated figure on screen. p50/p95 are printed (even without -s) and
written to load_latency.json in the test's tmp dir (and to the path in ``DPL_LOAD_REPORT``, which the
browser benchmark sets).

No clock decides a verdict. Before any session starts, the fixture makes one visit with a long wait
(the cold start: imports and, on a fresh clone, compiling the kernels) and then measures one session
alone on the warm server (open, two ε changes, a method switch). The wait for one screen under load is
derived from that baseline (WAIT_PER_BASELINE single-session latencies per concurrent session, never
below WAIT_FLOOR_MS), and every session runs at least MIN_ITERATIONS however long they take: a slow
machine shows as a slower latency report, not as a failure. What each session must see is unchanged.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

import pytest
from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import Error as PlaywrightError

from browser_support import CHROMIUM, CHROMIUM_ARGS, percentiles, streamlit_server, write_report
from figures.labels import METHOD_LABELS
from ui.compute.problems import prepare
from ui.compute.records import spec_json
from ui.params.scenario import DEFAULT_METHODS, METHODS, Scenario
from ui.params.spec import to_spec_dict
from ui.presets import DEMO

pytestmark = pytest.mark.serial  # a server of its own: make test runs these files alone, after the rest

SESSIONS = 6
MAX_ITERATIONS = 9      # k < 10 keeps ε = 0.2 + 0.1 i + 0.01 k unique across sessions
MIN_ITERATIONS = 2      # every session completes at least this many, however long they take
LOOP_SECONDS = 12.0     # after MIN_ITERATIONS, a session stops starting iterations after this long
COLD_WAIT_MS = 300_000  # the warm-up visit on a fresh server: imports and, on a fresh clone, kernel compilation
WAIT_FLOOR_MS = 30_000  # the derived wait for one screen is never shorter than this
WAIT_PER_BASELINE = 8   # ... and at least this many single-session latencies per concurrent session
VIEWPORT = {"width": 1400, "height": 1100}
EPSILON_LABEL = "ε (epsilon)"
OPENING = tuple(DEFAULT_METHODS)  # what a fresh session has switched on
SKIPPED_ON_DEMO = ("rjmcmc",)  # needs an unknown n; the demo's is known (ui.compute.records.Prepared.unavailable_reason)
OPENING_EPSILON = f"{Scenario().epsilon:g}"

PROBE = """
(() => {
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const text = (e) => (e.textContent || "").trim();
  // plotly draws a wrapped title or legend entry as one tspan per line: read it as one line of text
  const lines = (e) => { const l = e.querySelectorAll("tspan.line");
                         return l.length ? Array.from(l).map(text).join(" ") : text(e); };
  const TITLES = '[data-testid="stPlotlyChart"] .gtitle';
  const CAPTIONS = '[data-testid="stSidebar"] [data-testid="stCaptionContainer"]';
  const ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"], '
               + '[data-testid="stAlertContentWarning"]';
  const titles = () => all(TITLES).map(lines);
  const noise = () => all(CAPTIONS).map(text).filter((t) => t.startsWith("Implied noise"));
  // The convergence warning is information about a run, not something gone wrong: a session may show it.
  const errors = () => all(ERRORS).map(text).filter((t) => !t.includes("Not converged:"));
  const snapshot = () => {
    const eps = document.querySelector('[data-testid="stSidebar"] input[aria-label="ε (epsilon)"]');
    const query = new URLSearchParams(location.search);
    return {
      titles: titles(),
      noise: noise(),
      // A sampler that has not converged keeps its name with " (not converged)" after it.
      legend: all('[data-testid="stPlotlyChart"] .legendtext').map(lines).map((t) => t.replace(/ [(]not converged[)]$/, "")),
      table: all('[data-testid="stDataFrame"] table tbody tr').map((r) => (r.cells.length ? text(r.cells[0]) : "")),
      errors: errors(),
      stale: all('[data-stale="true"]').length,
      running: all('[data-testid="stStatusWidgetRunningIcon"]').length,
      epsilon_input: eps ? eps.value : null,
      query_epsilon: query.get("epsilon"),
      query_methods: query.get("methods"),
    };
  };
  const seen = {titles: new Set(), noise: new Set(), errors: new Set()};
  const record = () => {
    titles().forEach((t) => seen.titles.add(t));
    noise().forEach((t) => seen.noise.add(t));
    errors().forEach((t) => seen.errors.add(t));
  };
  window.__dpl = {
    snapshot,
    // Everything drawn since the last drain; what is on screen now starts the next record.
    drain: () => {
      const out = {titles: [...seen.titles], noise: [...seen.noise], errors: [...seen.errors]};
      Object.values(seen).forEach((s) => s.clear());
      record();
      return out;
    },
    matches: (expected) => {
      const s = snapshot();
      return Object.keys(expected).every((k) => JSON.stringify(s[k]) === JSON.stringify(expected[k]));
    },
    // Something drawn since the last drain that is none of these results, or an error element.
    wrong: (allowedTitles) => {
      const ok = new Set(allowedTitles);
      const okNoise = new Set(allowedTitles.map((t) => "Implied noise: " + t));
      return [...seen.titles].some((t) => t && !ok.has(t)) || [...seen.noise].some((t) => !okNoise.has(t))
             || seen.errors.size > 0;
    },
    showsTitle: (title) => titles().includes(title),
    showsLegend: (legend) => JSON.stringify(snapshot().legend)
                             === JSON.stringify(legend),
  };
  new MutationObserver(record).observe(document, {childList: true, subtree: true, characterData: true});
})();
"""


#: OPS's legend entry on the demo (k = Scenario().ops_k released draws), its two lines read as one
OPS_LEGEND = f"OPS: {Scenario().ops_k:,} released posterior draws (a private release, wider by design)"


# --------------------------------------------------------------------------- expected screens
def session_epsilon(session: int, iteration: int) -> str:
    """ε of a session's iteration as typed (and as the "%g" box shows it): unique per pair."""
    return f"{round(0.2 + 0.1 * session + 0.01 * iteration, 2):g}"


def mechanism_text(epsilon: str) -> str:
    """The Laplace mechanism's description at ε: scale b = 1/ε (the demo's sensitivity is 1)."""
    eps = float(epsilon)
    return f"Laplace noise, scale b = {1.0 / eps:.4g}; pure {eps:.4g}-DP (sensitivity 1)"


def expected_screen(epsilon: str, methods: tuple[str, ...]) -> dict:
    """The whole settled Compare page of the demo scenario at this ε with these methods switched on."""
    chosen = [m for m in METHODS if m in methods]
    # the demo's n is known: RJMCMC is switched on (the URL says so) but skipped with a caption in the run
    # log, so it has no curve and no row (a session reaches it at k = 6 when the machine is fast enough)
    labels = [METHOD_LABELS[m] for m in chosen if m not in SKIPPED_ON_DEMO]
    # the figure's legend names OPS by what it is (figures.posteriors); Compare states the mechanism once, in
    # the figure's title, so its sidebar shows no "Implied noise" caption
    legend = [OPS_LEGEND if label == METHOD_LABELS["ops"] else label for label in labels]
    return {
        "titles": [mechanism_text(epsilon)],
        "noise": [],
        "legend": legend + ["Confidential-data posterior", "True value"],
        "table": labels + ["Confidential data"],
        "errors": [],
        "stale": 0,
        "running": 0,
        "epsilon_input": epsilon,
        "query_epsilon": repr(float(epsilon)),
        "query_methods": ",".join(chosen),
    }


def test_the_demo_skips_only_what_the_expected_screens_leave_out():
    prepared = prepare(spec_json(to_spec_dict(DEMO)))
    assert tuple(m for m in METHODS if prepared.unavailable_reason(m)) == SKIPPED_ON_DEMO


class WrongScreen(AssertionError):
    """A session saw something other than its own latest result."""


# --------------------------------------------------------------------------- one session
@dataclass
class Session:
    index: int
    page: Page
    epsilon: str = OPENING_EPSILON
    methods: tuple[str, ...] = OPENING
    latencies: list[tuple[str, float]] = field(default_factory=list)
    iterations: int = 0
    failure: str | None = None
    open_s: float | None = None
    wait_ms: float = WAIT_FLOOR_MS

    @property
    def expected(self) -> dict:
        return expected_screen(self.epsilon, self.methods)

    async def open(self, url: str) -> None:
        t0 = time.monotonic()
        await self.page.goto(url, timeout=self.wait_ms)
        await self.settle(allowed_titles={mechanism_text(self.epsilon)})
        self.open_s = time.monotonic() - t0

    async def settle(self, allowed_titles: set[str]) -> dict:
        """Wait until the page has finished running and shows exactly the expected screen, then check
        everything drawn on the way there was one of ``allowed_titles`` (returned: the distinct
        titles, noise captions and errors drawn). A foreign result or an error ends the wait at once."""
        expected, allowed = self.expected, sorted(allowed_titles)
        await self._until("([e, a]) => window.__dpl.matches(e) || window.__dpl.wrong(a)", [expected, allowed],
                          polling=100)
        seen = await self.page.evaluate("window.__dpl.drain()")
        foreign = [t for t in seen["titles"] if t and t not in allowed_titles]
        foreign += [t for t in seen["noise"] if t.removeprefix("Implied noise: ") not in allowed_titles]
        if foreign or seen["errors"]:
            raise WrongScreen(f"session {self.index} (ε = {self.epsilon}) drew {foreign} {seen['errors']}; "
                              f"its own results were {allowed}")
        if not await self.page.evaluate("e => window.__dpl.matches(e)", expected):
            raise WrongScreen(await self.describe_mismatch("it changed after settling"))
        body = await self.page.evaluate("document.body.innerText")
        if "Traceback" in body:
            raise WrongScreen(f"session {self.index} shows a traceback:\n{body}")
        return seen

    async def describe_mismatch(self, why: str) -> str:
        expected = self.expected
        seen = await self.page.evaluate("window.__dpl.snapshot()")
        diff = {k: {"expected": v, "seen": seen.get(k)} for k, v in expected.items() if seen.get(k) != v}
        return (f"session {self.index}: the screen for ε = {self.epsilon}, methods {self.methods} is wrong "
                f"({why}); differences: {json.dumps(diff, ensure_ascii=False)}")

    async def change_epsilon(self, epsilon: str) -> None:
        box = self.page.get_by_role("textbox", name=EPSILON_LABEL, exact=True)
        await box.fill(epsilon)
        allowed = [mechanism_text(self.epsilon), mechanism_text(epsilon)]
        t0 = time.monotonic()
        await box.press("Enter")
        self.epsilon = epsilon
        await self._until("([t, a]) => window.__dpl.showsTitle(t) || window.__dpl.wrong(a)",
                          [mechanism_text(epsilon), allowed])
        self.latencies.append(("epsilon", time.monotonic() - t0))
        await self.settle(allowed_titles=set(allowed))

    async def toggle_method(self, method: str) -> None:
        switch = self.page.get_by_role("switch", name=METHOD_LABELS[method], exact=True)
        label = self.page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"] label').filter(has=switch)
        allowed = [mechanism_text(self.epsilon)]
        t0 = time.monotonic()
        await label.click()  # the input itself is visually hidden under the drawn switch
        self.methods = tuple(m for m in METHODS if (m in self.methods) != (m == method))
        await self._until("([l, a]) => window.__dpl.showsLegend(l) || window.__dpl.wrong(a)",
                          [self.expected["legend"], allowed])
        self.latencies.append(("methods", time.monotonic() - t0))
        await self.settle(allowed_titles=set(allowed))

    async def _until(self, predicate: str, arg, polling: int = 50) -> None:
        try:
            await self.page.wait_for_function(predicate, arg=arg, polling=polling, timeout=self.wait_ms)
        except PlaywrightError as exc:
            raise WrongScreen(await self.describe_mismatch(f"not shown within {self.wait_ms / 1000:.3g} s: "
                                                           f"{type(exc).__name__}")) from None

    async def run(self, seconds: float) -> None:
        """Alternate ε changes and method switches: at least MIN_ITERATIONS, then more until the time
        or the iteration budget is used (a slow machine runs fewer iterations, never too few)."""
        stop = time.monotonic() + seconds
        try:
            for k in range(MAX_ITERATIONS):
                if k >= MIN_ITERATIONS and time.monotonic() >= stop:
                    break
                await self.change_epsilon(session_epsilon(self.index, k))
                # switch one method off on even k and back on on odd k: never fewer than four on
                await self.toggle_method(METHODS[(self.index + k // 2) % len(METHODS)])
                self.iterations += 1
        except Exception as exc:  # recorded, so the other sessions finish and the report is whole
            self.failure = f"{type(exc).__name__}: {exc}"


async def new_session(browser: Browser, index: int, wait_ms: float = WAIT_FLOOR_MS) -> Session:
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(PROBE)
    return Session(index=index, page=await context.new_page(), wait_ms=wait_ms)


# --------------------------------------------------------------------------- fixtures
@dataclass(frozen=True)
class Warm:
    """A served app that has answered one visit (imports done, kernels compiled or loaded, the demo's
    results cached), and what one session alone measured on it: the baseline the waits derive from."""

    url: str
    cold_open_s: float
    baseline: dict

    @property
    def wait_ms(self) -> float:
        """Longest wait for one screen with SESSIONS sessions at once: WAIT_PER_BASELINE single-session
        latencies per session (they share two cores), never below WAIT_FLOOR_MS."""
        return max(WAIT_FLOOR_MS, WAIT_PER_BASELINE * SESSIONS * 1000 * self.baseline["max_s"])


async def _warm_up(url: str) -> tuple[float, dict]:
    """One visit with a long wait (the cold start), then one session alone: open, two ε changes and
    a method switch on values no load-test session uses (1.5, 1.6)."""
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            cold = await new_session(browser, -1, wait_ms=COLD_WAIT_MS)
            await cold.open(url)
            alone = await new_session(browser, -2, wait_ms=COLD_WAIT_MS)
            await alone.open(url)
            await alone.change_epsilon("1.5")
            await alone.toggle_method(METHODS[0])
            await alone.change_epsilon("1.6")
            times = [alone.open_s] + [t for _, t in alone.latencies]
            return cold.open_s, {"open_s": round(alone.open_s, 3), "changes_s": [round(t, 3) for t in times[1:]],
                                 "max_s": max(times)}
        finally:
            await browser.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Warm:
    with streamlit_server(tmp_path_factory.mktemp("load") / "streamlit.log") as url:
        cold, baseline = asyncio.run(_warm_up(url))
        yield Warm(url=url, cold_open_s=cold, baseline=baseline)


# --------------------------------------------------------------------------- tests
def test_six_concurrent_sessions_only_ever_see_their_own_results(app, tmp_path, capsys, record_property):
    assert len({session_epsilon(i, k) for i in range(SESSIONS) for k in range(MAX_ITERATIONS)}) \
        == SESSIONS * MAX_ITERATIONS

    async def drive() -> tuple[list[Session], float]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                sessions = [await new_session(browser, i, wait_ms=app.wait_ms) for i in range(SESSIONS)]

                async def one(s: Session) -> None:
                    try:
                        await s.open(app.url)
                    except Exception as exc:
                        s.failure = f"opening the page: {type(exc).__name__}: {exc}"
                        return
                    await s.run(LOOP_SECONDS)

                t0 = time.monotonic()
                await asyncio.gather(*(one(s) for s in sessions))
                return sessions, time.monotonic() - t0
            finally:
                await browser.close()

    sessions, wall = asyncio.run(drive())

    latencies = [t for s in sessions for _, t in s.latencies]
    report = {
        "sessions": SESSIONS,
        "cold_first_view_s": round(app.cold_open_s, 1),
        "single_session_baseline": app.baseline,
        "wait_limit_s": round(app.wait_ms / 1000, 1),
        "wall_time_s": round(wall, 1),
        "iterations_per_session": [s.iterations for s in sessions],
        "first_load_s": [None if s.open_s is None else round(s.open_s, 1) for s in sessions],
        "all": percentiles(latencies) if latencies else None,
        "by_change": {kind: percentiles([t for s in sessions for k, t in s.latencies if k == kind])
                      for kind in ("epsilon", "methods") if any(k == kind for s in sessions for k, _ in s.latencies)},
    }
    write_report(report, tmp_path, "load_latency.json", "DPL_LOAD_REPORT")
    record_property("load_latency", json.dumps(report))
    with capsys.disabled():
        print(f"\nload test: {json.dumps(report)}\n(also in {tmp_path / 'load_latency.json'})")

    failures = [f"session {s.index}: {s.failure}" for s in sessions if s.failure]
    assert not failures, "\n".join(failures)
    assert all(s.iterations >= MIN_ITERATIONS for s in sessions), report["iterations_per_session"]


def test_a_change_during_a_run_leaves_only_the_latest_result(app, capsys):
    """ε changed twice in a row, the second time while the rerun for the first change is still
    running: the page ends on the second value's result, stays there, and draws nothing but the
    previous, the first and the second value's results. A last round commits both values back to
    back, before the first rerun has even started."""
    # fresh values (0.8 to 0.99): none is the demo's 1 or a load-test session's (0.2 to 0.79)
    pairs = iter([(f"{round(0.8 + 0.02 * j, 2):g}", f"{round(0.81 + 0.02 * j, 2):g}") for j in range(10)])
    in_run_rounds, max_tries = 3, 8

    async def one_round(s: Session, box, first: str, second: str, wait_for_run: bool) -> tuple[bool, bool]:
        """(whether the second change was made while the first run was under way, whether the first
        value's figure was drawn before the second replaced it)."""
        before = mechanism_text(s.epsilon)
        await box.fill(first)
        await box.press("Enter")
        during = not wait_for_run
        if wait_for_run:
            # Under way: the first value reached the link (the sidebar synced it) and the page is still stale.
            # Finished (nothing stale, its figure drawn) means this round came too late: no count.
            state = await s.page.wait_for_function(
                """([n, t]) => { const x = window.__dpl.snapshot();
                                 if (x.stale > 0 && Number(x.query_epsilon) === Number(n)) return "running";
                                 if (x.stale === 0 && x.titles.includes(t)) return "finished";
                                 return false; }""",
                arg=[first, mechanism_text(first)], polling=10, timeout=s.wait_ms)
            during = await state.json_value() == "running"
        await box.fill(second)
        await box.press("Enter")
        s.epsilon = second
        seen = await s.settle(allowed_titles={before, mechanism_text(first), mechanism_text(second)})
        await s.page.wait_for_timeout(1500)  # a late result of the first run would land now
        if not await s.page.evaluate("e => window.__dpl.matches(e)", s.expected):
            raise WrongScreen(await s.describe_mismatch("it changed after settling"))
        await s.settle(allowed_titles={mechanism_text(second)})
        return during, mechanism_text(first) in seen["titles"]

    async def drive() -> list[tuple[bool, bool]]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                s = await new_session(browser, SESSIONS, wait_ms=app.wait_ms)
                await s.open(app.url)
                box = s.page.get_by_role("textbox", name=EPSILON_LABEL, exact=True)
                rounds = []
                for _ in range(max_tries):
                    rounds.append(await one_round(s, box, *next(pairs), wait_for_run=True))
                    if sum(during for during, _ in rounds) == in_run_rounds:
                        break
                rounds.append(await one_round(s, box, *next(pairs), wait_for_run=False))
                return rounds
            finally:
                await browser.close()

    rounds = asyncio.run(drive())
    caught = sum(during for during, _ in rounds[:-1])
    with capsys.disabled():
        print(f"\nchange during a run: {caught} of {len(rounds) - 1} rounds made the second change while the "
              f"first run was under way; the first value's figure was drawn in {sum(d for _, d in rounds)} of "
              f"{len(rounds)} rounds before the second value's result replaced it")
    assert caught == in_run_rounds, rounds
