"""What it protects page: the privacy side of the current scenario, computed exactly for its mechanism.

Three figures from ``engine.risk`` (cached in :mod:`ui.compute.protection`): the optimal attack's
trade-off curve against the guarantee's curve, the informed adversary's belief distribution, and the
realistic adversary's view of one record; one computed sentence (:mod:`ui.protection_text`) on top.

Downloads stand alone, as the Privacy budget page's do: each PNG and HTML carries its view's title with the budget
("The best possible attack, at ε = 0.3") and the scenario under it (:func:`figures.budget.with_scenario`,
:func:`ui.compute.sweeps.scenario_words`), and its name starts with the scenario
(:func:`ui.compute.files.download_stem`); the figures on the page stay as they are (the line above them says it).
"""
import streamlit as st

from figures import protection as protection_figures
from figures.budget import with_scenario
from figures.palette import BOUND_COLOR, color_word
from figures.labels import MODEL_LABELS
from ui import downloads, keys, protection_text, terms
from ui.compute import files, problems, protection, sweeps
from ui.params.messages import readable
from ui.routing import ensure_routed
from ui.sidebar.inputs import scenario_inputs

ensure_routed()


# the colours the explanations name, in the words of figures.palette.COLOR_WORDS (the figures' own colours)
_ATTACK, _BOUND = color_word(protection_figures.ATTACK_COLOR), color_word(BOUND_COLOR)
_GUESS, _POSTERIOR = color_word(protection_figures.GUESS_COLOR), color_word(protection_figures.POSTERIOR_COLOR)
_OWN = color_word(protection_figures.MECHANISM_COLOR)


def section(title: str, explanation: str, fig, key: str, name: str, unavailable: str = "") -> None:
    """One view: its heading, the "What am I looking at?" text a stakeholder reads, the figure and its downloads
    (named and titled by :func:`download_title`, :data:`stem` and :data:`scenario_line`); where the view is not
    computed for this scenario, why (``unavailable``, the engine's reason) instead of a figure."""
    st.subheader(title, divider="gray")
    with st.expander("What am I looking at?"):
        st.markdown(explanation)
    if unavailable:
        st.info(f"Not drawn for this scenario: {readable(unavailable)}.", icon=":material/info:")
        return
    downloads.chart(fig, key=key, name=f"{stem}_{name}",
                    for_file=lambda: with_scenario(fig, download_title(title), scenario_line))


def download_title(title: str) -> str:
    """A view's title for its downloads, with the budget the sentence states: "The best possible attack, at ε = 0.3"
    (the files were untitled, two of them with no ε anywhere)."""
    budget = protection_text.budget_clause(risk)  # "At ε = 0.3", "At ρ = 0.5", "At (ε, δ) = (1, 1e-05)"
    return f"{title}, {budget[0].lower()}{budget[1:]}"


st.title("What it protects")
st.caption("How much someone can learn about one person from this release: the best possible attack, an "
           "adversary who knows everyone else, and one who knows only the model. Computed exactly from the "
           "mechanism's own noise, at the budget set in the sidebar.")

note = st.session_state.pop(keys.PRESET_NOTE, None)
if note:
    st.success(note)
terms.terms_expander(("epsilon", "delta", "rho", "zcdp", "gdp", "sensitivity", "s_dp"))
inputs = scenario_inputs("protection", show_methods=False, show_noise=False)  # the line below states it
if not inputs.ok:
    st.warning("Results wait for a valid scenario: fix the input marked in the sidebar. Your entries are kept.")
    st.stop()

s, prepared = inputs.scenario, inputs.prepared
# an unknown n released with its own noise: the line names it too, whose budget the sentence's ε adds (it said
# "n = 39 · pure 0.3-DP" over "At ε = 0.8"; round-trip audit s23)
size_noise = f"; size n released with {problems.describe_size_mechanism(s)}" if s.size_released else ""
head = st.empty()  # the mechanism's line, qualified below once the risk says whom it covers
head.markdown(f"**{MODEL_LABELS[s.model]}**, n = {prepared.n:,} · {prepared.mechanism_text}{size_noise}")
try:
    risk = protection.risk(inputs.spec_text)
except ValueError as exc:
    st.info(f"This page does not cover this scenario yet: {exc}", icon=":material/info:")
    st.stop()
# a statistic of the sidebar's dp-wizard package: its total ε, and a histogram bin's count said as what it is
risk = protection_text.for_package(risk, protection.package_statistic(inputs.spec_text,
                                                                       st.session_state.get(keys.DPWIZARD)))
# a library's statement the noise exceeds (diffprivlib's (ε, δ) Laplace, pure DP): the sentence says why ε changed
risk = protection_text.for_release(risk, inputs.spec_text)
head.markdown(f"**{MODEL_LABELS[s.model]}**, n = {prepared.n:,} · "
              f"{protection_text.mechanism_line(prepared.mechanism_text, risk)}{size_noise}")
if protection_text.statistic_note(risk):
    st.caption(protection_text.statistic_note(risk))
stem = files.download_stem(s, prepared.n, prepared.s_dp)  # every download's name starts with the scenario, as Compare's
scenario_line = sweeps.scenario_words(s, inputs.records, prepared.n)  # and its figure says it under the title

st.markdown(protection_text.protection_markdown(risk))
if protection_text.neighbours_note(risk):  # which two records are attacked, where that is not obvious
    st.caption(f"The attack compares two neighbouring datasets: {protection_text.neighbours_note(risk)}.")

own_curve = ""
own_at = protection_figures.own_shift(risk)  # (d, Δ): the own curve is at the pair's shift d, not at Δ
own_mu = "μ = Δ/σ" if own_at is None else (
    f"μ = d/σ, d = {protection_figures.budget_number(own_at[0])} being the largest change one person's record makes "
    f"(the noise is calibrated to Δ = {protection_figures.budget_number(own_at[1])})")
own_rho = "ρ = Δ²/(2σ²)" if own_at is None else "ρ = d²/(2σ²)"
if risk.get("mechanism_curve") and risk["guarantee"].get("kind") in ("zcdp", "gdp"):  # a Gaussian stated by ρ
    own_curve = (" Here the release states ρ-zCDP, so the dashed curve is what ρ-zCDP allows any mechanism; the "
                 f"**{_OWN} dotted curve** is this Gaussian's own, set by its σ: exactly μ-GDP with {own_mu} (ρ = "
                 "μ²/2). It is tighter: μ-GDP implies μ²/2-zCDP, not the reverse, so another ρ-zCDP mechanism may "
                 "sit below the dotted curve (never below the dashed one); the best attack on this noise follows "
                 "the dotted one exactly.")
elif risk.get("mechanism_curve"):  # Gaussian noise stated in (ε, δ): the statement's curve, and the noise's own
    own_curve = (f" Here the release states (ε, δ), so the dashed curve is that statement's; the **{_OWN} dotted "
                 f"curve** is this Gaussian's own, set by its σ (μ-GDP with {own_mu}; ρ-zCDP, the Gaussian's own "
                 f"budget: {own_rho} = μ²/2). It is what this noise itself allows, tighter than the (ε, δ) "
                 "stated for it; on unclipped noise the best attack follows it exactly.")
pair = protection_figures.pair_shift(risk)
if pair:  # n known, one record replaced moves the statistic further than the Δ the budget is stated for
    own_curve += (f" The dashed curve is at {protection_text.budget_clause(risk)[3:]}, the budget that covers one "
                  "person's record replaced, not the "
                  f"{protection_figures.stated_budget(pair['stated'])} stated for a change of up to Δ = "
                  f"{protection_figures.budget_number(pair['sensitivity'])} (such as adding or removing one person): "
                  f"with n known, replacing a record moves {pair['statistic']} by up to "
                  f"{protection_figures.budget_number(pair['shift'])}.")
section("The best possible attack",
        "Imagine an attacker who must decide, from the release alone, which of two values one person's record has "
        "(for example *in the data with a 1* or *with a 0*). Any attack makes two kinds of mistakes: accusing "
        f"wrongly (**false positives**, across) and missing the real cases (**misses**, up). The **{_ATTACK} curve** "
        "is the best any attack can do, computed from the noise this mechanism actually adds: no attack gets below "
        f"it. The **{_BOUND} dashed curve** is what the privacy guarantee promises at worst; the {_ATTACK} curve never "
        f"goes below it. The **{_GUESS} diagonal** is guessing with a coin. The closer the {_ATTACK} curve is to the "
        "diagonal, the better the person is protected. The dot reads the curve where the attacker accepts 5% false "
        "positives: the share of real cases it then catches is its *power*." + own_curve,
        protection_figures.tradeoff_figure(risk), keys.PROTECTION_TRADEOFF_CHART, "tradeoff_curve")

section("Someone who knows everyone else",
        "The standard worst case of differential privacy: an adversary who already knows every other person's "
        "record and starts at 50/50 about the last one. After seeing the release they update their guess. Each "
        "release moves it differently, so the bars show how often the guess ends at each level (in the true value's "
        "favour). "
        f"With pure ε-DP the guess can never pass e^ε/(1+e^ε) (the {_BOUND} line: 73% at ε = 1), and a large share "
        "of releases reach that ceiling exactly (the legend says how many); with Gaussian noise there is no firm "
        "ceiling, only rare releases that move it far, so the dashed line marks the level 95% of releases stay at or "
        "below.",
        protection_figures.belief_figure(risk), keys.PROTECTION_BELIEF_CHART, "informed_adversary")

realistic = risk.get("realistic_adversary", {})
section("Someone who knows only the model",
        "A more typical adversary knows how the data were generated (the model and its prior) but none of the "
        f"records. {_GUESS.capitalize()} bars: what they believe about one person's record before the release; "
        f"{_POSTERIOR} bars: after it. The change mostly reflects what the release says about the whole population "
        "(the parameter), which is what the data are published for; how far it can single out one person is "
        "bounded by the curves above.",
        protection_figures.record_figure(realistic), keys.PROTECTION_RECORD_CHART, "realistic_adversary",
        unavailable="" if realistic.get("available") else realistic.get("reason", "not computed here"))
