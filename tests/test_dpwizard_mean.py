"""OpenDP's mean (dp-wizard's mean) analysed exactly: the ratio's law against OpenDP's own releases, the
pseudo-marginal sampler on (mu, n) against a brute-force posterior, SBC over releases made by OpenDP, and the
fixture package's mean spec.

OpenDP cannot be seeded: the checks that draw from it (KS p >= 1e-4, coverage within 4.5 binomial sds) have a
false-failure rate of about 1e-4 each; every negative control fails the same check by orders of magnitude (KS p
~ 1e-30 and below in trial runs). The engine's own draws are seeded.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
from scipy import stats

import engine
from engine.dpwizard import import_dpwizard
from engine.mechanisms.clipped import compiled_noise
from engine.mechanisms.ratio import OpenDPMean, clamped_mean
from engine.methods.auto import choose
from engine.methods.mean_ratio import mean_ratio_pseudo_marginal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "tests", "fixtures", "dpwizard_grade_hours.zip")
TRUE_HOURS_MEAN = 11.885  # bench/make_dpwizard_package.py, seed 1: the 400 private rows' mean of hours
P_MIN = 1e-4


def _opendp_grouped_means(groups: list[np.ndarray], bounds, epsilon: float):
    """One OpenDP ``dp.mean`` release per group (public keys, one query: every group gets its own independent
    sum and length noise), and the Sum / Length scales that OpenDP's ``summarize()`` states."""
    dp = pytest.importorskip("opendp.prelude")
    pl = pytest.importorskip("polars")
    dp.enable_features("contrib")
    keys = np.concatenate([np.full(len(x), g) for g, x in enumerate(groups)])
    frame = pl.LazyFrame({"g": keys, "x": np.concatenate(groups).astype(float)})
    ctx = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(epsilon=epsilon), split_evenly_over=1,
                                margins=[dp.polars.Margin(by=["g"], invariant="keys", max_groups=len(groups),
                                                          max_length=max(len(x) for x in groups))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        query = ctx.query().group_by("g").agg(pl.col("x").dp.mean(bounds))
        table = query.summarize()
        out = query.release().collect().sort("g")
    scales = dict(zip(table["aggregate"], table["scale"]))
    return out["x"].to_numpy().astype(float), float(scales["Sum"]), float(scales["Length"])


def _ks_ratio(r, mech: OpenDPMean, s: float, n: int) -> tuple[float, float]:
    """(KS p of the finite releases against the law's conditional cdf, binomial p of the count of infinite ones)."""
    lo, hi = mech.point_masses(s, n)
    finite = r[np.isfinite(r)]
    ks = stats.kstest(finite, lambda y: (mech.cdf(y, s, n) - lo) / (1.0 - lo - hi)).pvalue
    inf = stats.binomtest(int(np.sum(np.isinf(r))), r.size, lo + hi).pvalue
    return float(ks), float(inf)


def test_ratio_law_matches_opendps_own_dp_mean_releases():
    """20,000 releases of ``dp.mean((0, 4))`` on 5 fixed values (S = 10.9, n = 5) by OpenDP's polars API: KS on r
    against (D), and the share of infinite r (a noisy length <= 0 is released as 0: r = +-inf) against
    P(V <= -n); with the sum's or the length's scale doubled, both fail (the negative controls)."""
    values = np.array([1.0, 3.0, 2.5, 0.5, 3.9])
    r, b, t = _opendp_grouped_means([values] * 20_000, (0.0, 4.0), 1.0)
    assert b == pytest.approx(8.0, rel=1e-6) and t == pytest.approx(2.0)  # 4 / (1/2) and 1 / (1/2): the even split
    mapped = engine.release_from("opendp", "mean", sum_scale=b, length_scale=t, bounds=[0, 4]).noise
    s, n = float(np.clip(values, 0, 4).sum()), values.size
    assert mapped.point_masses(s, n)[1] > 0.04  # the clamp at 0 is exercised: ~5% of releases are infinite
    ks, inf = _ks_ratio(r, mapped, s, n)
    assert ks >= P_MIN and inf >= P_MIN, (ks, inf)
    ks2, _ = _ks_ratio(r, OpenDPMean(2 * b, t, 0.0, 4.0), s, n)
    ks3, inf3 = _ks_ratio(r, OpenDPMean(b, 2 * t, 0.0, 4.0), s, n)
    assert ks2 < 1e-10 and min(ks3, inf3) < 1e-10, (ks2, ks3, inf3)


def test_opendps_float_sum_noise_has_no_coarse_granularity():
    """The sum inside dp.mean is OpenDP's float Laplace: its released sums (same plugin, grouped ``dp.sum``) carry
    the float's full precision (the lowest set bit of 500 releases of size ~10 sits near 2^-50, never above 2^-30),
    so the law's continuous Laplace U needs no lattice (engine.mechanisms.lattice would be the law otherwise)."""
    dp = pytest.importorskip("opendp.prelude")
    pl = pytest.importorskip("polars")
    dp.enable_features("contrib")
    g = 500
    frame = pl.LazyFrame({"g": np.repeat(np.arange(g), 5), "x": np.tile([1.0, 3.0, 2.5, 0.5, 3.9], g)})
    ctx = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=1,
                                margins=[dp.polars.Margin(by=["g"], invariant="keys", max_groups=g, max_length=10)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sums = ctx.query().group_by("g").agg(pl.col("x").dp.sum((0.0, 4.0))).release().collect()["x"].to_numpy()
    mant, expo = np.frexp(sums[sums != 0])
    ints = (np.abs(mant) * 2.0**53).astype(np.int64)
    lowest = expo - 53 + np.array([(int(i) & -int(i)).bit_length() - 1 for i in ints])
    assert lowest.max() <= -30 and np.median(lowest) <= -40, (lowest.max(), np.median(lowest))


# --- the sampler against a brute-force posterior at tiny n -----------------------------------------------------

TINY = {"sd": 1.5, "lo": 0.0, "hi": 4.0, "prior_mean": 2.0, "prior_sd": 1.0, "n_prior": {"name": "poisson", "mean": 6}}
TINY_RELEASE = {"library": "opendp", "mechanism": "mean", "sum_scale": 1.5, "length_scale": 1.0}
TINY_R = 3.1


def _brute_force(sum_scale: float, length_scale: float, n_max: int = 30, h: float = 0.02):
    """p(mu, n | r) on a mu grid x n = 0..n_max: S's law for each (mu, n) by FFT convolution of one record's law
    discretised on lo + h Z (atoms P(X <= lo), P(X >= hi) at the bounds, the interior by cell masses centred on
    the grid points: mass-preserving, O(h^2) error in E[f(S)]), then p(r | mu, n) = sum_S P(S) p(r | S, n)."""
    lo, hi, sd = TINY["lo"], TINY["hi"], TINY["sd"]
    mech = OpenDPMean(sum_scale, length_scale, lo, hi)
    j = int(round((hi - lo) / h))
    grid = lo + h * np.arange(j + 1)
    mus = np.linspace(-2.0, 6.0, 321)
    edges = np.concatenate([[-np.inf], grid[:-1] + h / 2, [np.inf]])
    rec = np.diff(stats.norm.cdf((edges[None, :] - mus[:, None]) / sd), axis=1)  # (mu, grid)
    size = 1 << int(math.ceil(math.log2(n_max * j + 1)))
    f = np.fft.rfft(rec, size, axis=1)
    log_post = np.full((mus.size, n_max + 1), -np.inf)
    prior_n = stats.poisson(TINY["n_prior"]["mean"]).logpmf(np.arange(n_max + 1))
    prior_mu = stats.norm(TINY["prior_mean"], TINY["prior_sd"]).logpdf(mus)
    for n in range(n_max + 1):
        s_grid = n * lo + h * np.arange(n * j + 1)
        dens = np.exp(mech.log_prob(TINY_R, s_grid, n))
        law = np.fft.irfft(f**n, size, axis=1)[:, : n * j + 1] if n else np.ones((mus.size, 1))
        log_post[:, n] = prior_mu + prior_n[n] + np.log(np.maximum(law @ dens, 1e-300))
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    p_mu, p_n = post.sum(axis=1), post.sum(axis=0)
    mean_mu = float(p_mu @ mus)
    return {"mean_mu": mean_mu, "sd_mu": float(math.sqrt(p_mu @ (mus - mean_mu) ** 2)),
            "mean_n": float(p_n @ np.arange(n_max + 1)), "p_n_le_3": float(p_n[:4].sum()), "tail": float(p_n[-3:].sum())}


def _mcse(x: np.ndarray, batches: int = 20) -> float:
    """Batch-means standard error of the mean of draws x (chain, draw): each chain cut into ``batches``."""
    c, d = x.shape
    means = x[:, : d - d % batches].reshape(c, batches, -1).mean(axis=2).ravel()
    return float(means.std(ddof=1) / math.sqrt(means.size))


def test_sampler_matches_the_brute_force_posterior_at_tiny_n():
    """n ~ Poisson(6), r = 3.1 (high in [0, 4]: small n, whose noise is wide, explains it best): the chain's
    posterior mean and sd of mu, mean of n and P(n <= 3) agree with the brute-force posterior within 4.5 batch-means
    standard errors; the brute force with the sum's scale doubled is farther than that (the check can fail)."""
    spec = {"seed": 11, "model": {"name": "normal_known_sd", **TINY}, "release": TINY_RELEASE,
            "data": {"s_dp": [TINY_R]}, "method": {"name": "pseudo_marginal", "chains": 4, "draws": 6000,
                                                   "warmup": 1000}}
    problem = engine.prepare(spec)
    res = engine.run_method(problem, spec["method"], seed=spec["seed"])
    assert res.param_names == ("mu", "n", "clamped_mean") and res.info["unknown_n"]
    mu, n = res.draws[..., 0], res.draws[..., 1]
    got = {"mean_mu": mu.mean(), "sd_mu": mu.std(), "mean_n": n.mean(), "p_n_le_3": (n <= 3).mean()}
    se = {"mean_mu": _mcse(mu), "sd_mu": _mcse((mu - mu.mean()) ** 2) / (2 * mu.std()), "mean_n": _mcse(n),
          "p_n_le_3": _mcse((n <= 3).astype(float))}
    truth = _brute_force(1.5, 1.0)
    assert truth["tail"] < 1e-9 and 0.05 < truth["p_n_le_3"] < 0.95
    for key in got:
        assert abs(got[key] - truth[key]) < 4.5 * se[key], (key, got[key], truth[key], se[key])
    wrong = _brute_force(3.0, 1.0)
    assert max(abs(got[k] - wrong[k]) / se[k] for k in got) > 10.0
    np.testing.assert_allclose(res.draws[..., 2], clamped_mean(mu, TINY["sd"], TINY["lo"], TINY["hi"]))


# --- SBC over releases made by OpenDP ----------------------------------------------------------------------------

def test_sbc_over_opendps_releases_and_the_naive_reading_fails():
    """M = 300 replicates: mu ~ Normal(2, 1), n ~ Poisson(20), n records Normal(mu, 1) clamped to [0, 4], OpenDP's
    dp.mean at epsilon 1 (one grouped query: every replicate its own group); the chain's posterior CDF at the true
    mu, from 20 thinned draws (rank + uniform jitter), is uniform (KS) and the central 90% interval covers ~90%.
    The naive reading (r the exact mean of n = 20 records: the conjugate normal posterior) fails both.

    A noisy length <= 0 releases r = +-inf (about one replicate in 3,000 here: a small n meets the length's noise of
    scale 2), which data.s_dp cannot carry; those replicates are dropped. Dropping replicates by their data keeps
    SBC valid: given y, theta | y is the posterior whether or not y is in the dropped set. 330 replicates are drawn
    and the first 300 finite ones used."""
    rng = np.random.default_rng(2024)
    m_draw, m_rep, sd, lo, hi = 330, 300, 1.0, 0.0, 4.0
    mus = rng.normal(2.0, 1.0, m_draw)
    ns = rng.poisson(20, m_draw)
    assert ns.min() >= 1  # a group needs a row (P(n = 0) = 2e-9)
    groups = [np.clip(rng.normal(m, sd, k), -50, 50) for m, k in zip(mus, ns)]
    r, b, t = _opendp_grouped_means(groups, (lo, hi), 1.0)
    keep = np.flatnonzero(np.isfinite(r))[:m_rep]
    assert keep.size == m_rep, f"{m_draw - np.isfinite(r).sum()} of {m_draw} releases infinite"
    mus, r = mus[keep], r[keep]
    model = {"name": "normal_known_sd", "sd": sd, "lo": lo, "hi": hi, "prior_mean": 2.0, "prior_sd": 1.0,
             "n_prior": {"name": "poisson", "mean": 20}}
    release = {"library": "opendp", "mechanism": "mean", "sum_scale": b, "length_scale": t}
    u, cover, naive_u = [], [], []
    for i in range(m_rep):
        problem = engine.prepare({"seed": i, "model": model, "release": release, "data": {"s_dp": [r[i]]},
                                  "method": {"name": "pseudo_marginal"}})
        res = mean_ratio_pseudo_marginal(problem, np.random.Generator(np.random.SFC64(i)), chains=1, draws=400,
                                         warmup=200, parallel=False)
        draws = res.draws[0, ::20, 0]
        u.append((np.sum(draws < mus[i]) + rng.random()) / (draws.size + 1))
        lo_q, hi_q = np.quantile(res.draws[0, :, 0], [0.05, 0.95])
        cover.append(lo_q <= mus[i] <= hi_q)
        prec = 1.0 + 20 / sd**2
        naive_u.append(stats.norm.cdf(mus[i], (2.0 + 20 * r[i] / sd**2) / prec, 1 / math.sqrt(prec)))
    p = stats.kstest(u, "uniform").pvalue
    rate = float(np.mean(cover))
    assert p >= P_MIN and abs(rate - 0.9) < 4.5 * math.sqrt(0.09 / m_rep), (p, rate)
    p_naive = stats.kstest(naive_u, "uniform").pvalue
    naive_cover = np.mean((np.array(naive_u) > 0.05) & (np.array(naive_u) < 0.95))
    assert p_naive < 1e-10 and naive_cover < 0.9 - 4.5 * math.sqrt(0.09 / m_rep), (p_naive, naive_cover)


# --- reproducibility, errors, the fixture package ----------------------------------------------------------------

def _spec(**over):
    spec = {"seed": 5, "model": {"name": "normal_known_sd", **TINY}, "release": dict(TINY_RELEASE),
            "data": {"s_dp": [TINY_R]}, "method": {"name": "pseudo_marginal", "chains": 2, "draws": 300, "warmup": 100}}
    for key, value in over.items():
        spec[key] = value
    return spec


def test_same_spec_and_seed_give_identical_draws_and_simulation_releases_a_ratio():
    a = engine.run_method(engine.prepare(_spec()), _spec()["method"], seed=5)
    b = engine.run_method(engine.prepare(_spec()), _spec()["method"], seed=5)
    c = engine.run_method(engine.prepare(_spec()), _spec()["method"], seed=6)
    assert np.array_equal(a.draws, b.draws) and not np.array_equal(a.draws, c.draws)
    sim = _spec(data={"simulate": {"mu": 2.5}}, model={"name": "normal_known_sd", **TINY, "n": 8})
    p1, p2 = engine.prepare(sim), engine.prepare(sim)
    assert p1.true_params == {"mu": 2.5, "n": 8} and p1.s_dp.tolist() == p2.s_dp.tolist()
    assert p1.records.shape == (8,) and p1.unknown_n.n_dp is None and p1.unknown_n.mechanism is None
    known = _spec(model={"name": "normal_known_sd", **{k: v for k, v in TINY.items() if k != "n_prior"}, "n": 7})
    res = engine.run_method(engine.prepare(known), known["method"], seed=5)  # a public n: only mu moves
    assert not res.info["unknown_n"] and res.info["n"] == 7 and np.all(res.sample_stats["n"] == 7)
    with pytest.raises(ValueError, match="^method.proposal = 'mixed' is invalid"):
        engine.run_method(engine.prepare(_spec()), {"name": "pseudo_marginal", "proposal": "mixed"}, seed=5)


@pytest.mark.parametrize("over, field", [
    ({"n_mechanism": {"name": "discrete_laplace", "scale": 1.0}}, "n_mechanism"),
    ({"model": {"name": "poisson_gamma", "n_prior": {"name": "poisson", "mean": 6}}}, "model.name"),
    ({"release": {**TINY_RELEASE, "bounds": [0, 5]}}, "release.bounds"),
    ({"release": {**TINY_RELEASE, "sum_scale": -1}}, "release.sum_scale"),
    ({"release": {"library": "opendp", "mechanism": "mean", "sum_scale": 1.0}}, "release.length_scale"),
    ({"release": {**TINY_RELEASE, "clip": [0, 4]}}, "release.clip"),
    ({"method": {"name": "da_mcmc"}}, "method.name"),
    ({"data": {"s_dp": [TINY_R], "n_dp": 6}}, "data.n_dp"),
])
def test_bad_mean_specs_name_the_field(over, field):
    with pytest.raises(ValueError, match=rf"^{field} = "):
        engine.prepare(_spec(**over))


def test_other_methods_refuse_the_ratio_on_a_prepared_problem():
    problem = engine.prepare(_spec())
    with pytest.raises(ValueError, match="method.name = 'exact' is invalid for OpenDP mean"):
        engine.run_method(problem, {"name": "exact"}, seed=1)
    # a compiled additive-noise sampler's lookup names the release (it raised TypeError: int(None))
    with pytest.raises(ValueError, match=r"^mechanism = OpenDP mean .* is invalid for this sampler: it is not"):
        compiled_noise(problem.mechanism)


def test_a_known_n_is_no_parameter_and_no_convergence_check():
    """A public n cannot move: its draws were a column of 40s whose R-hat is undefined and ESS 0, and every run was
    "not converged: n never moved" (the app's banner, its n histogram of one bar, the CLI's warning; auto reran
    with four times the draws for it). With a known n the result's parameters are mu and the clamped mean (the
    browser audit's scenario: sum_scale = length_scale = 3 on [-3, 3], n = 40)."""
    model = {"name": "normal_known_sd", "n": 40, "sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 10.0}
    known = _spec(model=model, release={**TINY_RELEASE, "sum_scale": 3.0, "length_scale": 3.0},
                  data={"simulate": {"mu": 0.3}}, method={"name": "pseudo_marginal", "chains": 4, "draws": 2000,
                                                          "warmup": 500})
    problem = engine.prepare(known)
    res = engine.run_method(problem, known["method"], seed=5)
    assert res.param_names == ("mu", "clamped_mean") and res.info["n"] == 40 and np.all(res.sample_stats["n"] == 40)
    verdict = engine.summary(res).attrs["convergence"]
    assert verdict["converged"] and not any("never moved" in r for r in verdict["reasons"]), verdict
    np.testing.assert_allclose(res.draws[..., 1], clamped_mean(res.draws[..., 0], 1.0, -3.0, 3.0))
    auto = engine.run_method(problem, {**known["method"], "name": "auto"}, seed=5)
    assert [a["method"] for a in auto.info["attempts"]] == ["pseudo_marginal"]  # no rerun for a constant n


def test_auto_serves_the_mean_with_its_one_exact_method():
    """Exact (best method) on OpenDP's mean raised TypeError (int(None): the ratio has no noise kernel) when the app
    priced it: auto now picks the pseudo-marginal chain on (mu, n), says why, and its draws are that chain's on the
    same stream; a chain that does not converge reruns with four times the draws (there is no other chain)."""
    problem = engine.prepare(_spec())
    picked, why, _ = choose(problem, np.random.default_rng(0))
    assert picked == "pseudo_marginal" and "one exact method" in why, why
    cost = engine.estimate_cost(problem, {"name": "auto", "chains": 2, "draws": 300, "warmup": 100})
    assert cost.unit == "record draws" and "auto picks pseudo_marginal" in cost.detail
    settings = {"name": "auto", "chains": 2, "draws": 300, "warmup": 100}
    res = engine.run_method(problem, settings, seed=5)
    assert res.method == "auto" and res.info["picked"] == "pseudo_marginal" and res.info["mcmc"] is True
    assert res.param_names == ("mu", "n", "clamped_mean") and res.info["attempts"][0]["method"] == "pseudo_marginal"
    np.testing.assert_array_equal(res.draws, engine.run_method(problem, settings, seed=5).draws)
    short = engine.run_method(problem, {**settings, "draws": 20, "warmup": 20}, seed=5)
    assert [(a["method"], a["draws"]) for a in short.info["attempts"]] == [("pseudo_marginal", 20),
                                                                          ("pseudo_marginal", 80)]
    assert "da_mcmc does not serve this scenario, so pseudo_marginal reran with 80 draws" in short.info["why"]
    assert "neither" not in short.info["why"]


def test_fixture_package_writes_a_mean_spec_whose_posterior_covers_the_true_mean(tmp_path):
    """The dp-wizard package's mean of hours (r = 11.47, true mean 11.885, n = 400): one spec, hours_mean.toml, with
    the notebook's scales (240, 6), n's prior from the grade histogram's released total; its posterior's central
    99% intervals of mu and of the clamped mean cover the true mean, and n's covers 400."""
    summary = import_dpwizard(PACKAGE, str(tmp_path), use_opendp=False)
    hours = summary["statistics"][1]
    assert hours["analysed"] and hours["spec"] == "hours_mean.toml"
    assert hours["sum_scale"] == pytest.approx(240.0, rel=1e-6) and hours["length_scale"] == pytest.approx(6.0)
    assert hours["n_prior"]["mean"] == pytest.approx(401.0) and "grade" in hours["n_prior_source"]
    assert "OpenDP mean (dp.mean) on [0, 40]" in hours["mapping"]
    spec = engine.load_spec(str(tmp_path / "hours_mean.toml"))
    assert spec.release["mechanism"] == "mean" and spec.n_mechanism is None
    res = engine.run_method(engine.prepare(spec), {"name": "pseudo_marginal", "chains": 2, "draws": 1500,
                                                   "warmup": 500}, seed=spec.seed)
    for j, true in ((0, TRUE_HOURS_MEAN), (2, TRUE_HOURS_MEAN), (1, 400)):
        lo, hi = np.quantile(res.draws[..., j], [0.005, 0.995])
        assert lo < true < hi, (res.param_names[j], lo, hi)


def test_its_cost_is_priced_from_the_particles_and_n():
    """The app prices every run before starting it: M particles of n simulated records per iteration (it raised
    TypeError on the ratio's missing noise kernel)."""
    problem = engine.prepare(_spec())
    one = engine.estimate_cost(problem, {"name": "pseudo_marginal", "chains": 2, "draws": 1000, "warmup": 500,
                                         "particles": 3})
    assert one.unit == "record draws" and one.units == 2 * 1500 * 3 * problem.model.n and one.seconds > 0
    assert "M = 3 particles" in one.detail
    piloted = engine.estimate_cost(problem, {"name": "pseudo_marginal", "chains": 2, "draws": 1000, "warmup": 500})
    assert piloted.units >= 2 * 1500 * problem.model.n


# --- what the release protects ------------------------------------------------------------------------------------

def test_what_an_opendp_mean_protects_is_the_curve_of_its_sum_and_length_pair():
    """engine.risk said "mechanism.name = 'opendp_mean' is invalid: has no trade-off curve here". OpenDP's mean
    releases sum / length; both are noisy and the ratio is computed from them, so the curve of the pair (Laplace b
    on a sum moved by max(|lo|, |hi|), discrete Laplace t on a length moved by 1) lower-bounds every attack on the
    ratio. Checked by Monte Carlo both ways: the pair's likelihood-ratio tests lie on the curve (it is the pair's
    exact curve, within Monte Carlo and grid error), and threshold tests on the released ratio itself (at a small
    n, where the ratio says most) lie on or above it."""
    r = engine.risk(_spec())
    mech = engine.prepare(_spec()).mechanism
    b, t, delta = mech.sum_scale, mech.length_scale, mech.sensitivity
    assert r["mechanism"] == "opendp_mean" and r["attack_on"] == "the (sum, length) pair"
    assert r["epsilon"] == pytest.approx(delta / b + 1 / t, rel=1e-12)
    assert r["informed_adversary"]["max"] == pytest.approx(1 / (1 + math.exp(-(delta / b + 1 / t))), abs=1e-12)
    assert "no attack on the released ratio does better" in r["neighbours"]["note"]
    rng = np.random.default_rng(11)
    m, n0, s0 = 200_000, 3, 6.0  # D: 3 records summing to 6; D': one more record at hi = 4
    a = math.exp(-1.0 / t)

    def pair(s, n):
        return (s + rng.laplace(0.0, b, m), n + rng.geometric(1 - a, m) - rng.geometric(1 - a, m))

    def loss(x, y):  # log p1 / p0 of the pair: the Laplace coordinate's and the discrete Laplace coordinate's
        return (np.abs(x - s0) - np.abs(x - s0 - delta)) / b + (np.abs(y - n0) - np.abs(y - n0 - 1)) / t

    l0, l1 = loss(*pair(s0, n0)), loss(*pair(s0 + delta, n0 + 1))
    with np.errstate(divide="ignore", invalid="ignore"):  # a length noised to 0 or below: OpenDP's +-inf or nan
        r0 = (s0 + rng.laplace(0.0, b, m)) / np.maximum(n0 + rng.geometric(1 - a, m) - rng.geometric(1 - a, m), 0)
        r1 = (s0 + delta + rng.laplace(0.0, b, m)) / np.maximum(n0 + 1 + rng.geometric(1 - a, m)
                                                               - rng.geometric(1 - a, m), 0)
    r0, r1 = np.nan_to_num(r0, nan=-np.inf), np.nan_to_num(r1, nan=-np.inf)  # 0/0: the length's noise took it all
    def band(risk, alpha, beta):  # the curve within 4 Monte Carlo sds of each error rate, through its slope
        sa, sb = 4 * math.sqrt(alpha * (1 - alpha) / m), 4 * math.sqrt(beta * (1 - beta) / m)
        t_ = risk["tradeoff"]
        curve = lambda x: float(np.interp(min(max(x, 0.0), 1.0), t_["alpha"], t_["beta"]))  # noqa: E731
        return curve(alpha + sa) - sb - t_["max_error"], curve(alpha - sa) + sb + t_["max_error"]

    wrong = engine.risk(_spec(release={**TINY_RELEASE, "sum_scale": 2 * b}))  # the curve of twice the noise
    below_wrong = 0
    for tau in np.quantile(l1, np.linspace(0.05, 0.95, 19)):  # the pair's likelihood-ratio tests: on the curve
        alpha, beta = float(np.mean(l0 >= tau)), float(np.mean(l1 < tau))
        low, high = band(r, alpha, beta)
        assert low <= beta <= high, (tau, alpha, beta, low, high)
        below_wrong += beta < band(wrong, alpha, beta)[0]
    assert below_wrong >= 10  # the check can fail: these attacks beat a curve drawn for twice the noise
    for tau in np.quantile(r1[np.isfinite(r1)], np.linspace(0.05, 0.95, 19)):  # the ratio's: on or above it
        alpha, beta = float(np.mean(r0 >= tau)), float(np.mean(r1 < tau))
        assert beta >= band(r, alpha, beta)[0], (tau, alpha, beta)


@pytest.mark.parametrize("epsilon, contributions, bounds", [(0.3, 1, (-3.0, 3.0)), (1.7, 2, (0.0, 4.0))])
def test_a_budget_carried_into_the_mean_gets_opendps_own_scales(epsilon, contributions, bounds):
    """The sidebar's switch to OpenDP's mean carries the budget into its two scale boxes (ui.params.carry): the
    scales OpenDP itself gives dp.mean at that budget (a compositor over the whole ε, as dp-wizard builds it), read
    from its ``summarize()``; the carried release's own ε is the budget. Before, the boxes kept their blank
    defaults and the budget was not carried."""
    from ui.params.carry import carried_release
    from ui.params.scenario import Scenario

    dp = pytest.importorskip("opendp.prelude")
    pl = pytest.importorskip("polars")
    dp.enable_features("contrib")
    frame = pl.LazyFrame({"x": [1.0, 2.0, 3.0]})
    ctx = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=contributions),
                                privacy_loss=dp.loss_of(epsilon=epsilon), split_evenly_over=1,
                                margins=[dp.polars.Margin(max_length=1000)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = ctx.query().select(pl.col("x").fill_null(0.0).dp.mean(bounds)).summarize()
    scales = dict(zip(table["aggregate"], table["scale"]))
    s = Scenario(model="normal_known_sd", prior=(("sd", 1.0), ("lo", bounds[0]), ("hi", bounds[1]),
                                                 ("prior_mean", 0.0), ("prior_sd", 10.0)),
                 release="opendp", release_mechanism="mean", release_params=(("contributions", contributions),))
    values, _ = carried_release(("epsilon", epsilon), s)
    assert values["sum_scale"] == pytest.approx(scales["Sum"], rel=1e-5)
    assert values["length_scale"] == pytest.approx(scales["Length"], rel=1e-5)
    mapped = engine.release_from("opendp", "mean", bounds=list(bounds), contributions=contributions, **values)
    assert mapped.guarantee["epsilon"] == pytest.approx(epsilon, rel=1e-5)
