"""Privacy budget page: how posterior location and width move as epsilon changes.

State: the page's own widgets (ε grid, methods, target T, the ε slider, the releases choice) keep their values
with ``persist_state="session"``: through an invalid entry that stops the page before they are drawn and through
a page switch. (Re-seeding them from a copy, as ``ui/sidebar/state.py`` does for the always-drawn sidebar, does
not reach the browser: a widget that comes back under the same key is drawn with its default while the server
keeps the old value.)

Link: the ε grid, target T and "Your ε" are mirrored into the URL (``grid``, ``target``, ``your_eps``:
:func:`ui.params.query.budget_page_to_query`) beside the sidebar's scenario, each only while it is valid; where
the URL holds other values than the page last wrote (a link, the page's first visit, Back, Forward) they are read
back before the sidebar is drawn (which keeps them when it writes the scenario, :data:`ui.sidebar.state._PAGE_KEYS`),
a value that does not read being refused with the link's usual message.

"Your ε" explores one ε of the grid on this page; the sidebar's ε, which drives Compare, changes only through
the button "Use ε = … in the sidebar" (which sets the ε box alone: the other boxes keep what they hold).

Downloads: every figure's PNG and HTML carry a title and the scenario (:func:`figures.budget.with_scenario`), file
names start with the scenario (:func:`ui.compute.sweeps.sweep_stem`), and the sweep's table is a CSV.
"""
import math

import streamlit as st

from figures import budget, posteriors
from figures.frontier import frontier_figure
from figures.axes import param_symbol
from figures.labels import MECHANISM_LABELS, METHOD_LABELS, TERM_HELP, result_label
from ui import downloads, keys, narrative, picker, protection_text, terms
from ui.compute import method_runs, protection, sweeps
from ui.compute.files import name_part
from ui.compute import release as release_compute
from ui.params.carry import lab_equivalent
from ui.params.messages import in_words
from ui.params.parsing import grid_value, log_grid, parse_grid
from ui.params.query import BUDGET_PAGE_KEYS, budget_page_from_query, budget_page_to_query
from ui.routing import ensure_routed, history_navigation
from ui.sidebar import controls
from ui.sidebar.inputs import scenario_inputs
from ui.sidebar.state import load_scenario
from ui.sidebar.numbers import number_field, read_number

ensure_routed()

st.title("Privacy budget")
_intro = st.empty()  # the sweep's description, or for a library's release what it needs (known after the sidebar)
PERSIST = "session"  # the page's widgets keep their values through bad input and page switches
with st.expander("What am I looking at?"):
    st.markdown(
        "Before choosing ε, a curator asks what each budget costs in accuracy. Left: each method's posterior mean "
        "and 90% interval at every ε on the grid (Ju et al. 2022, Fig. 1a). Right: the posterior sd against ε on "
        "log scales, with the target sd T you type; the message under the plots names the smallest ε on the grid "
        "that meets it. A circled x marks a sampler run that has not converged at that ε (R-hat > 1.01 or "
        "ESS < 400): read its point with suspicion. The slider at the bottom shows every posterior at one ε.")

terms.terms_expander(("epsilon", "delta", "rho", "zcdp", "sensitivity", "naive", "exact", "rhat", "ess", "q5_q95"))
DEFAULT_GRID = (0.1, 10.0, 7)


def _page_part() -> dict:
    """The URL's entries this page writes (target, grid, your_eps, sweep)."""
    return {k: v for k, v in st.query_params.to_dict().items() if k in BUDGET_PAGE_KEYS}


def _read_link() -> None:
    """The link's grid, target T and "Your ε" into the page's widgets (read before the sidebar is drawn) where the
    URL holds some and other values than the page last wrote: a session's first run on a link, the page's first
    visit, and Back or Forward (an entry the URL does not hold then goes back to the page's default; Back restored
    the sidebar's scenario but not these). A later run not marked as Back or Forward is an edit sent before the
    browser had the last run's URL: the widgets win (:func:`ui.routing.history_navigation`). A URL without any is a
    page switch (the navigation drops the query): the widgets keep the user's choices. A value that does not read
    is refused and said, the page's default kept."""
    state = st.session_state
    part = _page_part()
    if not part or part == state.get(keys.WRITTEN_BUDGET_QUERY):  # the widgets hold the user's choices
        return
    if keys.WRITTEN_BUDGET_QUERY in state and not history_navigation():  # an edit sent with an older URL
        return
    if keys.WRITTEN_BUDGET_QUERY in state:  # Back or Forward: what the URL does not hold is the page's default
        for k in (keys.W_GRID, keys.W_GRID_MIN, keys.W_GRID_MAX, keys.W_GRID_POINTS, keys.W_TARGET_SD, keys.W_STEP,
                  keys.W_SWEEP_METHODS):
            state.pop(k, None)
    state[keys.BUDGET_LINK_READ] = True  # "Your ε" keeps the link's value this run (it follows the sidebar's ε)
    linked, problems = budget_page_from_query(st.query_params.to_dict(), parse_grid(log_grid(*DEFAULT_GRID)))
    if "grid" in linked:
        grid_ = linked["grid"]
        st.session_state[keys.W_GRID] = ", ".join(f"{g:g}" if float(f"{g:g}") == g else repr(g) for g in grid_)
        st.session_state[keys.W_GRID_MIN], st.session_state[keys.W_GRID_MAX] = float(grid_[0]), float(grid_[-1])
        st.session_state[keys.W_GRID_POINTS] = max(len(grid_), 2)
    if "target" in linked:
        st.session_state[keys.W_TARGET_SD] = linked["target"]
    if "your_eps" in linked:
        st.session_state[keys.W_STEP] = linked["your_eps"]
    if "sweep" in linked:  # the page keeps those the scenario runs (below)
        st.session_state[keys.W_SWEEP_METHODS] = list(linked["sweep"])
    for problem in problems:
        st.warning(f"The link's page settings could not all be read ({problem}); using the page's default "
                   "instead.", icon=":material/link_off:")


def _link_choices() -> None:
    """The page's grid, target T, "Your ε" and methods to sweep into the URL, each only while its value is valid."""
    try:
        grid_ = parse_grid(str(st.session_state.get(keys.W_GRID, "")), "ε")
    except ValueError:
        grid_ = None
    target_ = read_number(keys.W_TARGET_SD, math.nan)
    step = st.session_state.get(keys.W_STEP)
    mine = budget_page_to_query(target=target_ if math.isfinite(target_) and target_ > 0 else None, grid=grid_,
                                your_eps=step if grid_ is not None and step in grid_ else None,
                                sweep=st.session_state.get(keys.W_SWEEP_METHODS))
    # one write, so one entry in the browser's history (a write per key left entries with a new grid and an old
    # "Your ε", and Back took three presses through them)
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in BUDGET_PAGE_KEYS} | mine
    if query != st.query_params.to_dict():
        st.query_params.from_dict(query)
    st.session_state[keys.WRITTEN_BUDGET_QUERY] = _page_part()


_read_link()
inputs = scenario_inputs("privacy_budget")
if inputs.scenario.uses_library:
    _intro.caption("The sweep rescales the lab's own mechanism at each ε. A release made with a library has its noise "
                   "fixed by the library's parameters: sweep it with the lab's mechanism of the same noise law (the "
                   "button below), or split a mean's ε between its sum and count.")
else:
    _intro.caption("Every ε on the grid gets its own release and posterior: the naive posterior stays narrow while "
                   "the exact one widens as the noise grows. Simulated or uploaded records are the same at every ε "
                   "(same seed), and so is the random draw behind the noise, rescaled to each ε (below the figures: "
                   "fresh releases instead); a typed-in s_dp is held fixed and only the budget it is read with "
                   "changes.")
if not inputs.ok:
    st.warning("The sweep waits for a valid scenario: fix the input marked in the sidebar. Your entries are kept.")
    st.stop()
s, prepared = inputs.scenario, inputs.prepared
if s.mechanism in ("gaussian", "discrete_gaussian"):
    st.info("Gaussian mechanisms are swept at ρ = ε²/2 (every ε-DP release is also ε²/2-zCDP), so one ε grid "
            "serves every mechanism; a Gaussian at that ρ is not ε-DP and allows stronger attacks than Laplace "
            "noise at ε (What it protects shows how much).")
elif s.mechanism == "randomized_response" and s.budget_form == "coin":
    st.info("The coin scheme's ε is fixed by its truth probability; the sweep uses k-ary randomized response "
            "at each ε instead.")


# ---- a mean released as (sum, count): the best split of ε (issue 22) ----------------------------------
def _sidebar_epsilon() -> float | None:
    """The total ε the sidebar states: the lab's ε, a library release's ``epsilon``, else the mechanism's."""
    if s.uses_library:
        given = dict(s.release_params).get("epsilon")
        return float(given) if isinstance(given, (int, float)) else prepared.epsilon
    return s.epsilon if s.budget_form in ("epsilon", "k_ary", "epsilon_delta") else prepared.epsilon


def _mean_split_section() -> None:
    """Inputs (bounds, sd, n, prior), engine.mean_budget_split (cached), its figure and one sentence."""
    eps = _sidebar_epsilon()
    if eps is None or not eps > 0:
        st.info("The split needs a total ε: state the sidebar's budget as ε.")
        return
    prior = s.prior_dict if s.model == "normal_known_sd" else {}
    start = {keys.W_MEAN_LOWER: float(prior.get("lo", 0.0)), keys.W_MEAN_UPPER: float(prior.get("hi", 10.0)),
             keys.W_MEAN_SD: float(prior.get("sd", 2.0)), keys.W_MEAN_N: int(s.n) if prior else 100,
             keys.W_MEAN_PRIOR_MEAN: float(prior.get("prior_mean", 5.0)),
             keys.W_MEAN_PRIOR_SD: float(prior.get("prior_sd", 5.0))}
    for k, v in start.items():
        st.session_state.setdefault(k, v)
    st.caption(f"OpenDP's `dp.mean` (and so dp-wizard) releases a mean of values clamped to [lower, upper] as a noisy "
               f"sum and a noisy count, each with half of its ε. With n private, the posterior sd of the mean depends "
               f"on the split: the sidebar's total ε = {eps:g} is split here to make it smallest, at the release one "
               "expects (records Normal(prior mean, sd²), n records; prior Poisson(n) on the private n).")
    c = st.columns(3)
    box = {"persist_state": PERSIST}
    lower = number_field("lower bound", keys.W_MEAN_LOWER, container=c[0], **box)
    upper = number_field("upper bound", keys.W_MEAN_UPPER, container=c[1], **box)
    sd = number_field("sd of one record", keys.W_MEAN_SD, container=c[2], **box)
    c = st.columns(3)
    n = number_field("n (records expected)", keys.W_MEAN_N, container=c[0], integer=True, lower=1, **box)
    prior_mean = number_field("prior mean of the mean", keys.W_MEAN_PRIOR_MEAN, container=c[1], **box)
    prior_sd = number_field("prior sd of the mean", keys.W_MEAN_PRIOR_SD, container=c[2], **box)
    if None in (lower, upper, sd, n, prior_mean, prior_sd):
        return  # the box says what is wrong
    try:
        with st.spinner("Finding the split that minimises the posterior sd…"):
            split = release_compute.mean_split(float(eps), float(lower), float(upper), float(sd), int(n),
                                               float(prior_mean), float(prior_sd))
    except ValueError as exc:  # the engine names its argument: name the box instead
        field, _, rest = str(exc).partition(" = ")
        boxes = {"lower": "lower bound", "sd": "sd of one record", "n": "n (records expected)",
                 "prior_sd": "prior sd of the mean", "epsilon": "the sidebar's ε"}
        st.error(f"The split could not be computed: {boxes.get(field, field)} = {rest}", icon="⚠️")
        return
    downloads.chart(budget.mean_split_plot(split["curve"], fraction_sum=split["fraction_sum"],
                                           posterior_sd=split["posterior_sd"], even_sd=split["even_posterior_sd"],
                                           epsilon=split["epsilon"]),
                    key=keys.MEAN_SPLIT_CHART, name="mean_budget_split")
    f, gain = split["fraction_sum"], split["improvement"]
    verdict = (f"**{gain:.1%} narrower** than with dp-wizard's even split ({split['even_posterior_sd']:.4g})"
               if gain >= 0.005 else f"within 0.5% of dp-wizard's even split ({split['even_posterior_sd']:.4g}): "
                                     "the even split is as good here")
    st.markdown(f"At ε = {split['epsilon']:g}, spending **{f:.0%} of ε on the sum** (ε = {split['epsilon_sum']:.3g}, "
                f"noise scale {split['sum_scale']:.3g}) and {1 - f:.0%} on the count (ε = "
                f"{split['epsilon_count']:.3g}, noise scale {split['count_scale']:.3g}) gives a posterior sd of the "
                f"mean of **{split['posterior_sd']:.4g}**, {verdict}.")


_mean_box = st.expander("A mean released as (sum, count): how to split ε between them", key=keys.W_MEAN_SPLIT,
                        on_change="rerun", icon=":material/call_split:")
with _mean_box:
    if _mean_box.open:  # computed only when opened (1–2 s the first time, cached after)
        _mean_split_section()

def _sweep_as_lab() -> None:
    """The button's click: the run it starts switches the sidebar to the lab's own mechanism of the release's noise
    law. That run reads the sidebar as the click left it (a value typed just before the click reaches the server
    with it); the scenario the button was drawn with would lose it (audit s24 races, as the Use ε button)."""
    st.session_state[keys.SWEEP_AS_LAB_REQUEST] = True


asked_for_lab = st.session_state.pop(keys.SWEEP_AS_LAB_REQUEST, None)  # read once, whatever the sidebar now holds
if s.uses_library:
    same = lab_equivalent(s)
    if asked_for_lab and same is not None:
        load_scenario(same[0])  # :func:`ui.params.carry.lab_equivalent`; its budget box says so once
        st.session_state[keys.BUDGET_NOTE] = same[1]
        st.rerun()
    if same is None:
        st.info("The ε sweep rescales the lab's own mechanism at each ε; this release's noise (clipped, bounded, on "
                "a lattice, or a mean's ratio) has no lab mechanism of the same law. Choose \"The lab's own "
                "simulation\" under How was it released? in the sidebar to sweep ε with a mechanism of your own.",
                icon=":material/info:")
    else:
        st.info(f"{same[1]} The button switches the sidebar to it, and the page sweeps ε around it.",
                icon=":material/info:")
        st.button("Sweep this noise with the lab's own mechanism", key=keys.W_SWEEP_AS_LAB, on_click=_sweep_as_lab,
                  type="primary")
    st.stop()

# ---- the grid -----------------------------------------------------------------------------------
def _sidebar_sweep_epsilon() -> float | None:
    """The sidebar's budget as an ε of the sweep: its ε (stated as ε or k-ary ε), or √(2ρ) for a ρ (the sweep runs
    Gaussians at ρ = ε²/2, so that ε gives the sidebar's noise); None where no ε of the sweep gives the sidebar's
    noise (a classic (ε, δ) Gaussian, the coin scheme)."""
    if s.release != "lab":
        return None
    if s.budget_form in ("epsilon", "k_ary") and s.epsilon > 0:
        return float(s.epsilon)
    if s.budget_form == "rho" and s.rho > 0:
        return math.sqrt(2.0 * s.rho)
    return None


own = _sidebar_sweep_epsilon()
if keys.W_GRID not in st.session_state:  # log-spaced, with the sidebar's ε among its points (the pages then agree)
    st.session_state[keys.W_GRID_MIN], st.session_state[keys.W_GRID_MAX] = DEFAULT_GRID[0], DEFAULT_GRID[1]
    st.session_state[keys.W_GRID_POINTS] = DEFAULT_GRID[2]
    default = parse_grid(log_grid(*DEFAULT_GRID))
    if own is not None and DEFAULT_GRID[0] < own < DEFAULT_GRID[1] and grid_value(own, default) is None:
        default = tuple(sorted(default + (float(f"{own:.6g}"),)))
    st.session_state[keys.W_GRID] = ", ".join(f"{g:g}" for g in default)


def _fill_grid():
    try:
        st.session_state[keys.W_GRID] = log_grid(read_number(keys.W_GRID_MIN, math.nan),
                                                 read_number(keys.W_GRID_MAX, math.nan),
                                                 read_number(keys.W_GRID_POINTS, 0, integer=True))
    except ValueError:
        pass  # the grid box keeps its text; the message below the inputs names the problem


c1, c2, c3, c4 = st.columns(4, vertical_alignment="bottom")
lo = number_field("smallest ε", keys.W_GRID_MIN, container=c1, persist_state=PERSIST)
hi = number_field("largest ε", keys.W_GRID_MAX, container=c2, persist_state=PERSIST)
number_field("points", keys.W_GRID_POINTS, container=c3, integer=True, lower=2, upper=25, persist_state=PERSIST)
c4.button("Fill log-spaced grid", key=keys.W_GRID_FILL, on_click=_fill_grid)
if lo is not None and hi is not None and not (lo > 0 and hi > lo):
    st.error(f"smallest ε = {lo:g}, largest ε = {hi:g} is invalid: a log-spaced grid needs 0 < smallest ε < "
             "largest ε")
grid_text = st.text_input("ε grid (edit freely; comma-separated)", key=keys.W_GRID, persist_state=PERSIST)
try:
    grid = parse_grid(grid_text, "ε")
except ValueError as exc:
    st.error(str(exc), icon="⚠️")
    _link_choices()
    st.stop()
# "Your ε": where the sidebar's ε changed since this page last ran and is on the grid, it moves there (it stayed put
# while Compare and What it protects moved on); else it starts at the sidebar's ε, or the grid value nearest it, or
# mid-grid. A link's value read this run is kept.
followed = grid_value(own, grid) if own is not None and not math.isclose(
    own, st.session_state.get(keys.BUDGET_SIDEBAR_EPS) or own) else None
st.session_state[keys.BUDGET_SIDEBAR_EPS] = own
if followed is not None and not st.session_state.pop(keys.BUDGET_LINK_READ, False):
    st.session_state[keys.W_STEP] = followed
elif st.session_state.get(keys.W_STEP) not in grid:
    st.session_state[keys.W_STEP] = grid[len(grid) // 2] if own is None else \
        min(grid, key=lambda g: abs(math.log(g / own)))
st.session_state.pop(keys.BUDGET_LINK_READ, None)

available = prepared.runnable(s.methods)
chosen = st.session_state.get(keys.W_SWEEP_METHODS)
if available and (chosen is None or not set(chosen) <= set(available)):  # first visit, a method switched off
    kept = [m for m in (chosen or []) if m in available]
    # by default naive against the exact posterior: DA-MCMC only where no exact method runs (at small ε its chain
    # mixes slowly and the default draws leave it marked "not converged" on the demo); the box adds it
    exact_family = [m for m in available if m in ("exact", "auto", "rjmcmc")]
    st.session_state[keys.W_SWEEP_METHODS] = kept or [m for m in available if m == "naive"] + (
        exact_family or [m for m in available if m == "da_mcmc"]) or available[:1]
_link_choices()  # here, before anything below stops the page; again once T has its default

if not available:
    st.info("Switch on at least one method in the sidebar.")
    st.stop()
methods = st.multiselect("Methods to sweep", available, key=keys.W_SWEEP_METHODS, format_func=METHOD_LABELS.get,
                         persist_state=PERSIST,
                         help="ABC rejection slows down sharply at large ε; it stops at its time limit.")
if not methods:
    st.info("Pick at least one method to sweep.")
    st.stop()


def _stop(key: str) -> None:
    st.session_state[keys.STOPPED_SWEEP] = key


def _run_again() -> None:
    st.session_state.pop(keys.STOPPED_SWEEP, None)
    sweeps.forget_stopped_sweep()


def _use_fit(fit: dict) -> None:
    """"Use settings that fit": the fitted grid into the grid widgets, the fitted draws (the fewest any
    sampler needs: they share the chain settings) and ABC's time limit into the sidebar."""
    points = fit["epsilons"]
    st.session_state[keys.W_GRID] = ", ".join(f"{e:.3g}" for e in points)
    st.session_state[keys.W_GRID_POINTS] = len(points)
    st.session_state[keys.W_GRID_MIN], st.session_state[keys.W_GRID_MAX] = float(points[0]), float(points[-1])
    samplers = [m for m in fit["methods"] if "draws" in m and "warmup" in m and m["name"] != "abc_rejection"]
    if samplers:
        controls.apply_method_settings("da_mcmc", min(samplers, key=lambda m: m["chains"] * m["draws"]))
    for m in fit["methods"]:
        if m["name"] == "abc_rejection" and "max_seconds" in m:
            controls.apply_method_settings("abc_rejection", m)


key = sweeps.sweep_key(s, inputs.records, grid, methods)
if st.session_state.get(keys.STOPPED_SWEEP) == key:
    sweep = sweeps.stopped_sweep(s, inputs.records, grid, methods)
    st.info("You stopped this sweep. Change an input, or run it again.", icon=":material/stop_circle:")
    st.button("Run again", key=keys.W_SWEEP_STOP + "_again", on_click=_run_again)
    if sweep is None or sweep.table.empty:
        st.stop()
    st.warning(f"{sweep.log}; showing those (kept for this session only, not cached).")
else:
    stop_slot = st.empty()
    stop_slot.button("Stop", key=keys.W_SWEEP_STOP, icon=":material/stop_circle:", on_click=_stop, args=(key,),
                     help="Stop the sweep; the runs that finished are shown, and what you entered stays.")
    try:
        sweep = sweeps.sweep(s, inputs.records, grid, methods)
    except ValueError as exc:
        st.error(f"The scenario does not run at every ε on the grid: {in_words(str(exc))}", icon="⚠️")
        st.stop()
    stop_slot.empty()
if sweep.over_budget:
    cost, fit = sweep.over_budget, sweep.over_budget["fit"]
    st.info(f"The sweep was not run: it {narrative.would_take(cost)}.", icon=":material/timer:")
    if fit:
        samplers = [m for m in fit["methods"] if "warmup" in m and m["name"] != "abc_rejection"]
        offer = f"{len(fit['epsilons'])} ε values ({', '.join(f'{e:.3g}' for e in fit['epsilons'])})"
        if samplers:
            least = min(samplers, key=lambda m: m["chains"] * m["draws"])
            if least["draws"] < s.draws or least["chains"] < s.chains:
                offer += f", {least['chains']} chains × {least['draws']:,} draws"
        st.button(f"Use settings that fit: {offer}", key=keys.W_SWEEP_FIT, on_click=_use_fit, args=(fit,))
    else:
        st.caption("Even 3 ε values with 100 draws do not fit: reduce n, or sweep Exact (best method) alone.")
    st.stop()
if sweep.skipped:
    with st.expander(f"{len(sweep.skipped)} runs did not produce draws"):
        for cell, why in sweep.skipped.items():
            method, _, at = cell.partition(" @ ")
            st.caption(f"{METHOD_LABELS.get(method, method)} at ε = {at}: {why}")
if sweep.table.empty:
    st.info("No run of the sweep produced draws.")
    st.stop()

param = picker.parameter_picker(prepared.param_names, keys.W_SWEEP_PARAM)
sym = param_symbol(param)  # θ, λ, μ; any other parameter by its name, as the figures write it
truth = (prepared.true_params or {}).get(param)
stem = sweeps.sweep_stem(s, prepared.n, grid, inputs.records)  # every download's name starts with the scenario
scenario_line = sweeps.scenario_words(s, inputs.records, prepared.n)


def _chart(fig, title: str, *, key: str, name: str, container=None) -> None:
    """A figure with its downloads, which carry ``title`` and the scenario (they leave the page's context)."""
    downloads.chart(fig, key=key, name=f"{stem}_{name}", container=container,
                    for_file=lambda: budget.with_scenario(fig, title, scenario_line))


# ---- interval and sd against epsilon ------------------------------------------------------------
left, right = st.columns(2)
_chart(budget.interval_plot(sweep.table, param, truth=truth, labels=sweep.labels),
       f"{sym}: 90% posterior interval vs ε, per method", key=keys.INTERVAL_CHART,
       name=f"interval_vs_epsilon_{name_part(param)}",
       container=left)
EXACT_PREFERENCE = ("rjmcmc", "exact", "auto", "pseudo_marginal", "da_mcmc", "abc_rejection")  # rjmcmc: n unknown
reference = next((m for m in EXACT_PREFERENCE if m in methods), methods[0])
ref_sd = sweep.table[(sweep.table["method"] == reference) & (sweep.table["param"] == param)]["sd"]
if keys.W_TARGET_SD not in st.session_state and not ref_sd.empty:
    st.session_state[keys.W_TARGET_SD] = float(f"{ref_sd.median():.2g}")
with right:
    target = number_field(f"Target posterior sd T for {sym}", keys.W_TARGET_SD, persist_state=PERSIST,
                          help="The widest posterior you can accept; the message under the figures names the "
                               "smallest ε on the grid whose exact posterior is this narrow. " + TERM_HELP["sd"])
    valid_target = target is not None and math.isfinite(target) and target > 0
    advice = sweeps.epsilon_advice(s, inputs.records, grid, param, target) if valid_target else None
    _chart(budget.sd_plot(sweep.table, param, target=target if valid_target else None,
                          exact_sd=advice.sds if advice else None,
                          confidential_sd=advice.confidential_sd if advice else None,
                          prior_sd=sweeps.prior_sds(s, inputs.records).get(param), labels=sweep.labels),
           f"{sym}: posterior sd vs ε, per method", key=keys.SD_CHART, name=f"sd_vs_epsilon_{name_part(param)}")
st.download_button("Sweep table (CSV)", data=lambda: sweeps.sweep_csv(sweep, s.mechanism),
                   file_name=f"{stem}_sweep.csv", mime="text/csv", on_click="ignore", key=keys.SD_CHART + "_csv",
                   icon=":material/table:",
                   help="Every ε, method and parameter of the sweep: posterior mean, sd, 90% interval (q5, q95), "
                        "R-hat, ESS and whether the run converged; for Gaussian noise the ρ = ε²/2 each row ran at.")
if s.data == "csv":
    st.caption("From the uploaded records: every ε of the grid drew its own release of them, so these figures and "
               "the table show far more of the records than one release at any ε would (at the grid's largest, "
               "nearly the records' own posterior). Keep the files where the records may go; share the release "
               "you make, and Compare's downloads, which hold only what reads it.")
if "converged" in sweep.table and not sweep.table["converged"].all():
    st.caption("Circled x: a sampler run that has not converged at that ε (R-hat > 1.01 or ESS < 400) — raise "
               "its draws, or sweep Exact (best method) instead.", help=f"{TERM_HELP['R-hat']} {TERM_HELP['ESS']}")
if target is None:
    pass  # the box says what is wrong with its text
elif not valid_target:
    st.error(f"Target posterior sd T = {target:g} is invalid: must be > 0 (a posterior sd is positive), e.g. "
             f"{float(f'{ref_sd.median():.2g}') if not ref_sd.empty else 0.05:g}.", icon="⚠️")
elif advice is not None:
    at_top = advice.sds[max(advice.sds)]
    if advice.verdict == "met":
        st.success(f"Smallest ε on the grid whose exact posterior sd of {sym} is at most T = {target:g}: "
                   f"**ε = {advice.epsilon:g}** (sd {advice.sds[advice.epsilon]:.4g}, computed from the exact "
                   "posterior itself, not estimated from draws).")
    elif advice.verdict == "impossible":
        st.warning(f"**No ε reaches T = {target:g}.** Even without noise (ε → ∞) the posterior of {sym} becomes "
                   f"the confidential-data posterior, whose sd is {advice.confidential_sd:.4g} with these "
                   f"{s.n:,} records: T is below it. More records would: the sd shrinks like 1/√n, so about "
                   f"**{advice.records_needed:,} records** reach T at a large ε (more at a small one). Or accept "
                   f"a T of at least {advice.confidential_sd:.3g}.", icon=":material/block:")
    elif advice.beyond is not None:
        st.warning(f"No ε on the grid gets the exact posterior sd of {sym} down to T = {target:g} (at ε = "
                   f"{max(advice.sds):g} it is {at_top:.4g}); **ε = {advice.beyond:g}** does: extend the grid "
                   "upwards.")
    else:
        st.warning(f"No ε on the grid, nor up to {max(advice.sds) * 1024:g}, gets the exact posterior sd of {sym} "
                   f"down to T = {target:g} (at ε = {max(advice.sds):g} it is {at_top:.4g}): raise T.")
else:
    pick = sweeps.smallest_epsilon(sweep, param, target, method=reference)
    label = METHOD_LABELS[reference]
    what = (f"exact posterior sd of {sym}, estimated from {label} draws (no closed form here)"
            if reference in EXACT_PREFERENCE else f"{label} posterior sd of {sym}")
    skipped = ""
    if pick.skipped:  # a sd from a run that has not converged is no answer: say which were passed over
        listed = ", ".join(f"{e:g}" for e in pick.skipped)
        one = len(pick.skipped) == 1
        skipped = (f" Skipped: ε = {listed}, where {label}'s sd met T but {'its run has' if one else 'the runs have'} "
                   "not converged (R-hat > 1.01 or ESS < 400; circled x in the figures), so that sd is not to be "
                   "trusted — raise the draws to use it.")
    if pick.epsilon is None:
        st.warning(f"No ε on the grid brings the {what}, to T = {target:g} or below in a converged run; "
                   f"{'raise the draws or ' if pick.skipped else ''}extend the grid upwards.{skipped}")
    else:
        st.success(f"Smallest ε on the grid at which the {what}, is at most T = {target:g} in a converged run: "
                   f"**ε = {pick.epsilon:g}**.{skipped}")

# ---- choose epsilon: what it protects against what it costs (issue 21) ----------------------------
st.subheader("Choose ε: what it protects and what it costs", divider="gray")
with st.expander("What am I looking at?"):
    st.markdown(
        "Each point is one ε of the grid. Across: what the release costs in accuracy, the exact posterior's sd of "
        f"{sym} (smaller is more useful). Up: what it gives away about **one person**, computed exactly from the "
        "mechanism's noise: how sure someone who knew everyone else could become about that person after starting "
        "at 50/50 (95% of releases leave them at or below it), and how many real cases the best possible attack "
        "catches when it may wrongly accuse 5% of people (smaller is more private). Moving right along the curve "
        "buys privacy with accuracy: pick the point you can live with; the sentence under the figure reads it out.")
value = st.select_slider("Your ε (explored on this page only)", options=list(grid), key=keys.W_STEP,
                         format_func=lambda v: f"{v:g}", persist_state=PERSIST,
                         help="Reads out one ε of the grid below: what it protects, what it costs, every posterior "
                              "at it. The sidebar's budget, which Compare and the other pages use, stays as it is.")
_link_choices()  # T now holds its value, its default included
sidebar_budget = {"epsilon": f"ε = {s.epsilon:g}", "k_ary": f"ε = {s.epsilon:g}", "rho": f"ρ = {s.rho:g}",
                  "epsilon_delta": f"(ε, δ) = ({s.epsilon:g}, {s.delta:g})",
                  "coin": f"a truth probability of {s.truth_prob:g}"}.get(s.budget_form, s.budget_form)
same_budget = s.budget_form in ("epsilon", "k_ary") and math.isclose(float(value), float(s.epsilon))
if same_budget:
    st.caption(f"Your ε = {value:g} is the sidebar's ε: the sentence and the figures below are the scenario Compare "
               "runs.")
else:
    st.caption(f"The sentence and the figures below are at **ε = {value:g}**, this page's choice; the sidebar still "
               f"states {sidebar_budget} ({MECHANISM_LABELS.get(s.mechanism, s.mechanism)}), and Compare and the "
               "other pages run at that until you change it there.")
    if s.budget_form in ("epsilon", "k_ary"):  # the sweep's ε is the sidebar's ε of the same mechanism
        # the click sets the ε box alone: it loaded this run's scenario with the new ε, and a value typed into
        # another box just before the click (n = 67), which reaches the server with it, went back (audit s24 races)
        st.button(f"Use ε = {value:g} in the sidebar", key=keys.W_STEP + "_to_sidebar", icon=":material/input:",
                  on_click=lambda v=float(value): st.session_state.update({keys.W_EPSILON: v}),
                  help="Sets the sidebar's ε to this value, so Compare and the other pages run at it.")
spec_text = sweeps.grid_spec_text(s, inputs.records)  # the frontier: ε is set per grid value
try:
    frontier = protection.sweep(spec_text, grid)
except ValueError as exc:
    st.info(f"The privacy side is not computed for this scenario: {exc}", icon=":material/info:")
else:
    by_eps = sweep.table[(sweep.table["method"] == reference) & (sweep.table["param"] == param)].set_index("epsilon")
    if advice is not None:
        utility = [advice.sds[float(e)] for e in frontier["epsilon"]]
        utility_label = f"exact posterior sd of {sym}"
    else:
        utility = [float(by_eps["sd"].get(float(e), math.nan)) for e in frontier["epsilon"]]
        utility_label = f"posterior sd of {sym} from {METHOD_LABELS[reference]}'s draws"  # an estimate: it wobbles
    _chart(frontier_figure(frontier["epsilon"], frontier["q95"], frontier["power_at_5pct"], utility,
                                utility_label=utility_label, chosen=value),
           f"What an attacker achieves against the {utility_label}, over the ε grid (circled: ε = {value:g})",
           key=keys.FRONTIER_CHART, name=f"privacy_utility_frontier_{name_part(param)}")
    half, half_words = None, None
    if advice is not None:  # the exact posterior's own q5-q95 (a skewed one's is not mean -/+ 1.645 sd)
        half = sweeps.exact_half_width(s, inputs.records, float(value), param)
        half_words = f"half the width of the exact posterior's 90% central interval of {sym} (q5 to q95)"
        if half is None:  # not expected where advice exists; then say what the number is
            half = 1.6448536269514722 * advice.sds[float(value)]
            half_words = f"1.645 exact posterior sd of {sym} (a normal approximation to its 90% interval)"
    elif float(value) in by_eps.index:
        row = by_eps.loc[float(value)]
        half = float(row["q95"] - row["q5"]) / 2
    at_risk = protection.risk(sweeps.spec_text_of(s, inputs.records, epsilon=value))
    utility_part = (sym, half) if half is not None and math.isfinite(half) else None
    st.markdown(protection_text.protection_markdown(at_risk, utility=utility_part))
    if half_words is not None:
        st.caption(f"±: {half_words} at ε = {value:g}.")
    else:
        st.caption(f"Each ε's sd of {sym} is estimated from its own run's draws, so where neighbouring ε's sds "
                   "differ by less than their Monte Carlo error the line can fold back on itself.")

# ---- step through the grid ----------------------------------------------------------------------
st.markdown(f"**Every posterior at ε = {value:g}** (Your ε, chosen above; the sidebar states {sidebar_budget})")
at_runs = {m: r for m, r in sweep.runs.get(value, {}).items() if r.ok}
at_value = [r.result for r in at_runs.values()]
stalled = [m for m, r in at_runs.items() if r.stalled]
conf = method_runs.confidential(s, inputs.records)
if at_value:
    _chart(posteriors.posterior_densities(at_value, true_params=prepared.true_params,
                                          confidential=conf.result if conf is not None and conf.ok else None,
                                          title=f"ε = {value:g}", params=[param],
                                          supports=prepared.param_support, not_converged=set(stalled)),
           f"Posterior of {sym} at ε = {value:g}, per method", key=keys.STEP_CHART,
           name=f"posterior_{name_part(param)}_at_epsilon_{value:g}")
    if stalled:  # this figure marks them in its legend and by a faded line, not by circled x
        one, legend = len(stalled) == 1, " and ".join(f"{result_label(at_runs[m].result)} (not converged)"
                                                       for m in stalled)
        st.caption(f"{legend} in the legend: "
                   f"{'its run' if one else 'their runs'} at ε = {value:g} {'has' if one else 'have'} not converged "
                   f"(R-hat > 1.01 or ESS < 400), so {'its curve is' if one else 'their curves are'} drawn faded "
                   "(in its own line style): read it with suspicion — raise the draws, or sweep Exact (best method) "
                   "instead.",
                   help=f"{TERM_HELP['R-hat']} {TERM_HELP['ESS']}")
else:
    st.info(f"No method produced draws at ε = {value:g}.")

# ---- fresh releases per epsilon ---------------------------------------------------------------
st.subheader("One release or fresh releases", divider="gray")
st.caption("The curves above reuse **one random draw** across the grid: the release at each ε is "
           "s(x) + (noise scale at ε) × z with the same standardised draw z (the seed is the same), so means and "
           "intervals move smoothly with ε and a drift with ε is that one draw, scaled, not a bias. Fresh "
           "releases draw new noise R times at every ε and show the spread one release hides.")
fresh = st.toggle("Fresh releases per ε (replicates)", key=keys.W_FRESH, persist_state=PERSIST,
                  help="R independent releases at every ε on the same records, one run each of the sweep's "
                       "reference method; it runs only when switched on.")
if fresh:
    st.session_state.setdefault(keys.W_FRESH_COUNT, 10)
    count = number_field("Releases per ε (R)", keys.W_FRESH_COUNT, integer=True, lower=2, upper=50,
                         persist_state=PERSIST)
    if count is None:
        pass  # the box says what is wrong
    elif s.data == "s_dp" or s.unknown_n:
        st.info("Fresh releases need the confidential records with a known n (simulate or upload): a typed s_dp is "
                "one release already.")
    else:
        shown_by = "exact" if "exact" in methods else reference
        shown_label = sweep.labels.get(shown_by) or METHOD_LABELS.get(shown_by, shown_by)  # as the legends above
        try:
            out = sweeps.fresh_releases(s, inputs.records, grid, int(count), shown_by)
        except ValueError as exc:
            out = {"error": str(exc)}
        if "over_budget" in out:
            cost = out["over_budget"]
            cheaper = (", or add Exact to the methods swept" if shown_by != "exact" and prepared.exact_available
                       else "")
            st.info(f"Not run: {int(count)} releases per ε {narrative.would_take(cost)}. Lower R or use "
                    f"fewer ε values{cheaper}.", icon=":material/timer:")
        elif "error" in out:
            st.error(f"Fresh releases could not run: {out['error']}", icon="⚠️")
        else:
            _chart(budget.releases_plot(out["table"], param, truth=truth),
                   f"{sym}: {int(count)} fresh releases per ε, {shown_label}",
                   key=keys.RELEASES_CHART, name=f"fresh_releases_{name_part(param)}")
            st.caption(f"Each point is one release's {shown_label} posterior mean with its "
                       "90% interval; their spread at one ε is the noise of a single release.")
