"""The sidebar's Sample size section: a known n, or an unknown (private) n: its prior, and the noise it was released
with, or none where only the statistic carries it (a histogram's total, OpenDP's mean)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from figures.labels import MECHANISM_LABELS, N_BUDGET_LABELS, N_PRIOR_LABELS, SIZE_LABELS

from .. import keys
from ..params.release import is_mean
from ..params.scenario import N_BUDGET_FORMS, N_MECHANISMS, N_PRIORS, SAMPLE_SIZES
from .numbers import last_value, number_box


def _size_changed() -> None:
    """Switching to an unknown n switches RJMCMC on (it is the method that answers that question), and
    back to a known n switches it off (it cannot run there)."""
    st.session_state[keys.method_key("rjmcmc")] = st.session_state.get(keys.W_SAMPLE_SIZE) == "unknown"


def _n_mechanism_label(name: str) -> str:
    return "none (only inside the statistic)" if name == "none" else MECHANISM_LABELS[name]


def _size_not_released(model: str) -> bool:
    """May n be released not at all? A histogram (its cells are the trace of n), and OpenDP's mean of a clamped
    normal column (the length is released only inside the ratio sum / length)."""
    state = st.session_state
    mean = is_mean(state.get(keys.W_RELEASE), state.get(keys.release_mechanism_key("opendp")))
    return model == "dirichlet_multinomial" or (model == "normal_known_sd" and mean)


def _size_section(model: str) -> dict:
    """The section's values. ``model``: only the Dirichlet-multinomial (a histogram) offers an n that is not
    released at all, whose cells are its only trace (paper 002 App. B)."""
    st.subheader("Sample size", divider="gray")
    size = st.radio("Sample size n", SAMPLE_SIZES, key=keys.W_SAMPLE_SIZE, format_func=SIZE_LABELS.get,
                    horizontal=True, on_change=_size_changed,
                    help="Unknown: the number of records is private too, and released as a noisy n_dp "
                         "(unbounded DP: *Statistical Inference for Privatized Data with Unknown Sample Size*).")
    out: dict[str, Any] = {"sample_size": size}
    if size != "unknown":
        return out
    # the choices get the sidebar's whole width (in half of it "Negative binomial" and "none (only inside the
    # statistic)" were cut off), the numbers two to a row
    out["n_prior"] = st.selectbox("prior on n", N_PRIORS, key=keys.W_N_PRIOR, format_func=N_PRIOR_LABELS.get,
                                  help="What you believed about the number of records before the release. Poisson: "
                                       "sd √mean, a firm belief; negative binomial: sd √(mean + mean²/r), wider "
                                       "for a small dispersion r. The methods that treat n as unknown use it "
                                       "(RJMCMC; for a histogram, the exact posterior; for OpenDP's mean, the "
                                       "pseudo-marginal sampler); every other method runs at a plug-in n and "
                                       "says so.")
    c1, c2 = st.columns(2)
    out["n_prior_mean"] = float(number_box("prior mean of n", keys.W_N_PRIOR_MEAN, section="size",
                                           fallback=last_value("n_prior_mean"), container=c1,
                                           help="Your best guess of n before the release; must be > 0. A prior "
                                                "far from n_dp pulls n's posterior towards it (where the noise on n "
                                                "is wide against the prior's sd)."))
    if out["n_prior"] == "negative_binomial":
        out["n_prior_dispersion"] = float(number_box("dispersion r", keys.W_N_PRIOR_DISPERSION, section="size",
                                                     fallback=last_value("n_prior_dispersion"), container=c2,
                                                     help="variance = mean + mean²/r"))
    offered = N_MECHANISMS if _size_not_released(model) else tuple(m for m in N_MECHANISMS if m != "none")
    if st.session_state.get(keys.W_N_MECHANISM) not in offered:
        st.session_state[keys.W_N_MECHANISM] = offered[0]
    out["n_mechanism"] = st.selectbox("noise on n", offered, key=keys.W_N_MECHANISM, format_func=_n_mechanism_label,
                                      help="How the number of records was released. For a histogram, \"none\": "
                                           "only the cells are released, so their total is the one trace of n "
                                           "(a private total, as OpenDP's and dp-wizard's histograms have).")
    if out["n_mechanism"] == "none":
        st.caption("The exact method reports the cell probabilities p and the total n." if model ==
                   "dirichlet_multinomial" else "The length is released only inside the mean: the pseudo-marginal "
                   "sampler reports μ, n and the clamped mean.")
        return out
    out["n_budget_form"] = st.radio("stated as", N_BUDGET_FORMS, key=keys.W_N_BUDGET_FORM,
                                    format_func=N_BUDGET_LABELS.get, horizontal=True)
    if out["n_budget_form"] == "scale":
        out["n_scale"] = float(number_box("noise scale on n", keys.W_N_SCALE, section="size",
                                          fallback=last_value("n_scale"),
                                          help="Laplace scale b of the noise added to n; must be > 0."))
    else:
        out["n_epsilon"] = float(number_box("ε for n", keys.W_N_EPSILON, section="size",
                                            fallback=last_value("n_epsilon"),
                                            help="Budget spent on releasing n (sensitivity 1); must be > 0."))
    return out
