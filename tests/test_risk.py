"""What epsilon protects (engine.protection, engine.risk, python -m engine risk): closed forms, the
guarantees' curves, the adversaries against brute-force enumeration, and the command line's contract."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import special, stats

import engine
from engine.mechanisms import make_mechanism
from engine.models import make_model
from engine.protection import (alpha_grid, epsilon_dp_tradeoff, experiment, gdp_tradeoff, laplace_tradeoff, neighbours,
                               zcdp_tradeoff)
from engine.protection.report import privacy_side
from engine.protection.tradeoff import LAPLACE_BINS

A = np.linspace(0.0, 1.0, 20001)  # a fine grid of type I errors for the curve comparisons


def _spec(model, mechanism, s_dp):
    return {"seed": 3, "model": model, "mechanism": mechanism, "data": {"s_dp": s_dp}}


BB = {"name": "beta_binomial", "n": 5, "a": 2.0, "b": 3.0}


# --- the optimal attack's curve -------------------------------------------------------------------------

@pytest.mark.parametrize("sigma, model", [(2.0, BB), (0.7, BB), (1.5, {"name": "normal_known_sd", "n": 10, "lo": -1.0, "hi": 2.0})])
def test_gaussian_curve_is_phi_of_shifted_quantile(sigma, model):
    r = engine.risk(_spec(model, {"name": "gaussian", "sigma": sigma}, [1.0]))
    delta = 1.0 if model["name"] == "beta_binomial" else 3.0
    alpha = np.asarray(r["tradeoff"]["alpha"])
    expected = stats.norm.cdf(stats.norm.ppf(1 - alpha) - delta / sigma)
    np.testing.assert_allclose(r["tradeoff"]["beta"], expected, atol=1e-14)
    assert r["bound"]["kind"] == "gdp" and r["bound"]["mu"] == pytest.approx(delta / sigma)
    np.testing.assert_allclose(r["bound"]["beta"], expected, atol=1e-14)  # the Gaussian attains its mu-GDP curve
    assert r["epsilon"] is None and r["informed_adversary"]["max"] is None
    # beliefs: expit(L), L ~ N(mu^2/2, mu^2) under the truth
    mu = delta / sigma
    for key, q in (("q50", 0.5), ("q95", 0.95), ("q99", 0.99)):
        assert r["informed_adversary"][key] == pytest.approx(special.expit(mu**2 / 2 + mu * stats.norm.ppf(q)), abs=1e-14)
    assert r["power_at_5pct"] == pytest.approx(1 - stats.norm.cdf(stats.norm.ppf(0.95) - mu), abs=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, math.log(3), 4.0])
def test_binary_randomized_response_lies_on_the_epsilon_dp_curve(eps):
    model = make_model("beta_binomial", {"n": 5})
    mech = make_mechanism("randomized_response", {"epsilon": eps}, k=2)
    e = experiment(model, mech)
    np.testing.assert_allclose(e.tradeoff(A), epsilon_dp_tradeoff(A, eps), atol=1e-13)
    assert privacy_side(model, mech)["informed_adversary"]["max"] == pytest.approx(math.exp(eps) / (1 + math.exp(eps)), abs=1e-13)


def test_k_ary_randomized_response_is_above_the_curve_in_the_middle():
    model = make_model("dirichlet_multinomial", {"n": 5, "alpha": [1, 1, 1]})
    mech = make_mechanism("randomized_response", {"epsilon": 1.0}, k=3)
    e = experiment(model, mech)
    gap = e.tradeoff(A) - epsilon_dp_tradeoff(A, 1.0)
    assert gap.min() > -1e-13 and gap.max() > 0.05  # the reports of third categories carry no evidence


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_laplace_curve_closed_form_never_below_and_strictly_above_at_the_kink(eps):
    r = engine.risk(_spec(BB, {"name": "laplace", "epsilon": eps}, [2.3]))
    model, mech = make_model("beta_binomial", BB), make_mechanism("laplace", {"epsilon": eps})
    e = experiment(model, mech)
    err = e.max_error
    assert 0 <= err <= eps**2 / (4 * LAPLACE_BINS**2) * (1 + 1e-6)
    beta = e.tradeoff(A)
    # the computed curve is the true one's chords: never below it, at most max_error above
    diff = beta - laplace_tradeoff(A, eps)
    assert diff.min() > -1e-13 and diff.max() <= err + 1e-13
    assert (beta - epsilon_dp_tradeoff(A, eps)).min() > -1e-13
    kink = 1 / (1 + math.exp(eps))
    above = float(e.tradeoff(kink)) - 1 / (1 + math.exp(eps))
    assert above == pytest.approx((1 + math.exp(-eps)) / 4 - 1 / (1 + math.exp(eps)), abs=err + 1e-12)
    assert above > 1e-3
    # it touches the bound near the ends (alpha < e^-eps / 2 and alpha > 1/2)
    ends = A[(A < math.exp(-eps) / 2) | (A > 0.5)]
    np.testing.assert_allclose(e.tradeoff(ends), epsilon_dp_tradeoff(ends, eps), atol=err + 1e-13)
    assert r["informed_adversary"]["max"] == pytest.approx(math.exp(eps) / (1 + math.exp(eps)), abs=1e-13)
    np.testing.assert_allclose(r["tradeoff"]["beta"], laplace_tradeoff(np.asarray(r["tradeoff"]["alpha"]), eps), atol=err + 1e-13)


def test_discrete_laplace_and_gaussian_curves_are_convex_decreasing_hulls():
    model = make_model("dirichlet_multinomial", {"n": 5, "alpha": [1, 1, 1]})
    for mech in (make_mechanism("discrete_laplace", {"epsilon": 1.0}, default_sensitivity=2.0),
                 make_mechanism("discrete_gaussian", {"sigma": 0.8}, default_sensitivity=math.sqrt(2)),
                 make_mechanism("randomized_response", {"scheme": "coin", "truth_prob": 0.4}, k=4)):
        e = experiment(model, mech)
        a, b = e.alpha_vertices, e.beta_vertices
        assert a[0] == 0 and a[-1] == 1 and b[-1] == 0 and np.all(np.diff(a) > 0) and np.all(np.diff(b) <= 1e-15)
        wide = np.diff(a) > 1e-9  # segments long enough for their slope to be read in floating point
        slopes = (np.diff(b) / np.diff(a))[wide]
        assert np.all(np.diff(slopes) >= -1e-6 * np.abs(slopes[:-1])), mech.name  # convex: slopes rise
        beta = e.tradeoff(A)
        assert np.all(np.diff(beta) <= 1e-15)
        # the chord between any two points lies above the curve (convexity on the fine grid)
        mid = e.tradeoff((A[:-2] + A[2:]) / 2)
        assert np.all(mid <= (beta[:-2] + beta[2:]) / 2 + 1e-13)
        assert len(e.alpha_vertices) < 5000  # piecewise linear: a hull of finitely many vertices


def test_discrete_laplace_on_two_counts_is_the_product_of_two_half_budget_channels():
    """Dirichlet counts with L1 sensitivity 2 at epsilon: each of the two moved counts is a binary
    channel with loss +-eps/2 (y <= 0 or y >= 1), so the curve has vertices at the product's three
    loss levels and the informed maximum is e^eps/(1+e^eps)."""
    model = make_model("dirichlet_multinomial", {"n": 5, "alpha": [1, 1, 1]})
    eps = 1.2
    mech = make_mechanism("discrete_laplace", {"epsilon": eps}, default_sensitivity=2.0)
    e = experiment(model, mech)
    lam = 1 / mech.scale
    p_hi = math.exp(-lam) / (1 + math.exp(-lam))  # P0(y >= 1) for the discrete Laplace at t = 1/lam
    p_lo = 1 - p_hi
    a1 = p_hi**2
    a2 = a1 + 2 * p_hi * p_lo
    expected = np.interp(A, [0, a1, a2, 1], [1, 1 - p_lo**2, 1 - p_lo**2 - 2 * p_hi * p_lo, 0])
    np.testing.assert_allclose(e.tradeoff(A), expected, atol=1e-14)
    assert privacy_side(model, mech)["informed_adversary"]["max"] == pytest.approx(special.expit(eps), abs=1e-13)


def test_discrete_gaussian_needs_the_zcdp_bound_not_mu_gdp():
    """The lattice lets the first rejected outcome carry a whole atom: the curve dips below the mu-GDP
    curve of the same rho (so that curve is no bound) but never below the rho-zCDP envelope."""
    model = make_model("beta_binomial", {"n": 5})
    mech = make_mechanism("discrete_gaussian", {"sigma": 1.0})
    beta = experiment(model, mech).tradeoff(A)
    rho = mech.guarantee["rho"]
    assert (beta - gdp_tradeoff(A, 1.0)).min() < -0.01
    assert (beta - zcdp_tradeoff(A, rho)).min() > -1e-12
    r = privacy_side(model, mech)
    assert r["bound"]["kind"] == "zcdp" and r["informed_adversary"]["max"] is None


def _attack_rates(mech, d, threshold_loss, rng, draws):
    """Empirical (type I, type II) of 'say x1 when the privacy loss exceeds c', releases drawn with the
    mechanism's own sampler."""
    y0 = mech.sample(rng, np.zeros(draws)[:, None])
    y1 = mech.sample(rng, np.full(draws, d)[:, None])

    def loss(y):
        return mech.noise_log_prob(y - d) - mech.noise_log_prob(y)

    return float(np.mean(loss(y0)[:, 0] > threshold_loss)), float(np.mean(loss(y1)[:, 0] <= threshold_loss))


@pytest.mark.parametrize("name, params", [("laplace", {"epsilon": 1.0}), ("gaussian", {"sigma": 1.3})])
def test_curve_matches_attacks_on_the_real_sampler_and_a_wrong_noise_fails(name, params):
    """Monte Carlo: the likelihood-ratio attack at one threshold, run on releases drawn by the mechanism
    itself, lands on the computed curve within 4 binomial standard errors; the same check against the
    curve of a wrong noise scale (negative control) fails."""
    model = make_model("beta_binomial", {"n": 5})
    mech = make_mechanism(name, params)
    curve = experiment(model, mech)
    wrong = experiment(model, make_mechanism(name, {k: v * 1.3 for k, v in params.items()}))
    rng = np.random.default_rng(20240521)
    draws = 200_000
    for c in (-0.3, 0.2):
        a_hat, b_hat = _attack_rates(mech, 1.0, c, rng, draws)
        # the threshold test's (a, b) is a point of the optimal curve: b = beta(a)
        slope = abs(float(curve.tradeoff(min(a_hat + 1e-3, 1))) - float(curve.tradeoff(max(a_hat - 1e-3, 0)))) / 2e-3
        tol = 4 * math.sqrt(b_hat * (1 - b_hat) / draws + slope**2 * a_hat * (1 - a_hat) / draws)
        assert abs(b_hat - float(curve.tradeoff(a_hat))) < tol
        assert abs(b_hat - float(wrong.tradeoff(a_hat))) > tol


# --- the informed adversary -------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", [{"name": "laplace", "epsilon": 0.7}, {"name": "discrete_laplace", "epsilon": 0.7},
                                       {"name": "randomized_response", "epsilon": 0.7}])
def test_informed_maximum_is_e_eps_over_one_plus_e_eps(mechanism):
    r = engine.risk(_spec(BB, mechanism, [2.0]))
    top = math.exp(0.7) / (1 + math.exp(0.7))
    ia = r["informed_adversary"]
    assert ia["prior"] == 0.5 and ia["max"] == pytest.approx(top, abs=1e-13)
    assert 0.5 <= ia["q50"] <= ia["q95"] <= ia["q99"] <= ia["max"] + 1e-15
    assert r["epsilon"] == pytest.approx(0.7)


def test_informed_belief_law_of_laplace_matches_simulation():
    """The belief law's cdf at 0.6 against beliefs computed from releases drawn by the mechanism
    (truth 50/50), within 4 binomial standard errors."""
    model = make_model("beta_binomial", {"n": 5})
    mech = make_mechanism("laplace", {"epsilon": 1.0})
    b, p = experiment(model, mech).belief_law()
    rng = np.random.default_rng(5)
    draws = 100_000
    truth = rng.random(draws) < 0.5
    y = mech.sample(rng, truth.astype(float)[:, None])[:, 0]
    loss = mech.noise_log_prob(y - 1.0) - mech.noise_log_prob(y)
    belief = np.where(truth, special.expit(loss), special.expit(-loss))
    for cut in (0.55, 0.6, 0.7):
        exact = float(p[b <= cut].sum())
        assert abs(np.mean(belief <= cut) - exact) < 4 * math.sqrt(exact * (1 - exact) / draws) + 2e-4


def test_share_of_releases_at_the_pure_dp_ceiling():
    """``at_max``: the share of releases whose belief reaches the ceiling. Binary randomized response: every report
    moves the guess to the ceiling or the floor, the ceiling with probability e^eps / (1 + e^eps); Laplace noise:
    its two tails, half the releases, also when a clip merges the outcomes on a loss lattice (cells a few 1e-8
    below the exact loss); Gaussian noise has no ceiling."""
    model = make_model("beta_binomial", {"n": 5})
    rr = privacy_side(model, make_mechanism("randomized_response", {"epsilon": 0.9}))["informed_adversary"]
    assert rr["at_max"] == pytest.approx(special.expit(0.9), abs=1e-12)
    lap = privacy_side(model, make_mechanism("laplace", {"epsilon": 1.0}))["informed_adversary"]
    assert lap["at_max"] == pytest.approx(0.5, abs=1e-9)
    clipped = engine.risk(_spec({"name": "beta_binomial", "n": 20}, {"name": "laplace", "epsilon": 1.0,
                                                                      "clip": [0, 20]}, [6.0]), realistic=False)
    assert clipped["informed_adversary"]["at_max"] == pytest.approx(0.5, abs=1e-3)
    assert privacy_side(model, make_mechanism("gaussian", {"rho": 0.5}))["informed_adversary"]["at_max"] is None


# --- the realistic adversary against enumeration ----------------------------------------------------------

def _enumerate(problem, values, log_prior_records, log_release):
    """P(x_1 = v | s_dp) and P(x_1 = v) by summing over every record vector."""
    n = problem.model.n
    post = np.zeros(len(values))
    prior = np.zeros(len(values))
    for x in itertools.product(range(len(values)), repeat=n):
        lp = log_prior_records(np.asarray(x))
        prior[x[0]] += math.exp(lp)
        post[x[0]] += math.exp(lp + log_release(np.asarray(x)))
    return prior / prior.sum(), post / post.sum()


@pytest.mark.parametrize("mechanism, s_dp", [({"name": "laplace", "epsilon": 0.8}, [3.4]),
                                             ({"name": "discrete_gaussian", "sigma": 1.2}, [4.0]),
                                             ({"name": "randomized_response", "epsilon": 1.1}, [1.0])])
def test_realistic_beta_binomial_equals_enumeration(mechanism, s_dp):
    problem = engine.prepare(_spec(BB, mechanism, s_dp))
    model, mech = problem.model, problem.mechanism
    a, b = model.a, model.b

    def log_prior(x):
        s = x.sum()
        return special.betaln(a + s, b + len(x) - s) - special.betaln(a, b)

    if mechanism["name"] == "randomized_response":
        lq = mech.log_Q

        def log_release(x):  # sum over every report vector with the released count of ones
            tot = [sum(lq[xi, zi] for xi, zi in zip(x, z)) for z in itertools.product((0, 1), repeat=len(x))
                   if sum(z) == s_dp[0]]
            return special.logsumexp(tot)
    else:
        def log_release(x):
            return float(mech.log_prob(np.asarray(s_dp), np.array([x.sum()])))

    prior, post = _enumerate(problem, [0, 1], log_prior, log_release)
    r = engine.risk(problem)["realistic_adversary"]
    assert r["available"] and r["values"] == [0, 1]
    np.testing.assert_allclose(r["prior"], prior, atol=1e-12)
    np.testing.assert_allclose(r["posterior"], post, atol=1e-10)
    assert abs(post[1] - prior[1]) > 1e-3  # the release moved the guess: the comparison has teeth


@pytest.mark.parametrize("mechanism", [{"name": "laplace", "epsilon": 1.5}, {"name": "discrete_laplace", "epsilon": 1.5}])
def test_realistic_dirichlet_equals_enumeration(mechanism):
    spec = _spec({"name": "dirichlet_multinomial", "n": 4, "alpha": [0.5, 1.0, 2.0]}, mechanism, [3.0, 1.0, 0.0])
    problem = engine.prepare(spec)
    alpha = np.asarray(problem.model.alpha)

    def log_prior(x):
        c = np.bincount(x, minlength=3)
        return float(special.gammaln(alpha.sum()) - special.gammaln(alpha.sum() + len(x))
                     + np.sum(special.gammaln(alpha + c) - special.gammaln(alpha)))

    def log_release(x):
        return float(problem.mechanism.log_prob(problem.s_dp, np.bincount(x, minlength=3).astype(float)))

    prior, post = _enumerate(problem, [0, 1, 2], log_prior, log_release)
    r = engine.risk(problem)["realistic_adversary"]
    np.testing.assert_allclose(r["prior"], prior, atol=1e-12)
    np.testing.assert_allclose(r["posterior"], post, atol=1e-9)


def test_realistic_poisson_equals_enumeration():
    spec = _spec({"name": "poisson_gamma", "n": 3, "alpha": 3.0, "beta": 2.0}, {"name": "laplace", "epsilon": 0.9}, [7.3])
    problem = engine.prepare(spec)
    m = problem.model
    top = 22  # records above 22 carry < 1e-12 of the mass at this prior

    def log_prior(x):
        s = x.sum()
        return float(special.gammaln(m.alpha + s) - special.gammaln(m.alpha) - special.gammaln(x + 1).sum()
                     + m.alpha * math.log(m.beta) - (m.alpha + s) * math.log(m.beta + len(x)))

    def log_release(x):
        return float(problem.mechanism.log_prob(problem.s_dp, np.array([float(x.sum())])))

    prior, post = _enumerate(problem, list(range(top + 1)), log_prior, log_release)
    r = engine.risk(problem)["realistic_adversary"]
    k = min(len(r["values"]), top + 1)
    np.testing.assert_allclose(r["prior"][:k], prior[:k], atol=1e-9)
    np.testing.assert_allclose(r["posterior"][:k], post[:k], atol=1e-9)
    assert sum(r["posterior"]) == pytest.approx(1.0, abs=2e-6)


def test_realistic_clamped_poisson_equals_enumeration():
    """n = 3 records clamped at U = 3 under a Gamma(3, 2) prior, Laplace noise: P(c_1 = v | s_dp) by summing
    over all 4^3 clamped record vectors, each vector's prior probability a one-dimensional integral over lam
    (scipy quad), against the grid evidences (interpolation tolerance 1e-5 in log density)."""
    from scipy import integrate
    spec = _spec({"name": "poisson_gamma", "n": 3, "alpha": 3.0, "beta": 2.0, "upper": 3}, {"name": "laplace", "epsilon": 0.9}, [5.3])
    problem = engine.prepare(spec)
    m, mech = problem.model, problem.mechanism

    def log_q(c, lam):
        return stats.poisson.logsf(2, lam) if c == 3 else stats.poisson.logpmf(c, lam)

    cache = {}

    def log_prior(x):
        key = tuple(sorted(x.tolist()))
        if key not in cache:
            f = lambda lam: math.exp(stats.gamma.logpdf(lam, m.alpha, scale=1 / m.beta) + sum(log_q(c, lam) for c in key))
            cache[key] = math.log(integrate.quad(f, 0, 60, epsabs=0, epsrel=1e-12, limit=200)[0])
        return cache[key]

    def log_release(x):
        return float(mech.log_prob(problem.s_dp, np.array([float(x.sum())])))

    prior, post = _enumerate(problem, [0, 1, 2, 3], log_prior, log_release)
    r = engine.risk(problem)["realistic_adversary"]
    assert r["available"] and r["values"] == [0, 1, 2, 3] and r["labels"][-1] == "3+"
    np.testing.assert_allclose(r["prior"], prior, atol=1e-9)
    np.testing.assert_allclose(r["posterior"], post, atol=2e-5)
    assert np.abs(post - prior).max() > 0.03  # the release moved the guess: the comparison has teeth


def test_realistic_randomized_response_beyond_the_mixture_table():
    """n > 5000: the one-integral-per-value route; it agrees with the mixture table where both run (n = 300)."""
    from engine.protection import realistic
    problem = engine.prepare(_spec({"name": "beta_binomial", "n": 300, "a": 2.0, "b": 3.0},
                                   {"name": "randomized_response", "epsilon": 1.0}, [140.0]))
    table = engine.risk(problem)["realistic_adversary"]["posterior"]
    _, _, grid = realistic._rr_large(problem)
    np.testing.assert_allclose(grid, table, atol=2e-5)
    assert abs(table[1] - 0.4) > 1e-3
    big = engine.risk(_spec({"name": "beta_binomial", "n": 20_000, "a": 2.0, "b": 3.0},
                            {"name": "randomized_response", "epsilon": 1.0}, [9000.0]))["realistic_adversary"]
    assert big["available"] and sum(big["posterior"]) == pytest.approx(1.0)


def test_realistic_k_ary_randomized_response_equals_enumeration():
    """Three categories, n = 3: every record vector and every report vector with the released counts."""
    spec = _spec({"name": "dirichlet_multinomial", "n": 3, "alpha": [0.5, 1.0, 2.0]},
                 {"name": "randomized_response", "epsilon": 1.2}, [2.0, 1.0, 0.0])
    problem = engine.prepare(spec)
    alpha, lq = np.asarray(problem.model.alpha), problem.mechanism.log_Q

    def log_prior(x):
        c = np.bincount(x, minlength=3)
        return float(special.gammaln(alpha.sum()) - special.gammaln(alpha.sum() + len(x))
                     + np.sum(special.gammaln(alpha + c) - special.gammaln(alpha)))

    def log_release(x):
        tot = [sum(lq[xi, zi] for xi, zi in zip(x, z)) for z in itertools.product(range(3), repeat=len(x))
               if np.array_equal(np.bincount(z, minlength=3), [2, 1, 0])]
        return special.logsumexp(tot)

    prior, post = _enumerate(problem, [0, 1, 2], log_prior, log_release)
    r = engine.risk(problem)["realistic_adversary"]
    assert r["available"]
    np.testing.assert_allclose(r["prior"], prior, atol=1e-12)
    np.testing.assert_allclose(r["posterior"], post, atol=1e-12)
    assert np.abs(post - prior).max() > 0.05


def test_realistic_adversary_says_why_when_not_available():
    r = engine.risk(_spec({"name": "normal_known_sd", "n": 5}, {"name": "laplace", "epsilon": 1.0}, [0.3]))
    assert r["realistic_adversary"]["available"] is False and "discrete records" in r["realistic_adversary"]["reason"]


# --- the sweep, the library call and the command line ---------------------------------------------------

def test_protection_grows_with_epsilon():
    frame = engine.protection_sweep({"model": BB, "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [1.0]}},
                                    [0.25, 0.5, 1.0, 2.0])
    assert list(frame.columns[:1]) == ["epsilon"]
    assert np.all(np.diff(frame["q95"]) > 0) and np.all(np.diff(frame["power_at_5pct"]) > 0)
    np.testing.assert_allclose(frame["max"], special.expit(frame["epsilon"]), atol=1e-13)
    with pytest.raises(ValueError, match="epsilons"):
        engine.protection_sweep({"model": BB, "mechanism": {"name": "laplace", "epsilon": 1.0}, "data": {"s_dp": [1.0]}}, [0.0])


def test_neighbours_at_the_sensitivity():
    assert neighbours(make_model("poisson_gamma", {"n": 4, "upper": 5}), make_mechanism("laplace", {"epsilon": 1.0})).shift == (5.0,)
    assert neighbours(make_model("normal_known_sd", {"n": 4, "lo": -2, "hi": 1}), make_mechanism("laplace", {"epsilon": 1.0})).shift == (3.0,)
    assert neighbours(make_model("dirichlet_multinomial", {"n": 4}), make_mechanism("laplace", {"epsilon": 1.0})).shift == (-1.0, 1.0, 0.0)


TOML = """seed = 7
[model]
name = "beta_binomial"
n = 30
[mechanism]
name = "laplace"
epsilon = 1.0
[data]
simulate = { theta = 0.3 }
"""


def test_cli_writes_risk_json_with_the_contract_keys(tmp_path, cli):
    spec = tmp_path / "s.toml"
    spec.write_text(TOML)
    done = cli("risk", str(spec), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    out = json.loads((tmp_path / "out" / "risk.json").read_text())
    assert out["epsilon"] == pytest.approx(1.0)
    assert len(out["tradeoff"]["alpha"]) >= 101 and out["tradeoff"]["alpha"][0] == 0 and out["tradeoff"]["alpha"][-1] == 1
    assert len(out["tradeoff"]["beta"]) == len(out["tradeoff"]["alpha"])
    assert len(out["bound"]["beta"]) == len(out["bound"]["alpha"]) >= 101
    assert set(out["informed_adversary"]) >= {"prior", "q50", "q95", "q99", "max"}
    assert out["informed_adversary"]["prior"] == 0.5
    assert out["informed_adversary"]["max"] == pytest.approx(math.exp(1) / (1 + math.exp(1)), abs=1e-12)
    assert out["power_at_5pct"] == pytest.approx(1 - float(laplace_tradeoff(0.05, 1.0)), abs=1e-7)
    assert out == engine.risk(engine.load_spec(str(spec)))  # the library returns the same content
    # one sentence in percentages, like the app's; the ceiling is the 95% level too, so no "(below 73.1% in 95% …)"
    assert out["informed_adversary"]["q95"] == pytest.approx(out["informed_adversary"]["max"], abs=1e-12)
    assert done.stdout.strip() == (
        "Laplace noise, scale b = 1; pure 1-DP (sensitivity 1): someone who knew everyone else could move a 50% guess "
        "about one person to at most 73.1%; the best attack on one person's record, wrong 5% of the time when it "
        f"has the other value, detects it {100 * out['power_at_5pct']:.1f}% of the time -> "
        f"{tmp_path / 'out' / 'risk.json'}"), done.stdout


def test_cli_sentence_says_the_95_percent_level_only_where_it_is_not_the_ceiling():
    """Laplace at ε = 1 printed "to at most 73.1% (below 73.1% in 95% of releases)": q95 is the ceiling and half the
    releases reach it, so "below" was wrong and the parenthesis said nothing. The 95% level is now said as "at or
    below", rounded up, and only where it sits under the ceiling as shown, or where there is no ceiling."""
    from engine.cli.risk import summary_line

    def line(q95, top):
        return summary_line({"description": "noise", "power_at_5pct": 0.1,
                             "informed_adversary": {"prior": 0.5, "q95": q95, "max": top}})

    assert line(0.7310585786300049, 0.7310585786300049) == (
        "noise: someone who knew everyone else could move a 50% guess about one person to at most 73.1%; the best "
        "attack on one person's record, wrong 5% of the time when it has the other value, detects it 10.0% "
        "of the time")
    assert "95%" not in line(0.7306, 0.7310585786300049)  # 73.1% rounded up: the ceiling again
    assert "to at most 73.1% (at or below 70.1% in 95% of releases);" in line(0.70001, 0.7310585786300049)
    assert "with no firm ceiling (at or below 89.6% in 95% of releases);" in line(0.8951868875901504, None)
    gauss = engine.risk({"seed": 1, "model": {"name": "beta_binomial", "n": 30, "a": 1, "b": 1},
                         "mechanism": {"name": "gaussian", "rho": 0.5}, "data": {"s_dp": [6.0]}}, realistic=False)
    q95 = gauss["informed_adversary"]["q95"]
    assert f"with no firm ceiling (at or below {math.ceil(1000 * q95) / 10:.1f}% in 95% of releases)" in \
        summary_line(gauss)


def test_cli_sentence_writes_no_share_below_one_as_a_hundred_percent():
    """Audit s22 (a DP expert): Laplace at ε = 10 printed "to at most 100.0% … catches 100.0% of the real ones" for
    e^10/(1 + e^10) = 99.9955% and 1 - e^-10 / (4 · 0.05) = 99.977% (Laplace's trade-off curve at α = 0.05)."""
    from engine.cli.risk import share, summary_line

    out = engine.risk({"seed": 1, "model": {"name": "beta_binomial", "n": 30, "a": 1, "b": 1},
                       "mechanism": {"name": "laplace", "epsilon": 10.0}, "data": {"s_dp": [6.0]}}, realistic=False)
    top, power = math.exp(10.0) / (1.0 + math.exp(10.0)), 1.0 - math.exp(-10.0) / 0.2
    assert out["informed_adversary"]["max"] == pytest.approx(top, rel=1e-12)
    assert out["power_at_5pct"] == pytest.approx(power, abs=1e-6)
    said = summary_line(out)
    assert "100.0%" not in said and "to at most 99.995%" in said and "detects it 99.98% of the time" in said, said
    assert (share(0.731058), share(1.0), share(0.0), share(2e-5)) == ("73.1%", "100.0%", "0.0%", "0.002%")


@pytest.mark.parametrize("text, field", [
    (TOML.replace('epsilon = 1.0', 'epsilon = -1.0'), "mechanism.epsilon"),
    (TOML.replace('name = "laplace"', 'name = "laplace"\nrho = 0.2'), "mechanism.rho"),
    (TOML.replace('name = "beta_binomial"\nn = 30', 'name = "linear_regression"\nn = 30'), "model"),
])
def test_cli_bad_spec_is_one_line_and_exit_2(tmp_path, text, field, cli):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    done = cli("risk", str(spec), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0]
    assert not (tmp_path / "out" / "risk.json").exists()


def test_cli_missing_file_and_missing_out(tmp_path, cli):
    done = cli("risk", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "SPEC" in done.stderr
    done = cli("risk", str(tmp_path / "nope.toml"))
    assert done.returncode == 2 and done.stderr.startswith("error:")


def test_risk_rejects_unsupported_inputs():
    with pytest.raises(ValueError, match="problem_or_spec"):
        engine.risk(42)


@pytest.mark.parametrize("model, s_dp", [(BB, [2.0]), ({"name": "dirichlet_multinomial", "n": 4}, [2.0, 1.0, 1.0])])
def test_narrow_discrete_gaussian_stays_exact_where_probabilities_underflow(model, s_dp):
    """sigma = 0.02: P0(y = 1) = e^-1250 underflows in linear space; computed in log space the curve still
    starts at beta(0) = 1 (no outcome is impossible under either neighbour) and stays above its zCDP bound."""
    r = engine.risk(_spec(model, {"name": "discrete_gaussian", "sigma": 0.02}, s_dp))
    beta, bound = np.asarray(r["tradeoff"]["beta"]), np.asarray(r["bound"]["beta"])
    assert beta[0] == 1.0 and beta[1] < 1e-12 and np.all(beta - bound > -1e-12)
    assert r["informed_adversary"]["max"] is None and r["power_at_5pct"] == pytest.approx(1.0)


# --- the rho-zCDP -> (epsilon, delta) conversion behind the discrete Gaussian's bound -------------------

@pytest.mark.parametrize("rho", [0.02, 0.5, 3.0])
def test_zcdp_delta_is_canonne_kamath_steinke_and_tighter_than_bun_steinke(rho):
    """zcdp_delta claims CKS20 Cor. 13: delta = inf_{a > 1} exp((a - 1)(a rho - eps) + a log(1 - 1/a)) / (a - 1).
    Checked against a brute-force minimum over a fine grid of a, against the Bun & Steinke (2016, Prop. 1.3)
    conversion eps = rho + 2 sqrt(rho ln(1/delta)) (CKS is tighter: its delta at that eps is smaller), and
    against the exact delta(eps) of the Gaussian mechanism with the same rho (the smallest any rho-zCDP
    mechanism can claim, so the conversion may not go below it)."""
    a = 1.0 + np.geomspace(1e-6, 1e4, 400_001)
    mu = math.sqrt(2 * rho)
    for target in (1e-3, 1e-6, 1e-10):
        eps = rho + 2 * math.sqrt(rho * math.log(1 / target))
        log_terms = (a - 1) * (a * rho - eps) + a * np.log1p(-1 / a) - np.log(a - 1)
        brute = math.exp(min(float(log_terms.min()), 0.0))
        got = engine.protection.zcdp_delta(rho, eps)
        assert got == pytest.approx(brute, rel=1e-6)
        assert got <= target * (1 + 1e-12)  # tighter than (or equal to) Bun & Steinke
        gaussian = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        assert gaussian <= got * (1 + 1e-9)
    # negative control: at a smaller rho's epsilon the conversion must give a larger delta than asked
    eps_small = rho / 4 + 2 * math.sqrt(rho / 4 * math.log(1e6))
    assert engine.protection.zcdp_delta(rho, eps_small) > 1e-6


@pytest.mark.parametrize("sigma", [0.5, 2.0, 6.0])
def test_discrete_gaussian_never_falls_below_its_zcdp_curve(sigma):
    """The discrete Gaussian is rho-zCDP with rho = 1/(2 sigma^2) (CKS20 Thm. 4): its exact curve stays above
    the curve the conversion implies; the same check against a quarter of that rho fails (negative control)."""
    model = make_model("beta_binomial", {"n": 5})
    mech = make_mechanism("discrete_gaussian", {"sigma": sigma})
    rho = mech.guarantee["rho"]
    assert rho == pytest.approx(1 / (2 * sigma**2))
    a = np.linspace(0, 1, 2001)
    beta = experiment(model, mech).tradeoff(a)
    assert (beta - zcdp_tradeoff(a, rho)).min() > -1e-12
    assert (beta - zcdp_tradeoff(a, rho / 4)).min() < -1e-3


# --- several Laplace coordinates: the lattice sandwich and its error bound --------------------------------

def _lattice_laplace(eps_list, b=1.0):
    from engine.protection.lattice import continuous_pieces, lattice_product
    from engine.protection.tradeoff import FiniteExperiment
    return lattice_product([lambda h, e=e: continuous_pieces("laplace", b, 0.0, e * b, h) for e in eps_list],
                           FiniteExperiment, loss_bound=sum(eps_list))


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_lattice_sandwich_on_one_coordinate_brackets_the_closed_form(eps):
    """One Laplace coordinate through the several-coordinate code: the pessimistic curve <= the closed form
    <= the reported (optimistic) curve, and the stated max_error bounds the gap."""
    e = _lattice_laplace([eps])
    truth = laplace_tradeoff(A, eps)
    assert (e.lower.tradeoff(A) - truth).max() < 1e-13
    assert (e.tradeoff(A) - truth).min() > -1e-13
    assert (e.tradeoff(A) - truth).max() <= e.max_error and 0 < e.max_error < 1e-6
    assert e.max_loss() == pytest.approx(eps)


def test_lattice_sandwich_of_two_coordinates_degenerates_to_one():
    """A second coordinate with a negligible shift changes nothing: (eps, 1e-9) gives the one-coordinate closed
    form; and splitting eps over two coordinates gives a curve between that of eps and of eps/2 alone."""
    e = _lattice_laplace([1.0, 1e-9])
    assert np.abs(e.tradeoff(A) - laplace_tradeoff(A, 1.0)).max() <= e.max_error + 1e-9
    split = _lattice_laplace([0.5, 0.5]).tradeoff(A)
    assert np.all(split >= laplace_tradeoff(A, 1.0) - 1e-9) and np.all(split <= laplace_tradeoff(A, 0.5) + 1e-9)
    assert (split - laplace_tradeoff(A, 1.0)).max() > 1e-3  # a different curve: spreading the shift protects more


def _vector_attack(mech, d, threshold, rng, draws):
    """(type I, type II) of the likelihood-ratio test at one threshold, releases drawn by the mechanism."""
    y0 = mech.sample(rng, np.zeros((draws, d.size)))
    y1 = mech.sample(rng, np.tile(d, (draws, 1)))

    def loss(y):
        return np.sum(mech.noise_log_prob(y - d) - mech.noise_log_prob(y), axis=1)

    return float(np.mean(loss(y0) > threshold)), float(np.mean(loss(y1) <= threshold))


def test_linear_regression_laplace_curve_matches_an_attack_on_the_sampler_and_a_wrong_scale_fails():
    """The nine-entry Laplace release of linear_regression: the likelihood-ratio attack on releases drawn by
    the mechanism lands on the reported curve within 4 standard errors (plus max_error); the curve of a
    noise scale 1.3 times too large misses (negative control)."""
    spec = _spec({"name": "linear_regression", "n": 20}, {"name": "laplace", "epsilon": 1.0}, [0.0] * 9)
    problem = engine.prepare(spec)
    model, mech = problem.model, problem.mechanism
    pair = neighbours(model, mech)
    d = np.asarray(pair.shift)
    curve = experiment(model, mech, pair)
    wrong = experiment(model, make_mechanism("laplace", {"scale": mech.scale * 1.3}), pair)
    assert curve.max_error < 1e-6
    rng = np.random.default_rng(77)
    draws = 200_000
    for c in (-0.2, 0.3):
        a_hat, b_hat = _vector_attack(mech, d, c, rng, draws)
        slope = abs(float(curve.tradeoff(min(a_hat + 1e-3, 1))) - float(curve.tradeoff(max(a_hat - 1e-3, 0)))) / 2e-3
        tol = 4 * math.sqrt(b_hat * (1 - b_hat) / draws + slope**2 * a_hat * (1 - a_hat) / draws) + curve.max_error
        assert abs(b_hat - float(curve.tradeoff(a_hat))) < tol
        assert abs(b_hat - float(wrong.tradeoff(a_hat))) > tol


# --- every model ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 3])
def test_linear_regression_neighbours_reach_the_exact_l1_sensitivity(p):
    model = make_model("linear_regression", {"n": 20, "p": p, "x_mean": [0.0] * p, "x_cov": np.eye(p).tolist(),
                                             "lo": -2.0, "hi": 3.0})
    mech = make_mechanism("laplace", {"epsilon": 1.0}, default_sensitivity=model.default_sensitivity())
    pair = neighbours(model, mech)
    d = np.asarray(pair.shift)
    assert d.size == model.stat_dim
    assert np.abs(d).sum() == pytest.approx((p + 1) * (p + 3) ** 2 / (2 * (p + 2)), rel=1e-12)
    t = model.record_statistics(np.array([pair.x0, pair.x1]))
    np.testing.assert_allclose(t[1] - t[0], d, atol=1e-12)
    r = privacy_side(model, mech)
    # the release is calibrated to the paper's Delta = p^2 + 3p + 3; the data reach only the exact sensitivity
    true_eps = np.abs(d).sum() / mech.scale
    assert r["informed_adversary"]["max"] == pytest.approx(special.expit(true_eps), abs=1e-12)
    assert r["epsilon"] == pytest.approx(1.0) and r["tradeoff"]["max_error"] < 1e-6
    assert min(np.asarray(r["tradeoff"]["beta"]) - np.asarray(r["bound"]["beta"])) > -1e-12


def test_linear_regression_gaussian_is_mu_gdp_at_the_largest_l2_pair():
    model = make_model("linear_regression", {"n": 20})
    mech = make_mechanism("gaussian", {"rho": 0.5}, default_sensitivity=model.default_sensitivity(l2=True))
    pair = neighbours(model, mech)
    norm = float(np.linalg.norm(pair.shift))
    assert norm == pytest.approx(4.0, abs=1e-12)  # 2 sqrt(floor((p+2)/2) ceil((p+2)/2)) at p = 2
    assert norm <= mech.sensitivity
    r = privacy_side(model, mech)
    np.testing.assert_allclose(r["tradeoff"]["beta"], gdp_tradeoff(np.asarray(r["tradeoff"]["alpha"]), norm / mech.scale),
                               atol=1e-14)
    # no random pair of records in the clamp box moves the statistic further in L2 than the vertex pair
    rng = np.random.default_rng(4)
    lo, hi = np.asarray(model.lo), np.asarray(model.hi)
    recs = lo + rng.random((2, 20_000, 3)) * (hi - lo)
    recs[:, :, :] = np.where(rng.random((2, 20_000, 3)) < 0.4, np.where(rng.random((2, 20_000, 3)) < 0.5, lo, hi), recs)
    gaps = np.linalg.norm(model.record_statistics(recs[0]) - model.record_statistics(recs[1]), axis=1)
    assert gaps.max() <= norm + 1e-12


def test_naive_bayes_loglinear_curves():
    """K = 2 tables: the record's class changes, so four cells move by one each. Discrete Laplace with
    Delta_1 = 2K at eps: four binary channels with loss +-eps/4, the curve is the product's hull (vertices by
    the number of coordinates on the high side); Gaussian: mu = sqrt(2K) / sigma exactly."""
    model = make_model("naive_bayes_loglinear", {"n": 20})
    eps = 1.0
    mech = make_mechanism("discrete_laplace", {"epsilon": eps}, default_sensitivity=model.default_sensitivity())
    pair = neighbours(model, mech)
    assert np.abs(pair.shift).sum() == 4 and sorted(set(pair.shift)) == [-1.0, 0.0, 1.0]
    lam = 1 / mech.scale
    p_hi = math.exp(-lam) / (1 + math.exp(-lam))  # P0(the coordinate lands on the side of x1)
    counts = np.arange(4, -1, -1)  # reject first where every coordinate points to x1
    p0 = stats.binom.pmf(counts, 4, p_hi)
    p1 = stats.binom.pmf(counts, 4, 1 - p_hi)
    expected = np.interp(A, np.concatenate([[0], np.cumsum(p0)]), np.concatenate([[1], 1 - np.cumsum(p1)]))
    np.testing.assert_allclose(experiment(model, mech, pair).tradeoff(A), expected, atol=1e-13)
    r = privacy_side(model, mech)
    assert r["informed_adversary"]["max"] == pytest.approx(special.expit(eps), abs=1e-12)
    lap = privacy_side(model, make_mechanism("laplace", {"epsilon": eps}, default_sensitivity=4.0))
    assert lap["informed_adversary"]["max"] == pytest.approx(special.expit(eps), abs=1e-12)
    assert lap["tradeoff"]["max_error"] < 1e-6
    gauss = make_mechanism("gaussian", {"sigma": 2.0}, default_sensitivity=model.default_sensitivity(l2=True))
    np.testing.assert_allclose(privacy_side(model, gauss)["tradeoff"]["beta"], gdp_tradeoff(alpha_grid(), 1.0), atol=1e-14)


def _custom(dim):
    return engine.CustomModel(
        n=8, param_names=("theta",),
        latent_sampler=lambda rng, th, size: (rng.random(size) < th[0]).astype(np.int64),
        posterior_sampler=lambda rng, x, th: np.array([rng.beta(1 + x.sum(), 1 + x.size - x.sum())]),
        record_statistic=lambda x: np.repeat(np.asarray(x, float).reshape(-1, 1), dim, axis=1),
        init_theta=(0.5,))


def test_custom_models_use_the_mechanisms_sensitivity_or_say_why_not():
    gauss = engine.Problem(model=_custom(2), mechanism=make_mechanism("gaussian", {"sigma": 1.5}, default_sensitivity=2.0),
                           s_dp=np.array([3.0, 3.0]))
    r = engine.risk(gauss)
    np.testing.assert_allclose(r["tradeoff"]["beta"], gdp_tradeoff(alpha_grid(), 2.0 / 1.5), atol=1e-14)
    assert "cannot give its extreme records" in r["neighbours"]["note"]
    assert r["realistic_adversary"]["available"] is False
    one = engine.Problem(model=_custom(1), mechanism=make_mechanism("laplace", {"epsilon": 0.8}), s_dp=np.array([3.0]))
    assert engine.risk(one)["informed_adversary"]["max"] == pytest.approx(special.expit(0.8), abs=1e-12)
    two = engine.Problem(model=_custom(2), mechanism=make_mechanism("laplace", {"epsilon": 0.8}), s_dp=np.array([3.0, 3.0]))
    with pytest.raises(ValueError, match="cannot give its two extreme records"):
        engine.risk(two)
    none = engine.Problem(model=_custom(1), mechanism=None, s_dp=np.array([3.0]))
    with pytest.raises(ValueError, match="mechanism"):
        engine.risk(none)


# --- an unknown n: add/remove-one neighbours, the joint release (s_dp, n_dp) ------------------------------

def _unknown(model, mechanism, n_mechanism):
    return {"seed": 3, "model": {**model, "n_prior": {"name": "poisson", "mean": 40}}, "mechanism": mechanism,
            "n_mechanism": n_mechanism, "data": {"s_dp": [10.0], "n_dp": 41.0}}


def test_unknown_n_gaussian_pair_composes_exactly():
    r = engine.risk(_unknown({"name": "normal_known_sd", "lo": -1.0, "hi": 2.0}, {"name": "gaussian", "sigma": 3.0},
                             {"name": "gaussian", "sigma": 0.8}))
    mu = math.hypot(2.0 / 3.0, 1 / 0.8)  # the record moves the sum by max(|lo|, |hi|) = 2 and n by 1
    assert r["neighbours"]["size_shift"] == 1 and r["neighbours"]["shift"] == [2.0]
    np.testing.assert_allclose(r["tradeoff"]["beta"], gdp_tradeoff(alpha_grid(), mu), atol=1e-14)
    assert r["bound"]["kind"] == "gdp" and r["bound"]["mu"] == pytest.approx(mu)


def test_unknown_n_laplace_pair_is_the_product_and_composes_the_epsilons():
    """Laplace on s (eps_s = 1) and on n (eps_n = 0.5): the joint release's curve is the two-coordinate product
    (sandwiched, with its error), above the (eps_s + eps_n)-DP curve and below each coordinate's own curve;
    the informed adversary's ceiling is expit(1.5)."""
    r = engine.risk(_unknown({"name": "beta_binomial"}, {"name": "laplace", "epsilon": 1.0}, {"name": "laplace", "epsilon": 0.5}))
    alpha, beta = np.asarray(r["tradeoff"]["alpha"]), np.asarray(r["tradeoff"]["beta"])
    assert r["epsilon"] == pytest.approx(1.5) and r["informed_adversary"]["max"] == pytest.approx(special.expit(1.5))
    assert (beta - epsilon_dp_tradeoff(alpha, 1.5)).min() > -1e-12
    assert np.all(beta <= laplace_tradeoff(alpha, 1.0) + 1e-12) and (laplace_tradeoff(alpha, 1.0) - beta).max() > 0.01
    product = _lattice_laplace([1.0, 0.5])
    np.testing.assert_allclose(beta, product.tradeoff(alpha), atol=1e-12)
    mixed = engine.risk(_unknown({"name": "poisson_gamma", "upper": 3}, {"name": "discrete_gaussian", "rho": 0.5},
                                 {"name": "laplace", "epsilon": 0.5}))
    assert mixed["bound"]["kind"] == "zcdp" and mixed["bound"]["rho"] == pytest.approx(0.5 + 0.125)
    assert min(np.asarray(mixed["tradeoff"]["beta"]) - np.asarray(mixed["bound"]["beta"])) > -1e-12


def test_a_histogram_with_a_private_total_moves_one_cell():
    """A histogram whose total is private and not released (paper 002 App. B, what import-dpwizard writes):
    add/remove-one neighbours move one cell by one and nothing else, so discrete Laplace t = 2 is 0.5-DP and
    the ceiling is expit(0.5) (replace-one neighbours would move two cells: expit(1))."""
    spec = {"seed": 1, "model": {"name": "dirichlet_multinomial", "alpha": [1.0, 1.0, 1.0],
                                 "n_prior": {"name": "negative_binomial", "mean": 100.0, "dispersion": 3.0}},
            "mechanism": {"name": "discrete_laplace", "scale": 2.0, "sensitivity": 1.0},
            "data": {"s_dp": [30.0, 41.0, 25.0]}}
    r = engine.risk(spec)
    assert r["neighbours"]["shift"] == [1.0, 0.0, 0.0] and "size_shift" not in r["neighbours"]
    assert r["epsilon"] == pytest.approx(0.5) and r["informed_adversary"]["max"] == pytest.approx(special.expit(0.5))
    known = engine.risk({**spec, "model": {"name": "dirichlet_multinomial", "n": 96, "alpha": [1.0, 1.0, 1.0]}})
    assert known["neighbours"]["shift"] == [-1.0, 1.0, 0.0]  # the negative control: replace-one moves two cells
    assert known["informed_adversary"]["max"] == pytest.approx(special.expit(1.0))


# --- clipped releases and a bounded domain ---------------------------------------------------------------

def _threshold_curve(log_cdf0, log_cdf1, lo, hi, points=200_001):
    """Independent exact curve of a release whose likelihood ratio increases with y on [lo, hi] (atoms at the
    ends allowed): the tests 'say x1 when y > t' for t across (lo, hi), plus the randomised tests on the atoms,
    i.e. the lower convex hull of (P0(y > t), P1(y <= t)) with the end points."""
    t = np.linspace(lo, hi, points)  # at t = hi: reject exactly the upper atom (y >= hi)
    a = -np.expm1(log_cdf0(t))
    b = np.exp(log_cdf1(t))
    a = np.concatenate([[0.0], a[::-1], [1.0]])
    b = np.concatenate([[1.0], b[::-1], [0.0]])
    return a, b


def test_clipped_laplace_is_exact_and_above_the_unclipped_curve():
    """beta_binomial with n = 1 (the pair is s = 0 against s = 1) and a clip [0.3, 0.7] inside the pair: the
    clip is post-processing, so the curve lies on or above the unclipped Laplace curve, strictly above in the
    middle; it equals the threshold curve computed from the clipped law's cdf (atoms of mass F(0.3 - s) and
    1 - F(0.7 - s))."""
    r = engine.risk(_spec({"name": "beta_binomial", "n": 1}, {"name": "laplace", "epsilon": 1.0, "clip": [0.3, 0.7]}, [0.3]))
    alpha, beta = np.asarray(r["tradeoff"]["alpha"]), np.asarray(r["tradeoff"]["beta"])
    err = r["tradeoff"]["max_error"]
    assert 0 < err < 1e-6 and r["neighbours"]["s0"] == [0.0]
    assert (beta - laplace_tradeoff(alpha, 1.0)).min() > -1e-12 and (beta - laplace_tradeoff(alpha, 1.0)).max() > 0.02
    lap = stats.laplace(scale=1.0)
    a, b = _threshold_curve(lambda t: lap.logcdf(t), lambda t: lap.logcdf(t - 1.0), 0.3, 0.7)
    np.testing.assert_allclose(beta, np.interp(alpha, a, b), atol=err + 1e-9)
    # the largest loss sits on the atoms, which hold every release beyond the bound: log F(0.3) / F(-0.7)
    atom = math.log(lap.cdf(0.3) / lap.cdf(-0.7))
    assert atom < 1.0 and r["informed_adversary"]["max"] == pytest.approx(special.expit(atom), abs=1e-12)


def test_clipped_gaussian_and_truncated_geometric_are_exact():
    r = engine.risk(_spec({"name": "beta_binomial", "n": 1}, {"name": "gaussian", "sigma": 0.5, "clip": [0.2, 0.9]}, [0.2]))
    alpha, beta = np.asarray(r["tradeoff"]["alpha"]), np.asarray(r["tradeoff"]["beta"])
    nrm = stats.norm(scale=0.5)
    a, b = _threshold_curve(lambda t: nrm.logcdf(t), lambda t: nrm.logcdf(t - 1.0), 0.2, 0.9)
    np.testing.assert_allclose(beta, np.interp(alpha, a, b), atol=r["tradeoff"]["max_error"] + 1e-8)
    assert (beta - gdp_tradeoff(alpha, 2.0)).min() > -1e-12 and (beta - gdp_tradeoff(alpha, 2.0)).max() > 0.02
    # diffprivlib's GeometricTruncated on [0, 2], n = 2: the pair sits at s = 0 or 1; brute-force pmf sums
    spec = {"seed": 1, "model": {"name": "beta_binomial", "n": 2},
            "release": {"library": "diffprivlib", "mechanism": "GeometricTruncated", "epsilon": 1.2, "lower": 0, "upper": 2},
            "data": {"s_dp": [1.0]}}
    r = engine.risk(spec)
    s0 = r["neighbours"]["s0"][0]
    k = np.arange(-400, 401)
    pmf = np.exp(-np.abs(k) * 1.2) * math.tanh(0.6)

    def law(s):
        y = np.clip(s + k, 0, 2)
        return np.array([pmf[y == v].sum() for v in (0, 1, 2)])

    p0, p1 = law(s0), law(s0 + 1)
    order = np.argsort(-(p1 / p0))
    expected = np.interp(alpha, np.concatenate([[0], np.cumsum(p0[order])]), np.concatenate([[1], 1 - np.cumsum(p1[order])]))
    np.testing.assert_allclose(r["tradeoff"]["beta"], expected, atol=1e-12)
    assert r["tradeoff"]["max_error"] == 0


LIBRARY_RELEASES = [
    {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 2.0},
    {"library": "opendp", "mechanism": "laplace", "domain": "float", "scale": 2.0},
    {"library": "opendp", "mechanism": "laplace", "domain": "float", "scale": 2.0, "k": -2},
    {"library": "opendp", "mechanism": "gaussian", "domain": "int", "scale": 2.0},
    {"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 2.0},
    {"library": "opendp", "mechanism": "gaussian", "domain": "float", "scale": 2.0, "k": -1},
    {"library": "opendp", "mechanism": "laplace", "domain": "int", "scale": 2.0, "clip": [0, "inf"]},
    {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0, "sensitivity": 1},
    {"library": "diffprivlib", "mechanism": "Laplace", "epsilon": 1.0, "delta": 0.01, "sensitivity": 1},
    {"library": "diffprivlib", "mechanism": "LaplaceTruncated", "epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 4},
    {"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain", "epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 4},
    {"library": "diffprivlib", "mechanism": "Geometric", "epsilon": 1.0},
    {"library": "diffprivlib", "mechanism": "GeometricTruncated", "epsilon": 1.0, "lower": 0, "upper": 4},
    {"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 1.0, "delta": 1e-5, "sensitivity": 1},
    {"library": "diffprivlib", "mechanism": "GaussianAnalytic", "epsilon": 1.0, "delta": 1e-5, "sensitivity": 1},
    {"library": "diffprivlib", "mechanism": "GaussianDiscrete", "epsilon": 1.0, "delta": 1e-5},
    {"library": "diffprivlib", "mechanism": "Binary", "epsilon": 1.0},
]


@pytest.mark.parametrize("table", LIBRARY_RELEASES, ids=lambda t: f"{t['library']}-{t['mechanism']}-{len(t)}")
def test_every_library_release_gets_its_curve_above_its_guarantee(table):
    r = engine.risk({"seed": 3, "model": {"name": "beta_binomial", "n": 4}, "release": table, "data": {"s_dp": [2.0]}})
    alpha, beta, bound = (np.asarray(x) for x in (r["tradeoff"]["alpha"], r["tradeoff"]["beta"], r["bound"]["beta"]))
    assert alpha.size >= 101 and alpha[0] == 0 and alpha[-1] == 1
    assert np.all(np.diff(beta) <= 1e-12) and beta[0] <= 1 and beta[-1] == 0
    assert (beta - bound).min() > -1e-12
    pure = r["guarantee"]["kind"] == "pure"
    assert (r["epsilon"] is not None) == pure
    if pure:
        assert r["informed_adversary"]["max"] <= special.expit(r["epsilon"]) + 1e-12


def test_bounded_domain_curve_is_the_renormalised_threshold_curve():
    """diffprivlib's LaplaceBoundedDomain on [0, 4]: the density f(y - s) / Z(s) on [0, 4] has a likelihood
    ratio increasing in y, so thresholds are optimal; the reported curve is the pointwise lowest of the threshold
    curves of the renormalised cdfs over every placement s0 = 0..3 of the pair (the informed adversary faces
    whichever placement the others' data make; before, one placement picked by its mean beta was reported)."""
    table = {"library": "diffprivlib", "mechanism": "LaplaceBoundedDomain", "epsilon": 1.0, "sensitivity": 1,
             "lower": 0, "upper": 4}
    problem = engine.prepare({"seed": 3, "model": {"name": "beta_binomial", "n": 4}, "release": table, "data": {"s_dp": [2.0]}})
    r = engine.risk(problem)
    b = problem.mechanism.scale
    lap = stats.laplace(scale=b)

    def log_cdf(s):
        z = lap.cdf(4 - s) - lap.cdf(-s)
        return lambda t: np.log((lap.cdf(t - s) - lap.cdf(-s)) / z)

    alpha = np.asarray(r["tradeoff"]["alpha"])
    curves = []
    for s0 in range(4):
        with np.errstate(divide="ignore"):  # at t = 0 the cdf is 0: log 0 = -inf, exp gives 0 back
            a, bb = _threshold_curve(log_cdf(s0), log_cdf(s0 + 1), 0.0, 4.0)
        curves.append(np.interp(alpha, a, bb))
    np.testing.assert_allclose(r["tradeoff"]["beta"], np.min(curves, axis=0), atol=r["tradeoff"]["max_error"] + 1e-8)


def test_wide_gaussian_noise_gets_its_curve_not_a_memory_error():
    """diffprivlib's Gaussian at epsilon = 0.1, delta = 1e-6 (sigma = 53) went through the loss lattice (its noise
    class is a subclass of Gaussian, not Gaussian) and a clipped Gaussian at sigma = 40 collapsed the lattice's
    loss range onto one level: both asked numpy for petabytes. The library's Gaussian now takes the Gaussian's
    closed form (its noise is the same law), and the clipped one's lattice is cut finely enough to see its range."""
    table = {"library": "diffprivlib", "mechanism": "Gaussian", "epsilon": 0.1, "delta": 1e-6, "sensitivity": 1}
    problem = engine.prepare({"seed": 3, "model": BB, "release": table, "data": {"s_dp": [2.0]}})
    r = engine.risk(problem, realistic=False)
    mu = 1.0 / problem.mechanism.scale
    assert problem.mechanism.scale > 50 and r["tradeoff"]["max_error"] == 0
    np.testing.assert_allclose(r["tradeoff"]["beta"], gdp_tradeoff(alpha_grid(), mu), atol=1e-14)
    wide = {"name": "gaussian", "sigma": 40.0, "clip": [0, 20]}
    clipped = engine.risk(_spec({"name": "beta_binomial", "n": 20}, wide, [6.0]), realistic=False)
    beta = np.asarray(clipped["tradeoff"]["beta"])
    assert clipped["tradeoff"]["max_error"] < 1e-5
    assert (beta - gdp_tradeoff(alpha_grid(), 1 / 40)).min() > -1e-12  # a clip is post-processing: never below
    assert 0.05 < clipped["power_at_5pct"] < 0.06  # mu = 1/40: barely better than a coin's 5%
