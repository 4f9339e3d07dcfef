"""The compiled record sweeps of DA-MCMC (Ju et al. 2022, Alg. 1) and the acceptance bound (Prop. 3.1).

Tier (a): each numba kernel is run next to a plain-Python transcription of Algorithm 1 written here
from the paper, both consuming the *same* ``numpy.random.Generator`` stream (numba draws from the
Generator's bit generator with numpy's own algorithms, so equal seeds give equal streams). The
two must produce identical trajectories, states and sampler statistics, and the reference counts
the Metropolis accept and reject decisions so each test proves both paths ran. Further cases force
the outcome (acceptance tables of zeros or ones, a parameter pinned at 0, a clamp that hides every
move) so that the expected result is known without any randomness.

Prop. 3.1 (tier b, but deterministic given the seed): for a pure epsilon-DP mechanism whose
sensitivity covers the model's, every Metropolis ratio is at least exp(-epsilon), hence so is the
recorded per-sweep mean ``acceptance_rate``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.kernels import da_mcmc as kernels
from engine.methods.da_mcmc import _Runner, da_mcmc

ABS, SQUARE = 0, 1


def _log_noise(kernel, scale, r):
    return -abs(r) / scale if kernel == ABS else -0.5 * (r / scale) ** 2


def _outputs(n_iter, dim=1):
    return np.zeros((n_iter, dim)), np.zeros(n_iter), np.zeros(n_iter)


class Counter:
    """Accept / reject decisions of the Metropolis step (moves with alpha < 1 only)."""

    def __init__(self):
        self.accepted = 0
        self.rejected = 0

    def decide(self, rng, al):
        if al >= 1.0:
            return True
        if rng.random() < al:
            self.accepted += 1
            return True
        self.rejected += 1
        return False


# --------------------------------------------------------------------------- Python references
def ref_bernoulli(rng, x, s, a, b, mode, acc_up, acc_down, z, rr_acc, n_iter, out_theta, out_acc, out_frac, cnt):
    n = x.size
    for t in range(n_iter):
        theta = rng.beta(a + s, b + n - s)
        out_theta[t, 0] = theta
        asum, nacc = 0.0, 0
        for i in range(n):
            prop = 1 if rng.random() < theta else 0
            if prop == x[i]:
                asum, nacc = asum + 1.0, nacc + 1
                continue
            if mode == 0:
                al = acc_up[s] if prop == 1 else acc_down[s]
            else:
                al = rr_acc[z[i], prop]
            asum += al
            if cnt.decide(rng, al):
                x[i] = prop
                s += 1 if prop == 1 else -1
                nacc += 1
        out_acc[t], out_frac[t] = asum / n, nacc / n
    return s


def ref_categorical(rng, x, counts, alpha, mode, s_dp, kernel, scale, z, log_q, n_iter, out_theta, out_acc,
                    out_frac, cnt):
    n, k = x.size, alpha.size
    for t in range(n_iter):
        g = np.array([rng.gamma(alpha[j] + counts[j], 1.0) for j in range(k)])
        p = g / g.sum()
        out_theta[t] = p
        cdf = np.cumsum(p)
        asum, nacc = 0.0, 0
        for i in range(n):
            u = rng.random() * cdf[-1]
            prop = 0
            while prop < k - 1 and u >= cdf[prop]:
                prop += 1
            xi = x[i]
            if prop == xi:
                asum, nacc = asum + 1.0, nacc + 1
                continue
            if mode == 0:
                # log eta(s_dp | counts with one record moved from cell xi to cell prop) - log eta(s_dp | counts),
                # summed in the kernel's order: a ratio that is 1 up to rounding must round the same
                # way, since alpha = 1 skips the uniform draw
                lr = (_log_noise(kernel, scale, s_dp[prop] - counts[prop] - 1.0)
                      - _log_noise(kernel, scale, s_dp[prop] - counts[prop])
                      + _log_noise(kernel, scale, s_dp[xi] - counts[xi] + 1.0)
                      - _log_noise(kernel, scale, s_dp[xi] - counts[xi]))
            else:
                lr = log_q[prop, z[i]] - log_q[xi, z[i]]
            al = 1.0 if lr >= 0 else math.exp(lr)
            asum += al
            if cnt.decide(rng, al):
                x[i] = prop
                counts[prop] += 1
                counts[xi] -= 1
                nacc += 1
        out_acc[t], out_frac[t] = asum / n, nacc / n


def ref_poisson(rng, x, s, sum_x, alpha, beta, upper, s_dp, kernel, scale, n_iter, out_theta, out_acc, out_frac,
                cnt):
    n = x.size

    def t_of(v):
        return v if upper < 0 else min(v, upper)

    for t in range(n_iter):
        lam = rng.gamma(alpha + sum_x, 1.0 / (beta + n))
        out_theta[t, 0] = lam
        asum, nacc = 0.0, 0
        for i in range(n):
            prop = rng.poisson(lam)
            if prop == x[i]:
                asum, nacc = asum + 1.0, nacc + 1
                continue
            s_new = s - t_of(x[i]) + t_of(prop)
            lr = _log_noise(kernel, scale, s_dp - s_new) - _log_noise(kernel, scale, s_dp - s)
            al = 1.0 if lr >= 0 else math.exp(lr)
            asum += al
            if cnt.decide(rng, al):
                sum_x += prop - x[i]
                x[i], s = prop, s_new
                nacc += 1
        out_acc[t], out_frac[t] = asum / n, nacc / n
    return s, sum_x


def ref_normal(rng, x, sd, lo, hi, prior_mean, prior_sd, s_dp, kernel, scale, noise_sd, shifts, n_iter, out_theta,
               out_acc, out_frac, cnt):
    """Floating-point sums are accumulated in the kernel's order (records left to right; the running
    log-likelihood carried over from the accepted move) so that the trajectories agree bit for bit. With
    ``shifts``, after mu's draw three translation moves (mu, x) -> (mu + d, x + d), d ~ N(0, step^2), accepted
    with the ratio of mu's prior times that of the noise at the shifted statistic."""
    n = x.size
    prec = 1 / prior_sd**2 + n / sd**2
    near = min(2.4 * noise_sd / n, prior_sd)
    for t in range(n_iter):
        s = sum_x = 0.0
        for v in x:
            s += min(max(v, lo), hi)
            sum_x += v
        mu = rng.normal((prior_mean / prior_sd**2 + sum_x / sd**2) / prec, 1 / math.sqrt(prec))
        for step in (near, math.sqrt(near * prior_sd), prior_sd) if shifts else ():
            d = rng.normal(0.0, step)
            s2 = 0.0
            for v in x:
                s2 += min(max(v + d, lo), hi)
            z0, z1 = (mu - prior_mean) / prior_sd, (mu + d - prior_mean) / prior_sd
            lr = 0.5 * (z0 * z0 - z1 * z1) + _log_noise(kernel, scale, s_dp - s2) - _log_noise(kernel, scale, s_dp - s)
            if cnt.decide(rng, 1.0 if lr >= 0 else math.exp(lr)):
                x += d
                mu, s = mu + d, s2
        out_theta[t, 0] = mu
        asum, nacc = 0.0, 0
        cur = _log_noise(kernel, scale, s_dp - s)
        for i in range(n):
            prop = rng.normal(mu, sd)
            ti, tp = min(max(x[i], lo), hi), min(max(prop, lo), hi)
            if tp == ti:  # the statistic does not change: alpha = 1
                al, new = 1.0, cur
            else:
                new = _log_noise(kernel, scale, s_dp - (s - ti + tp))
                al = 1.0 if new - cur >= 0 else math.exp(new - cur)
            asum += al
            if cnt.decide(rng, al):
                x[i] = prop
                s += tp - ti
                cur = new
                nacc += 1
        out_acc[t], out_frac[t] = asum / n, nacc / n


def _same_stream(seed):
    return np.random.default_rng(seed), np.random.default_rng(seed)


def _assert_same_after(rng_a, rng_b):
    """Both consumed exactly the same number of draws."""
    assert rng_a.random() == rng_b.random()


# --------------------------------------------------------------------------- compiled == reference
@pytest.mark.parametrize("mode", [0, 1])
def test_bernoulli_chain_matches_reference(mode):
    n, n_iter = 25, 60
    rng_c, rng_p = _same_stream(10 + mode)
    x0 = (np.arange(n) % 3 == 0).astype(np.int8)
    s0 = int(x0.sum())
    up = np.linspace(0.9, 0.05, n + 1)  # made-up tables strictly inside (0, 1): both paths happen
    down = np.linspace(0.1, 0.8, n + 1)
    z = (np.arange(n) % 2).astype(np.int64)
    rr_acc = np.array([[1.0, 0.3], [0.4, 1.0]])
    xc, xp = x0.copy(), x0.copy()
    oc, op = _outputs(n_iter), _outputs(n_iter)
    cnt = Counter()
    s_c = kernels.bernoulli_chain(rng_c, xc, s0, 1.5, 2.0, mode, up, down, z, rr_acc, n_iter, *oc)
    s_p = ref_bernoulli(rng_p, xp, s0, 1.5, 2.0, mode, up, down, z, rr_acc, n_iter, *op, cnt)
    assert s_c == s_p == int(xc.sum())
    np.testing.assert_array_equal(xc, xp)
    for a, b in zip(oc, op):
        np.testing.assert_array_equal(a, b)
    _assert_same_after(rng_c, rng_p)
    assert cnt.accepted > 0 and cnt.rejected > 0, (cnt.accepted, cnt.rejected)


@pytest.mark.parametrize("mode, kernel", [(0, ABS), (0, SQUARE), (1, ABS)])
def test_categorical_chain_matches_reference(mode, kernel):
    n, k, n_iter = 20, 3, 50
    rng_c, rng_p = _same_stream(20 + 2 * mode + kernel)
    x0 = (np.arange(n) % k).astype(np.int64)
    counts0 = np.bincount(x0, minlength=k).astype(float)
    alpha = np.array([1.0, 2.0, 0.5])
    s_dp = np.array([2.4, 12.1, 5.5])
    z = np.array([0] * 8 + [1] * 7 + [2] * 5, dtype=np.int64)
    log_q = np.log(np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.25, 0.25, 0.5]]))
    xc, xp, cc, cp = x0.copy(), x0.copy(), counts0.copy(), counts0.copy()
    oc, op = _outputs(n_iter, k), _outputs(n_iter, k)
    cnt = Counter()
    kernels.categorical_chain(rng_c, xc, cc, alpha, mode, s_dp, kernel, 1.5, z, log_q, n_iter, *oc)
    ref_categorical(rng_p, xp, cp, alpha, mode, s_dp, kernel, 1.5, z, log_q, n_iter, *op, cnt)
    np.testing.assert_array_equal(xc, xp)
    np.testing.assert_array_equal(cc, cp)
    np.testing.assert_array_equal(cc, np.bincount(xc, minlength=k))
    for a, b in zip(oc, op):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)
    _assert_same_after(rng_c, rng_p)
    assert cnt.accepted > 0 and cnt.rejected > 0, (cnt.accepted, cnt.rejected)


@pytest.mark.parametrize("upper, kernel", [(-1, ABS), (-1, SQUARE), (2, ABS)])
def test_poisson_chain_matches_reference(upper, kernel):
    n, n_iter = 15, 60
    rng_c, rng_p = _same_stream(30 + upper + kernel)
    x0 = (np.arange(n) % 4).astype(np.int64)
    t0 = x0 if upper < 0 else np.minimum(x0, upper)
    s0, sx0 = int(t0.sum()), int(x0.sum())
    xc, xp = x0.copy(), x0.copy()
    oc, op = _outputs(n_iter), _outputs(n_iter)
    cnt = Counter()
    s_c, sx_c = kernels.poisson_chain(rng_c, xc, s0, sx0, 2.0, 1.0, upper, 9.3, kernel, 1.2, n_iter, *oc)
    s_p, sx_p = ref_poisson(rng_p, xp, s0, sx0, 2.0, 1.0, upper, 9.3, kernel, 1.2, n_iter, *op, cnt)
    assert (s_c, sx_c) == (s_p, sx_p)
    np.testing.assert_array_equal(xc, xp)
    assert sx_c == xc.sum() and s_c == (xc if upper < 0 else np.minimum(xc, upper)).sum()
    for a, b in zip(oc, op):
        np.testing.assert_array_equal(a, b)
    _assert_same_after(rng_c, rng_p)
    assert cnt.accepted > 0 and cnt.rejected > 0, (cnt.accepted, cnt.rejected)


@pytest.mark.parametrize("kernel", [ABS, SQUARE])
@pytest.mark.parametrize("shifts", [False, True])
def test_normal_chain_matches_reference(kernel, shifts):
    n, n_iter = 12, 60
    rng_c, rng_p = _same_stream(40 + kernel)
    x0 = np.linspace(-2.5, 2.5, n)
    lo, hi = -1.0, 2.0
    xc, xp = x0.copy(), x0.copy()
    oc, op = _outputs(n_iter), _outputs(n_iter)
    cnt = Counter()
    s_c, sx_c = kernels.normal_chain(rng_c, xc, 0.0, 0.0, 1.3, lo, hi, 0.5, 2.0, 4.2, kernel, 1.1, 1.6, shifts, n_iter,
                                     *oc)
    ref_normal(rng_p, xp, 1.3, lo, hi, 0.5, 2.0, 4.2, kernel, 1.1, 1.6, shifts, n_iter, *op, cnt)
    np.testing.assert_allclose(xc, xp, rtol=0, atol=0)
    assert s_c == pytest.approx(np.clip(xc, lo, hi).sum(), abs=1e-9)
    assert sx_c == pytest.approx(xc.sum(), abs=1e-9)
    np.testing.assert_allclose(oc[0], op[0], rtol=1e-12)
    np.testing.assert_allclose(oc[1], op[1], rtol=1e-12)
    np.testing.assert_array_equal(oc[2], op[2])
    _assert_same_after(rng_c, rng_p)
    assert cnt.accepted > 0 and cnt.rejected > 0, (cnt.accepted, cnt.rejected)


def test_log_noise_kernels():
    assert kernels.log_noise(ABS, 2.0, -3.0) == pytest.approx(-1.5)
    assert kernels.log_noise(ABS, 2.0, 3.0) == pytest.approx(-1.5)
    assert kernels.log_noise(SQUARE, 2.0, 3.0) == pytest.approx(-9 / 8)
    assert kernels.log_noise(SQUARE, 2.0, 0.0) == 0.0


# --------------------------------------------------------------------------- forced outcomes
def _bernoulli(x, a, b, mode=0, up=None, down=None, z=None, rr=None, n_iter=30, seed=0):
    n = x.size
    up = np.zeros(n + 1) if up is None else up
    down = np.zeros(n + 1) if down is None else down
    z = np.zeros(n, np.int64) if z is None else z
    rr = np.zeros((2, 2)) if rr is None else rr
    out = _outputs(n_iter)
    s = kernels.bernoulli_chain(np.random.default_rng(seed), x, int(x.sum()), a, b, mode, up, down, z, rr, n_iter, *out)
    return s, out


def test_bernoulli_zero_acceptance_never_moves():
    x0 = (np.arange(20) < 7).astype(np.int8)
    x = x0.copy()
    s, (theta, acc, frac) = _bernoulli(x, 1.0, 1.0)
    assert s == 7
    np.testing.assert_array_equal(x, x0)
    # every counted acceptance came from a proposal equal to the current record (alpha = 1)
    np.testing.assert_array_equal(acc, frac)
    assert np.all(frac < 1) and np.all(frac > 0)


def test_bernoulli_unit_acceptance_always_moves():
    x = (np.arange(20) < 7).astype(np.int8)
    n = x.size
    s, (theta, acc, frac) = _bernoulli(x, 1.0, 1.0, up=np.ones(n + 1), down=np.ones(n + 1))
    assert s == int(x.sum())
    np.testing.assert_array_equal(acc, 1.0)
    np.testing.assert_array_equal(frac, 1.0)
    # accept-all is the Gibbs sampler of the no-noise model: the records are fresh draws from theta,
    # which matches the reference trajectory exactly
    xr = (np.arange(20) < 7).astype(np.int8)
    out = _outputs(30)
    s_ref = ref_bernoulli(np.random.default_rng(0), xr, 7, 1.0, 1.0, 0, np.ones(n + 1), np.ones(n + 1),
                          np.zeros(n, np.int64), np.zeros((2, 2)), 30, *out, Counter())
    assert s == s_ref
    np.testing.assert_array_equal(x, xr)


@pytest.mark.parametrize("value", [0, 1])
def test_bernoulli_pinned_parameter_keeps_all_records(value):
    """With a = b = 1e-300 and all records equal to `value`, theta | x is 0 or 1 to machine precision,
    so every proposal equals its record: nothing moves, alpha = 1 throughout, and no table is read."""
    n = 15
    x = np.full(n, value, np.int8)
    s, (theta, acc, frac) = _bernoulli(x, 1e-300, 1e-300, up=np.full(n + 1, np.nan), down=np.full(n + 1, np.nan))
    assert s == value * n
    assert np.all(x == value)
    np.testing.assert_array_equal(acc, 1.0)
    np.testing.assert_array_equal(frac, 1.0)
    assert np.all(theta == value)


def test_bernoulli_randomized_response_ratio_one_accepts_everything():
    n = 16
    x = np.zeros(n, np.int8)
    z = (np.arange(n) % 2).astype(np.int64)
    s, (theta, acc, frac) = _bernoulli(x, 1.0, 1.0, mode=1, z=z, rr=np.ones((2, 2)))
    np.testing.assert_array_equal(acc, 1.0)
    np.testing.assert_array_equal(frac, 1.0)
    assert s == int(x.sum())


def test_bernoulli_randomized_response_zero_ratio_freezes_records():
    n = 16
    z = (np.arange(n) % 2).astype(np.int64)
    x = z.astype(np.int8).copy()
    s, (theta, acc, frac) = _bernoulli(x, 1.0, 1.0, mode=1, z=z, rr=np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(x, z)
    assert s == int(z.sum())
    np.testing.assert_array_equal(acc, frac)


def test_categorical_ratio_one_accepts_every_proposal():
    n, k = 18, 3
    x = (np.arange(n) % k).astype(np.int64)
    counts = np.bincount(x, minlength=k).astype(float)
    out = _outputs(25, k)
    kernels.categorical_chain(np.random.default_rng(1), x, counts, np.ones(k), 1, np.zeros(k), ABS, 1.0,
                              np.zeros(n, np.int64), np.zeros((k, k)), 25, *out)
    np.testing.assert_array_equal(out[1], 1.0)
    np.testing.assert_array_equal(out[2], 1.0)
    np.testing.assert_array_equal(counts, np.bincount(x, minlength=k))
    np.testing.assert_allclose(out[0].sum(axis=1), 1.0, rtol=1e-12)


def test_categorical_impossible_moves_are_rejected():
    """log Q = 0 on the diagonal and -1e300 elsewhere: a record that agrees with its report never moves."""
    n, k = 18, 3
    z = (np.arange(n) % k).astype(np.int64)
    x = z.copy()
    counts = np.bincount(x, minlength=k).astype(float)
    log_q = np.where(np.eye(k, dtype=bool), 0.0, -1e300)
    out = _outputs(25, k)
    kernels.categorical_chain(np.random.default_rng(2), x, counts, np.ones(k), 1, np.zeros(k), ABS, 1.0, z, log_q,
                              25, *out)
    np.testing.assert_array_equal(x, z)
    np.testing.assert_array_equal(counts, np.bincount(z, minlength=k))
    np.testing.assert_array_equal(out[1], out[2])


def test_poisson_clamp_at_zero_hides_every_move():
    """upper = 0: every record contributes 0, so the statistic never changes and every move is accepted."""
    n = 10
    x = np.arange(n, dtype=np.int64)
    out = _outputs(20)
    s, sx = kernels.poisson_chain(np.random.default_rng(3), x, 0, int(x.sum()), 1.0, 1.0, 0, 100.0, ABS, 0.01, 20, *out)
    assert s == 0 and sx == x.sum()
    np.testing.assert_array_equal(out[1], 1.0)
    np.testing.assert_array_equal(out[2], 1.0)


def test_normal_degenerate_clamp_accepts_everything():
    n = 10
    x = np.linspace(-1, 1, n)
    out = _outputs(20)
    s, sx = kernels.normal_chain(np.random.default_rng(4), x, 0.0, 0.0, 1.0, 0.5, 0.5, 0.0, 1.0, 100.0, SQUARE, 0.01,
                                 0.01, True, 20, *out)
    assert s == pytest.approx(0.5 * n)
    assert sx == pytest.approx(x.sum())
    np.testing.assert_array_equal(out[1], 1.0)
    np.testing.assert_array_equal(out[2], 1.0)


@pytest.mark.parametrize("mech", [{"name": "laplace", "epsilon": 0.7}, {"name": "gaussian", "sigma": 2.0},
                                  {"name": "discrete_laplace", "epsilon": 0.7}])
def test_bernoulli_tables_are_the_mechanism_ratios(mech):
    """acc_up[s] = min(1, eta(s_dp | s + 1) / eta(s_dp | s)), acc_down[s] = min(1, eta(s_dp | s - 1) / eta(s_dp | s))."""
    s_dp = 6.0 if mech["name"].startswith("discrete") else 6.4
    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 12}, "mechanism": mech, "data": {"s_dp": [s_dp]}})
    runner = _Runner(problem)
    lp = lambda s: float(problem.mechanism.log_prob(problem.s_dp, np.array([float(s)])))  # noqa: E731
    for s in range(12):
        assert runner.acc_up[s] == pytest.approx(min(1.0, math.exp(lp(s + 1) - lp(s))), rel=1e-12)
        assert runner.acc_down[s + 1] == pytest.approx(min(1.0, math.exp(lp(s) - lp(s + 1))), rel=1e-12)


def test_bernoulli_randomized_response_table():
    problem = engine.prepare({"model": {"name": "beta_binomial", "n": 12},
                              "mechanism": {"name": "randomized_response", "epsilon": 1.3}, "data": {"s_dp": [5]}})
    runner = _Runner(problem)
    q = problem.mechanism.Q
    for zz in (0, 1):
        for xs in (0, 1):
            assert runner.rr_acc[zz, xs] == pytest.approx(min(1.0, q[xs, zz] / q[1 - xs, zz]))
    np.testing.assert_array_equal(np.bincount(runner.z, minlength=2), [7, 5])


# --------------------------------------------------------------------------- Prop. 3.1
PURE_PAIRS = [
    ("beta_binomial", {"n": 30}, "laplace", [12.7]),
    ("beta_binomial", {"n": 30}, "discrete_laplace", [12]),
    ("beta_binomial", {"n": 30}, "randomized_response", [12]),
    ("dirichlet_multinomial", {"n": 12, "alpha": [1, 2, 1.5]}, "laplace", [3.3, 5.2, 2.9]),
    ("dirichlet_multinomial", {"n": 12, "alpha": [1, 2, 1.5]}, "discrete_laplace", [3, 5, 3]),
    ("dirichlet_multinomial", {"n": 12, "alpha": [1, 2, 1.5]}, "randomized_response", [3, 5, 4]),
    ("poisson_gamma", {"n": 8, "alpha": 2, "beta": 1, "upper": 3}, "laplace", [14.2]),
    ("poisson_gamma", {"n": 8, "alpha": 2, "beta": 1, "upper": 3}, "discrete_laplace", [14]),
    ("normal_known_sd", {"n": 10, "lo": -2, "hi": 2}, "laplace", [3.1]),
]


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 5.0])
@pytest.mark.parametrize("model, prior, mech, s_dp", PURE_PAIRS, ids=[f"{m}-{k}" for m, _, k, _ in PURE_PAIRS])
def test_acceptance_never_below_exp_minus_epsilon(model, prior, mech, s_dp, epsilon):
    problem = engine.prepare({"model": {"name": model, **prior}, "mechanism": {"name": mech, "epsilon": epsilon},
                              "data": {"s_dp": s_dp}})
    result = da_mcmc(problem, np.random.default_rng(5), chains=3, draws=300, warmup=0)
    bound = result.info["epsilon_bound"]
    assert bound == pytest.approx(math.exp(-epsilon), rel=1e-12)
    acc = np.asarray(result.sample_stats["acceptance_rate"])
    assert acc.shape == (3, 300) and np.all(np.isfinite(acc)) and np.all(acc <= 1.0)
    per_chain_min = acc.min(axis=1)
    np.testing.assert_array_equal(result.info["min_acceptance_per_chain"], per_chain_min)
    # exp(-epsilon) is hit exactly when every move in a sweep sits on the bound; allow only the
    # rounding of the log-ratio (a few ulps), not a statistical margin: this is a deterministic bound
    assert np.all(per_chain_min >= bound * (1 - 1e-12)), (
        f"{model} x {mech}, epsilon={epsilon}: min acceptance per chain {per_chain_min} < exp(-eps) = {bound}")


@pytest.mark.parametrize("model, prior, mech, s_dp", [
    ("beta_binomial", {"n": 10}, {"name": "gaussian", "sigma": 1.0}, [4.0]),
    ("beta_binomial", {"n": 10}, {"name": "discrete_gaussian", "sigma": 1.0}, [4]),
    ("poisson_gamma", {"n": 5}, {"name": "laplace", "epsilon": 1.0}, [4.0]),  # unbounded records
    ("beta_binomial", {"n": 10}, {"name": "laplace", "epsilon": 1.0, "sensitivity": 0.5}, [4.0]),  # too small
])
def test_no_bound_claimed_without_pure_dp_at_the_true_sensitivity(model, prior, mech, s_dp):
    problem = engine.prepare({"model": {"name": model, **prior}, "mechanism": mech, "data": {"s_dp": s_dp}})
    result = da_mcmc(problem, np.random.default_rng(0), chains=1, draws=20, warmup=0)
    assert result.info["epsilon_bound"] is None
