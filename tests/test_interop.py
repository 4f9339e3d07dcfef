"""Every library mapping of engine.mechanisms.libraries, checked against the real OpenDP and diffprivlib.

For each mapping (``CASES``):

1. Noise law. 20,000 releases of a fixed statistic s0 drawn by the library itself against the engine's
   law of the release: a chi-square test over the support (cells with expected count >= 5, the tails pooled)
   for integer and lattice releases, a Kolmogorov-Smirnov test for continuous ones, and for a clipped
   release a chi-square over {lower, inside, upper} for the point masses plus the KS test of the inside
   part against the noise law conditioned on [lower, upper]. Randomized response (``Binary``): an exact
   binomial test of the kept fraction.
2. Calibration. M = 1000 replicates of theta ~ Beta(1, 1), 100 Bernoulli(theta) records, the library's
   release of their count (or, for ``Binary``, of each record), and the engine's exact posterior
   (``exact_mixture``, the ``exact`` method's mixture) of theta; the probability integral transform
   u = F(theta | s_dp) is Uniform(0, 1) when the posterior is right (SBC, Talts et al. 2018): KS test
   of u, and the number of u in [0.05, 0.95] (the 90% central interval covers theta) within 4.5
   binomial sds of 0.9 M.

Each check has a negative control: the same library draws analysed with the engine law at twice the
noise scale (for randomized response, half the epsilon) must fail the same check.

Thresholds: a check passes when its p-value is >= ALPHA = 1e-4 (and, for coverage, |count - 0.9 M| <=
4.5 sd, false-failure rate 7e-6). diffprivlib draws are seeded (``random_state``), so its checks are
deterministic; OpenDP's sampler cannot be seeded, so its checks are random with a false-failure rate of
about 1e-4 each (p-values are uniform under the null), about 1e-3 for the whole file. The scenarios are
chosen so that the noise dominates the posterior's width (noise sd about 10 on a count of 100 records
with a flat prior), which gives the 2x controls their power: they fail by orders of magnitude.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import engine
from engine.core.results import Problem
from engine.mechanisms.clipped import BoundedLaplace, Clipped
from engine.mechanisms.randomized_response import RandomizedResponse, k_ary_log_transition
from engine.methods.exact import exact_mixture

ALPHA = 1e-4
N_LAW = 20_000
M_SBC = 1000
N_RECORDS = 100
S0 = 5  # the fixed statistic of the noise-law checks: near 0, so a clip at 0 holds a large point mass
INF = math.inf


# ------------------------------------------------------------------------------------------ library draws

def _dpl_draw(mechanism, params, integer):
    def draw(values, seed):
        dpl = pytest.importorskip("diffprivlib.mechanisms")
        mech = getattr(dpl, mechanism)(**params, random_state=seed)
        out = [mech.randomise(int(v) if integer else float(v)) for v in values]
        return np.asarray(out, dtype=float)
    return draw


def _opendp_draw(mechanism, domain, scale, k=None, clamp=False):
    def draw(values, seed):
        dp = pytest.importorskip("opendp.prelude")
        dp.enable_features("contrib")
        if clamp:  # OpenDP's own dataframe count: group lengths are clamped at 0
            return _opendp_polars_counts(np.asarray(values, dtype=int), scale)
        T = int if domain == "int" else float
        atom = dp.atom_domain(T=T) if T is int else dp.atom_domain(T=T, nan=False)
        metric = (dp.l1_distance if mechanism == "laplace" else dp.l2_distance)(T=T)
        kw = {} if k is None else {"k": k}
        make = dp.m.make_laplace if mechanism == "laplace" else dp.m.make_gaussian
        meas = make(dp.vector_domain(atom, size=len(values)), metric, scale=scale, **kw)
        return np.asarray(meas([T(v) for v in values]), dtype=float)
    return draw


def _opendp_polars_counts(counts, scale):
    """One OpenDP dataframe query releases the length of each group (public keys): the counts as OpenDP's
    ``dp.len()`` makes them (integer Laplace, clamped at 0), all in one release."""
    dp = pytest.importorskip("opendp.prelude")
    pl = pytest.importorskip("polars")
    dp.enable_features("contrib")
    keys = np.repeat(np.arange(counts.size), counts)
    frame = pl.LazyFrame({"g": keys.astype(np.int64)})
    g = counts.size
    ctx = dp.Context.compositor(
        data=frame, privacy_unit=dp.unit_of(contributions=1), privacy_loss=dp.loss_of(epsilon=1.0 / scale),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["g"], invariant="keys", max_length=int(counts.max()) + 1)])
    with pytest.warns(FutureWarning, match="clamped at zero"):
        query = ctx.query().group_by("g").agg(dp.len())
        summary = query.summarize()
    assert summary["scale"][0] == pytest.approx(scale)
    # groups with no records do not exist in the frame: keep the replicates' counts >= 1 (callers' job)
    out = query.release().collect().sort("g")
    assert out.height == g
    return out["len"].to_numpy().astype(float)


# ------------------------------------------------------------------------------------------ the cases

def _table(lib, mech, **params):
    return dict(library=lib, mechanism=mech, **params)


CASES = {
    "dpl-Laplace": (_table("diffprivlib", "Laplace", epsilon=0.15, sensitivity=1), _dpl_draw("Laplace", dict(
        epsilon=0.15, sensitivity=1), False)),
    "dpl-Laplace-delta": (_table("diffprivlib", "Laplace", epsilon=0.1, delta=0.05, sensitivity=1), _dpl_draw(
        "Laplace", dict(epsilon=0.1, delta=0.05, sensitivity=1), False)),
    "dpl-LaplaceTruncated": (_table("diffprivlib", "LaplaceTruncated", epsilon=0.15, sensitivity=1, lower=0,
                                    upper=N_RECORDS), _dpl_draw("LaplaceTruncated", dict(
        epsilon=0.15, sensitivity=1, lower=0, upper=N_RECORDS), False)),
    "dpl-LaplaceBoundedDomain": (_table("diffprivlib", "LaplaceBoundedDomain", epsilon=0.15, sensitivity=1, lower=0,
                                        upper=N_RECORDS), _dpl_draw("LaplaceBoundedDomain", dict(
        epsilon=0.15, sensitivity=1, lower=0, upper=N_RECORDS), False)),
    "dpl-Geometric": (_table("diffprivlib", "Geometric", epsilon=0.15), _dpl_draw("Geometric", dict(epsilon=0.15),
                                                                                  True)),
    "dpl-GeometricTruncated": (_table("diffprivlib", "GeometricTruncated", epsilon=0.15, lower=0, upper=N_RECORDS),
                               _dpl_draw("GeometricTruncated", dict(epsilon=0.15, lower=0, upper=N_RECORDS), True)),
    "dpl-Gaussian": (_table("diffprivlib", "Gaussian", epsilon=0.4, delta=1e-3, sensitivity=1), _dpl_draw(
        "Gaussian", dict(epsilon=0.4, delta=1e-3, sensitivity=1), False)),
    "dpl-GaussianAnalytic": (_table("diffprivlib", "GaussianAnalytic", epsilon=0.4, delta=1e-3, sensitivity=1),
                             _dpl_draw("GaussianAnalytic", dict(epsilon=0.4, delta=1e-3, sensitivity=1), False)),
    "dpl-GaussianDiscrete": (_table("diffprivlib", "GaussianDiscrete", epsilon=0.4, delta=1e-3), _dpl_draw(
        "GaussianDiscrete", dict(epsilon=0.4, delta=1e-3), True)),
    "dpl-Binary": (_table("diffprivlib", "Binary", epsilon=2.0), None),
    "opendp-laplace-int": (_table("opendp", "laplace", domain="int", scale=7.0), _opendp_draw("laplace", "int", 7.0)),
    "opendp-laplace-float": (_table("opendp", "laplace", domain="float", scale=7.0),
                             _opendp_draw("laplace", "float", 7.0)),
    "opendp-laplace-float-k": (_table("opendp", "laplace", domain="float", scale=7.0, k=-1),
                               _opendp_draw("laplace", "float", 7.0, k=-1)),
    "opendp-gaussian-int": (_table("opendp", "gaussian", domain="int", scale=10.0),
                            _opendp_draw("gaussian", "int", 10.0)),
    "opendp-gaussian-float": (_table("opendp", "gaussian", domain="float", scale=10.0),
                              _opendp_draw("gaussian", "float", 10.0)),
    "opendp-count-clamped": (_table("opendp", "laplace", domain="int", scale=7.0, clip=[0, INF]),
                             _opendp_draw("laplace", "int", 7.0, clamp=True)),
}

_NEEDS = {"diffprivlib": "diffprivlib", "opendp": "opendp"}


def _noise(case):
    table = CASES[case][0]
    return engine.release_from(**table).noise


def _doubled(noise):
    """The 2x scale error of the negative controls (randomized response: half the epsilon)."""
    if isinstance(noise, RandomizedResponse):
        eps = float(noise.log_Q[1, 1] - noise.log_Q[1, 0])  # log(e^eps / 1)
        return RandomizedResponse(log_transition=k_ary_log_transition(eps / 2, 2), scheme="k_ary")
    if isinstance(noise, Clipped):
        return replace(noise, base=replace(noise.base, scale=2 * noise.base.scale))
    return replace(noise, scale=2 * noise.scale)


def _law_log_pmf(noise, values, s0):
    if getattr(noise, "release_law", False):
        return noise.release_log_prob(values, s0)
    return noise.noise_log_prob(np.asarray(values, dtype=float) - s0)


def _continuous_cdf(noise, x, s0):
    """P(s_dp <= x | s0) of a continuous release (inside any bounds)."""
    if isinstance(noise, BoundedLaplace):
        base = noise._base()
        st = min(max(s0, noise.lower), noise.upper)
        lo = np.exp(base.log_cdf(noise.lower - st))
        return (np.exp(base.log_cdf(np.asarray(x) - st)) - lo) / (np.exp(base.log_cdf(noise.upper - st)) - lo)
    base = noise.base if isinstance(noise, Clipped) else noise
    return np.exp(base.log_cdf(np.asarray(x, dtype=float) - s0))


def _law_p_value(noise, draws, s0):
    """p-value of the library draws against the engine's law of the release (module docstring, 1.)."""
    if isinstance(noise, RandomizedResponse):  # draws: 1 where a record of category 1 was reported as 1
        keep = math.exp(noise.log_Q[1, 1])
        return stats.binomtest(int(draws.sum()), draws.size, keep).pvalue
    base = noise.base if isinstance(noise, Clipped) else noise
    lattice = getattr(base, "discrete", False) or getattr(base, "granularity", None) is not None
    if lattice:
        g = getattr(base, "granularity", None) or 1.0
        values = np.arange(math.floor((draws.min() - 200 * base.scale) / g),
                           math.ceil((draws.max() + 200 * base.scale) / g) + 1) * g
        if isinstance(noise, Clipped):
            values = values[(values >= noise.lower) & (values <= noise.upper)]
        p = np.exp(_law_log_pmf(noise, values, s0))
        observed = np.array([np.sum(draws == v) for v in values], dtype=float)
        assert observed.sum() == draws.size  # every draw is on the engine's support
        return _chi2_pooled(observed, p * draws.size / p.sum())
    if isinstance(noise, Clipped):
        lo_mass = float(np.exp(base.log_cdf(np.array([noise.lower - s0]))[0])) if noise.lower > -INF else 0.0
        hi_mass = float(np.exp(base.log_sf(np.array([noise.upper - s0]))[0])) if noise.upper < INF else 0.0
        n_lo, n_hi = np.sum(draws <= noise.lower), np.sum(draws >= noise.upper)
        cells = np.array([n_lo, draws.size - n_lo - n_hi, n_hi], float)
        expected = np.array([lo_mass, 1 - lo_mass - hi_mass, hi_mass]) * draws.size
        keep = expected > 0
        p_mass = stats.chisquare(cells[keep], expected[keep]).pvalue if keep.sum() > 1 else 1.0
        inside = draws[(draws > noise.lower) & (draws < noise.upper)]
        f_lo = _continuous_cdf(noise, noise.lower, s0) if noise.lower > -INF else 0.0
        f_hi = _continuous_cdf(noise, noise.upper, s0) if noise.upper < INF else 1.0
        p_in = stats.kstest(inside, lambda x: (_continuous_cdf(noise, x, s0) - f_lo) / (f_hi - f_lo)).pvalue
        return min(p_mass, p_in)
    return stats.kstest(draws, lambda x: _continuous_cdf(noise, x, s0)).pvalue


def _chi2_pooled(observed, expected):
    """Chi-square over cells with expected count >= 5, the rest pooled into one cell per tail."""
    big = expected >= 5
    first, last = np.flatnonzero(big)[[0, -1]]
    obs = np.concatenate([[observed[:first].sum()], observed[big], [observed[last + 1:].sum()]])
    exp = np.concatenate([[expected[:first].sum()], expected[big], [expected[last + 1:].sum()]])
    keep = exp > 0
    obs, exp = obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()
    return stats.chisquare(obs, exp).pvalue


def _binary_reports(records, epsilon, seed):
    """diffprivlib's Binary on each record (labels "0"/"1"); returns the reported categories."""
    dpl = pytest.importorskip("diffprivlib.mechanisms")
    mech = dpl.Binary(epsilon=epsilon, value0="0", value1="1", random_state=seed)
    return np.array([mech.randomise(str(int(r))) == "1" for r in records], dtype=float)


# ------------------------------------------------------------------------------------------ the checks

def _skip_without(case):
    pytest.importorskip(_NEEDS[CASES[case][0]["library"]])
    if CASES[case][0].get("clip") and CASES[case][0]["library"] == "opendp":
        pytest.importorskip("polars")


@pytest.mark.parametrize("case", list(CASES))
def test_library_draws_follow_the_engine_noise_law(case):
    _skip_without(case)
    noise = _noise(case)
    if case == "dpl-Binary":
        draws = _binary_reports(np.ones(N_LAW), 2.0, seed=11)
    else:
        draws = CASES[case][1](np.full(N_LAW, S0), seed=11)
    p_right = _law_p_value(noise, draws, S0)
    p_wrong = _law_p_value(_doubled(noise), draws, S0)
    assert p_right >= ALPHA, f"{case}: the library's draws reject the engine's law (p = {p_right:.3g})"
    assert p_wrong < ALPHA, f"{case}: a 2x scale error went unnoticed (p = {p_wrong:.3g})"


def _pit(model, noise, s_dp, theta):
    """u_i = F(theta_i | s_dp_i), one exact mixture per distinct release (integer releases repeat)."""
    s_dp, theta = np.asarray(s_dp, dtype=float), np.asarray(theta, dtype=float)
    u = np.empty(theta.size)
    values, index = np.unique(s_dp, return_inverse=True)
    for j, v in enumerate(values):
        at = index == j
        u[at] = exact_mixture(Problem(model=model, mechanism=noise, s_dp=np.array([v]))).cdf(0, theta[at])
    return u


def _calibrated(u) -> tuple[bool, str]:
    p = stats.kstest(u, "uniform").pvalue
    covered = int(np.sum((u >= 0.05) & (u <= 0.95)))
    band = 4.5 * math.sqrt(u.size * 0.09)
    ok = p >= ALPHA and abs(covered - 0.9 * u.size) <= band
    return ok, f"KS p = {p:.3g}, 90% intervals cover {covered}/{u.size}"


@pytest.mark.parametrize("case", list(CASES))
def test_exact_posterior_is_calibrated_on_library_releases(case):
    _skip_without(case)
    rng = np.random.default_rng(2024)
    model = engine.make_model("beta_binomial", {"n": N_RECORDS, "a": 1.0, "b": 1.0})
    theta = rng.beta(1.0, 1.0, size=M_SBC)
    records = rng.random((M_SBC, N_RECORDS)) < theta[:, None]
    if case == "dpl-Binary":
        s_dp = np.array([_binary_reports(r, 2.0, seed=100 + i).sum() for i, r in enumerate(records)])
    else:
        s = records.sum(axis=1)
        if CASES[case][0].get("clip"):  # a dataframe group exists only with a record in it
            s = np.maximum(s, 1)
            theta = np.where(records.sum(axis=1) == 0, np.nan, theta)
        s_dp = CASES[case][1](s, seed=12)
    keep = ~np.isnan(theta)
    noise = _noise(case)
    ok, why = _calibrated(_pit(model, noise, s_dp[keep], theta[keep]))
    assert ok, f"{case}: {why}"
    bad, why_bad = _calibrated(_pit(model, _doubled(noise), s_dp[keep], theta[keep]))
    assert not bad, f"{case}: a 2x scale error went unnoticed ({why_bad})"


def test_opendp_privacy_maps_match_the_stated_guarantee():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    fl = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    it = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    for k in (None, -2, 0):
        kw = {} if k is None else {"k": k}
        lap = engine.release_from("opendp", "laplace", domain="float", scale=2.0, sensitivity=0.7, **kw)
        assert lap.guarantee["epsilon"] == pytest.approx(dp.m.make_laplace(*fl, scale=2.0, **kw).map(0.7), rel=1e-9)
        gau = engine.release_from("opendp", "gaussian", domain="float", scale=2.0, sensitivity=0.7, **kw)
        assert gau.guarantee["rho"] == pytest.approx(dp.m.make_gaussian(*fl, scale=2.0, **kw).map(0.7), rel=1e-9)
    assert engine.release_from("opendp", "laplace", domain="int", scale=2.0, sensitivity=3).guarantee["epsilon"] == \
        pytest.approx(dp.m.make_laplace(*it, scale=2.0).map(3))
    assert engine.release_from("opendp", "gaussian", domain="int", scale=2.0, sensitivity=3).guarantee["rho"] == \
        pytest.approx(dp.m.make_gaussian(*it, scale=2.0).map(3))


def test_diffprivlib_calibrations_match_the_library():
    dpl = pytest.importorskip("diffprivlib.mechanisms")
    for eps, delta, sens in ((1.0, 1e-5, 1.0), (0.3, 1e-3, 2.0), (4.0, 1e-6, 1.0)):
        ours = engine.release_from("diffprivlib", "GaussianAnalytic", epsilon=eps, delta=delta, sensitivity=sens)
        assert ours.noise.scale == pytest.approx(dpl.GaussianAnalytic(epsilon=eps, delta=delta,
                                                                      sensitivity=sens)._scale, rel=1e-12)
        disc = engine.release_from("diffprivlib", "GaussianDiscrete", epsilon=eps, delta=delta, sensitivity=int(sens))
        assert disc.noise.scale == pytest.approx(dpl.GaussianDiscrete(epsilon=eps, delta=delta,
                                                                      sensitivity=int(sens))._scale, rel=1e-12)
        if eps <= 1:
            classic = engine.release_from("diffprivlib", "Gaussian", epsilon=eps, delta=delta, sensitivity=sens)
            assert classic.noise.scale == pytest.approx(dpl.Gaussian(epsilon=eps, delta=delta,
                                                                     sensitivity=sens)._scale, rel=1e-12)
    bounded = engine.release_from("diffprivlib", "LaplaceBoundedDomain", epsilon=0.5, delta=0.01, sensitivity=1,
                                  lower=0, upper=10)
    lib = dpl.LaplaceBoundedDomain(epsilon=0.5, delta=0.01, sensitivity=1, lower=0, upper=10)
    assert bounded.noise.scale == pytest.approx(lib._find_scale(), rel=1e-12)
