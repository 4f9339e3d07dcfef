"""Conjugate data models with a record-additive statistic (Ju et al. 2022, Assumption 2).

Each model knows: its prior and how to draw from it, how to draw confidential records given the
parameter, the record statistic ``s(x) = sum_i t(x_i)`` that the mechanism privatizes, the
conjugate posterior given confidential records (Assumption 1, sampled exactly), and its
sensitivity under the bounded ("replace one record") neighbouring notion used throughout:
n is public and neighbouring databases differ in the value of one record.

==========================  ==========================  ====================  ==================
model                       record and statistic         prior                 sensitivity
==========================  ==========================  ====================  ==================
``beta_binomial``           x_i in {0, 1}; s = sum x_i   theta ~ Beta(a, b)     1
``poisson_gamma``           x_i in N; s = sum min(x_i,   lam ~ Gamma(alpha,     upper; 1 without a
                            upper)                       rate beta)             clamp (counts, see below)
``dirichlet_multinomial``   x_i in {0..k-1}; s = cell    p ~ Dirichlet(alpha)   L1: 2, L2: sqrt 2
                            counts (k of them)
``normal_known_sd``         x_i real; s = sum of x_i     mu ~ N(prior_mean,     hi - lo
                            clamped to [lo, hi]          prior_sd^2)
``naive_bayes_loglinear``   x_i = (y, x_1..x_K); s = the pi ~ Dir(alpha 1_I),   L1: 2K, L2: sqrt 2K
                            K two-way tables n_ij^k      p[k][i] ~ Dir(alpha)
``linear_regression``       x_i = (x_1..x_p, y); s =     beta ~ N(0, tau^2 I)  L1: p^2 + 3p + 3,
                            sums of products of the                            L2: sqrt(2(p+1)(p+2))
                            clamped, normalised record
==========================  ==========================  ====================  ==================

Without ``upper`` a Poisson record is unbounded and so is the true sensitivity; the default
sensitivity 1 then follows Gong (2020)'s privatized count, where the released count is a
number of people and each person moves it by one. The engine does not claim the exp(-epsilon)
acceptance bound in that case.

Clamping (``upper``, ``lo``/``hi``) applies to the released statistic only; the latent records
of DA-MCMC are the unclamped ones, so ``theta | x`` stays conjugate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import special, stats

from .validation import fail, finite, number_list, positive, positive_int

__all__ = ["BetaBinomial", "PoissonGamma", "DirichletMultinomial", "NormalKnownSD", "NaiveBayesLoglinear",
           "LinearRegression",
           "MODEL_NAMES", "make_model", "MODEL_INFO", "record_columns"]

MODEL_NAMES = ("beta_binomial", "poisson_gamma", "dirichlet_multinomial", "normal_known_sd",
               "naive_bayes_loglinear", "linear_regression")
MAX_N = 10_000_000

# Prior keys and their defaults, for the spec loader, the README and the app.
MODEL_INFO = {
    "beta_binomial": {"params": ("theta",), "prior": {"a": 1.0, "b": 1.0}},
    "poisson_gamma": {"params": ("lam",), "prior": {"alpha": 1.0, "beta": 1.0, "upper": None}},
    "dirichlet_multinomial": {"params": ("p",), "prior": {"alpha": [1.0, 1.0, 1.0]}},
    "normal_known_sd": {"params": ("mu",),
                        "prior": {"sd": 1.0, "lo": -3.0, "hi": 3.0, "prior_mean": 0.0, "prior_sd": 10.0}},
    "naive_bayes_loglinear": {"params": ("pi", "p"),
                              "prior": {"class_levels": 2, "feature_levels": [2, 2], "alpha": 2.0}},
    # paper 000 Sec. 5 / dapper Example 3: p = 2, x ~ N((0.9, -1.17), I), sigma^2 = 2, clamp [-10, 10], tau = 2
    "linear_regression": {"params": ("beta",),
                          "prior": {"p": 2, "x_mean": [0.9, -1.17], "x_cov": [[1.0, 0.0], [0.0, 1.0]],
                                    "sigma": math.sqrt(2.0), "lo": -10.0, "hi": 10.0, "prior_sd": 2.0},
                          "simulate": {"beta": [-1.79, -2.89, -0.66]}},
}


@dataclass(frozen=True)
class BetaBinomial:
    """n Bernoulli(theta) records with a Beta(a, b) prior; s = number of ones."""

    n: int
    a: float = 1.0
    b: float = 1.0

    name = "beta_binomial"
    param_names = ("theta",)
    stat_dim = 1
    k = 2
    integer_statistic = True
    support = (0.0, 1.0)

    def default_sensitivity(self, l2: bool = False) -> float:
        return 1.0

    @property
    def statistic_range(self):
        return np.array([0.0]), np.array([float(self.n)])

    @property
    def true_sensitivity(self) -> float | None:
        return 1.0

    def sample_prior(self, rng, size):
        return rng.beta(self.a, self.b, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return (rng.random(n or self.n) < float(theta[0])).astype(np.int64)

    def statistic(self, records):
        return np.array([float(np.sum(records))])

    def categories(self, records):
        return np.asarray(records, dtype=np.int64)

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = ~np.isin(r, (0.0, 1.0))
        if bad.any():
            fail(field, r[bad][0].item(), "beta_binomial records must be 0 or 1")
        return r.astype(np.int64)

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        s = float(suff[0])
        return self.a + s, self.b + self.n - s

    def posterior_sample(self, rng, suff, size):
        al, be = self.posterior_params(suff)
        return rng.beta(al, be, size=size)[:, None]

    def posterior_marginals(self, suff):
        return {"theta": stats.beta(*self.posterior_params(suff))}

    def project(self, s_dp):
        """The nearest value of the statistic's support [0, n] (naive method)."""
        return np.clip(np.asarray(s_dp, float), 0.0, self.n)

    def sample_statistic(self, rng, theta):
        return rng.binomial(self.n, theta[:, 0])[:, None].astype(float)

    def theta_from(self, value: Mapping[str, Any], field="data.simulate"):
        v = value.get("theta")
        if v is None:
            fail(field, dict(value), "beta_binomial needs theta")
        v = finite(f"{field}.theta", v)
        if not 0.0 <= v <= 1.0:
            fail(f"{field}.theta", v, "must be in [0, 1]")
        return np.array([v])

    def prior_dict(self):
        return {"a": self.a, "b": self.b}


@dataclass(frozen=True)
class PoissonGamma:
    """n Poisson(lam) records, Gamma(alpha, rate beta) prior; s = sum of records clamped at ``upper``."""

    n: int
    alpha: float = 1.0
    beta: float = 1.0
    upper: int | None = None

    name = "poisson_gamma"
    param_names = ("lam",)
    stat_dim = 1
    k = None
    integer_statistic = True
    support = (0.0, np.inf)

    def default_sensitivity(self, l2: bool = False) -> float:
        return float(self.upper) if self.upper is not None else 1.0

    @property
    def true_sensitivity(self) -> float | None:
        return float(self.upper) if self.upper is not None else None

    @property
    def statistic_range(self):
        hi = np.inf if self.upper is None else float(self.n * self.upper)
        return np.array([0.0]), np.array([hi])

    def sample_prior(self, rng, size):
        return rng.gamma(self.alpha, 1.0 / self.beta, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return rng.poisson(float(theta[0]), size=n or self.n).astype(np.int64)

    def _clamp(self, records):
        r = np.asarray(records)
        return r if self.upper is None else np.minimum(r, self.upper)

    def statistic(self, records):
        return np.array([float(np.sum(self._clamp(records)))])

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = (r < 0) | (np.round(r) != r)
        if bad.any():
            fail(field, r[bad][0].item(), "poisson_gamma records must be whole numbers >= 0")
        return r.astype(np.int64)

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        return self.alpha + float(suff[0]), self.beta + self.n

    def posterior_sample(self, rng, suff, size):
        sh, rate = self.posterior_params(suff)
        return rng.gamma(sh, 1.0 / rate, size=size)[:, None]

    def posterior_marginals(self, suff):
        sh, rate = self.posterior_params(suff)
        return {"lam": stats.gamma(sh, scale=1.0 / rate)}

    def project(self, s_dp):
        lo, hi = self.statistic_range
        return np.clip(np.asarray(s_dp, float), lo, hi)

    def sample_statistic(self, rng, theta):
        lam = theta[:, 0]
        if self.upper is None:
            return rng.poisson(self.n * lam)[:, None].astype(float)
        # Sum of n clamped Poisson records: counts of each value 0..upper-1 and of ">= upper"
        # are multinomial(n, pmf), so s = sum_j j N_j + upper N_upper.
        j = np.arange(self.upper)
        pm = stats.poisson.pmf(j[None, :], lam[:, None])
        tail = np.clip(1.0 - pm.sum(axis=1, keepdims=True), 0.0, 1.0)
        pv = np.concatenate([pm, tail], axis=1)
        pv /= pv.sum(axis=1, keepdims=True)
        counts = rng.multinomial(self.n, pv)
        vals = np.append(j, self.upper).astype(float)
        return (counts @ vals)[:, None]

    def theta_from(self, value, field="data.simulate"):
        v = value.get("lam")
        if v is None:
            fail(field, dict(value), "poisson_gamma needs lam")
        return np.array([positive(f"{field}.lam", v)])

    def prior_dict(self):
        d = {"alpha": self.alpha, "beta": self.beta}
        if self.upper is not None:
            d["upper"] = self.upper
        return d


@dataclass(frozen=True)
class DirichletMultinomial:
    """n categorical records over k cells, Dirichlet(alpha) prior; s = the k cell counts."""

    n: int
    alpha: tuple = (1.0, 1.0, 1.0)

    name = "dirichlet_multinomial"
    integer_statistic = True
    support = (0.0, 1.0)

    @property
    def k(self) -> int:
        return len(self.alpha)

    @property
    def stat_dim(self) -> int:
        return self.k

    @property
    def param_names(self):
        return tuple(f"p[{j}]" for j in range(self.k))

    def default_sensitivity(self, l2: bool = False) -> float:
        """Replacing one record moves one count down and another up: L1 = 2, L2 = sqrt(2)."""
        return math.sqrt(2.0) if l2 else 2.0

    @property
    def true_sensitivity(self) -> float | None:
        return 2.0

    @property
    def statistic_range(self):
        return np.zeros(self.k), np.full(self.k, float(self.n))

    def sample_prior(self, rng, size):
        return rng.dirichlet(np.asarray(self.alpha), size=size)

    def sample_records(self, rng, theta, n=None):
        return rng.choice(self.k, size=n or self.n, p=np.asarray(theta) / np.sum(theta)).astype(np.int64)

    def statistic(self, records):
        return np.bincount(np.asarray(records, dtype=np.int64), minlength=self.k).astype(float)

    def categories(self, records):
        return np.asarray(records, dtype=np.int64)

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        bad = (r < 0) | (r > self.k - 1) | (np.round(r) != r)
        if bad.any():
            fail(field, r[bad][0].item(), f"dirichlet_multinomial records must be category indices 0..{self.k - 1}")
        return r.astype(np.int64)

    def suff(self, records):
        return self.statistic(records)

    def posterior_sample(self, rng, suff, size):
        return rng.dirichlet(np.asarray(self.alpha) + np.asarray(suff, float), size=size)

    def posterior_marginals(self, suff):
        a = np.asarray(self.alpha) + np.asarray(suff, float)
        return {f"p[{j}]": stats.beta(a[j], a.sum() - a[j]) for j in range(self.k)}

    def project(self, s_dp):
        """Euclidean projection of s_dp onto {c >= 0, sum c = n} (Duchi et al. 2008)."""
        v = np.asarray(s_dp, float)
        u = np.sort(v)[::-1]
        css = np.cumsum(u) - self.n
        idx = np.arange(1, v.size + 1)
        rho = np.nonzero(u - css / idx > 0)[0][-1]
        tau = css[rho] / (rho + 1.0)
        return np.maximum(v - tau, 0.0)

    def sample_statistic(self, rng, theta):
        return rng.multinomial(self.n, theta).astype(float)

    def theta_from(self, value, field="data.simulate"):
        v = value.get("p")
        if v is None:
            fail(field, dict(value), f"dirichlet_multinomial needs p = [..] with {self.k} probabilities")
        p = number_list(f"{field}.p", v, self.k)
        if (p < 0).any() or abs(p.sum() - 1.0) > 1e-6:
            fail(f"{field}.p", list(v), "must be non-negative and sum to 1")
        return p / p.sum()

    def prior_dict(self):
        return {"alpha": list(self.alpha)}


@dataclass(frozen=True)
class NormalKnownSD:
    """n Normal(mu, sd) records clamped to [lo, hi]; Normal(prior_mean, prior_sd) prior; s = clamped sum."""

    n: int
    sd: float = 1.0
    lo: float = -3.0
    hi: float = 3.0
    prior_mean: float = 0.0
    prior_sd: float = 10.0

    name = "normal_known_sd"
    param_names = ("mu",)
    stat_dim = 1
    k = None
    integer_statistic = False
    support = (-np.inf, np.inf)

    def default_sensitivity(self, l2: bool = False) -> float:
        return self.hi - self.lo

    @property
    def true_sensitivity(self) -> float | None:
        return self.hi - self.lo

    @property
    def statistic_range(self):
        return np.array([self.n * self.lo]), np.array([self.n * self.hi])

    def sample_prior(self, rng, size):
        return rng.normal(self.prior_mean, self.prior_sd, size=size)[:, None]

    def sample_records(self, rng, theta, n=None):
        return rng.normal(float(theta[0]), self.sd, size=n or self.n)

    def statistic(self, records):
        return np.array([float(np.sum(np.clip(records, self.lo, self.hi)))])

    def check_records(self, records, field="records"):
        r = np.asarray(records, dtype=float)
        if not np.all(np.isfinite(r)):
            fail(field, r[~np.isfinite(r)][0].item(), "normal_known_sd records must be finite numbers")
        return r

    def suff(self, records):
        return np.array([float(np.sum(records))])

    def posterior_params(self, suff):
        prec = 1.0 / self.prior_sd**2 + self.n / self.sd**2
        mean = (self.prior_mean / self.prior_sd**2 + float(suff[0]) / self.sd**2) / prec
        return mean, 1.0 / math.sqrt(prec)

    def posterior_sample(self, rng, suff, size):
        m, s = self.posterior_params(suff)
        return rng.normal(m, s, size=size)[:, None]

    def posterior_marginals(self, suff):
        m, s = self.posterior_params(suff)
        return {"mu": stats.norm(m, s)}

    def project(self, s_dp):
        lo, hi = self.statistic_range
        return np.clip(np.asarray(s_dp, float), lo, hi)

    def sample_statistic(self, rng, theta):
        mu = theta[:, 0]
        out = np.empty(mu.size)
        chunk = max(1, 2_000_000 // self.n)
        for i in range(0, mu.size, chunk):
            m = mu[i : i + chunk]
            x = rng.normal(m[:, None], self.sd, size=(m.size, self.n))
            out[i : i + chunk] = np.clip(x, self.lo, self.hi).sum(axis=1)
        return out[:, None]

    def theta_from(self, value, field="data.simulate"):
        v = value.get("mu")
        if v is None:
            fail(field, dict(value), "normal_known_sd needs mu")
        return np.array([finite(f"{field}.mu", v)])

    def prior_dict(self):
        return {"sd": self.sd, "lo": self.lo, "hi": self.hi, "prior_mean": self.prior_mean, "prior_sd": self.prior_sd}


def _record_rows(records, cols, field: str, what: str) -> np.ndarray:
    """Multi-column records as a float array with one row per record and one column per name in
    ``cols``; anything else is a ValueError naming ``field`` ("must be rows of 3 <what> (x1, x2, y)")."""
    allowed = f"must be rows of {len(cols)} {what} ({', '.join(cols)})"
    try:
        r = np.asarray(records, dtype=float)
    except (TypeError, ValueError):
        fail(field, records, allowed)
    if r.ndim != 2 or r.shape[1] != len(cols) or r.shape[0] == 0:
        fail(field, f"shape {r.shape}", allowed)
    return r


def _simplex_projection(v, total: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto {c >= 0, sum c = total} (Duchi et al. 2008); zeros if total <= 0."""
    v = np.asarray(v, float)
    if total <= 0.0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    rho = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


@dataclass(frozen=True)
class NaiveBayesLoglinear:
    r"""Naive-Bayes log-linear model (Ju et al. 2022, Sec. 4, after Karwa et al. 2016).

    A record is (y, x_1, ..., x_K): a class y in {0..I-1} and K features, x_k in {0..J_k-1}, with

        y ~ Categorical(pi),   x_k | y = i ~ Categorical(p[k][i]) independently over k,

    and independent Dirichlet(alpha, ..., alpha) priors on pi and on every row p[k][i]. The
    sufficient statistic, and the release, is the K two-way tables n_ij^k = #{y = i, x_k = j},
    stacked table k = 0..K-1, each row-major over (class i, level j): cell (k, i, j) is entry
    ``off_k + i J_k + j`` with off_k = sum_{k' < k} I J_k'. It is record additive (Assumption 2):
    t(y, x) puts a one in cell (k, y, x_k) of every table.

    Sensitivity (bounded DP: n public, a neighbour changes one record). Changing record (y, x) to
    (y', x') removes one count from cell (k, y, x_k) and adds one to (k, y', x'_k) of every table
    k; when the record changes at all, the two cells differ in table k unless y = y' and
    x_k = x'_k. So each table moves by at most 2 in L1, and the whole release by
    Delta_1 = 2K (reached when y changes), Delta_2 = sqrt(2K). Laplace noise of scale 2K/epsilon
    on every cell is therefore epsilon-DP (the paper's release); Gaussian-type noise uses
    Delta_2 = sqrt(2K).

    Conjugacy (Assumption 1): with class counts c_i = sum_j n_ij^k (the same for every k),
        pi | x ~ Dirichlet(alpha + c),   p[k][i] | x ~ Dirichlet(alpha + n_i.^k),
    all independent. Parameters are flattened as ``pi[i]`` then ``p[k][i][j]`` (k, i, j from 0,
    j fastest), so parameter ``I + c`` is the probability of stat cell c.
    """

    n: int
    class_levels: int = 2
    feature_levels: tuple = (2, 2)
    alpha: float = 2.0

    name = "naive_bayes_loglinear"
    k = None  # no single categorical record: randomized response does not apply
    integer_statistic = True
    support = (0.0, 1.0)
    methods = ("da_mcmc", "naive")  # the methods that support this model

    @property
    def n_features(self) -> int:
        return len(self.feature_levels)

    @property
    def offsets(self) -> np.ndarray:
        """Start of table k in the stacked statistic."""
        sizes = self.class_levels * np.asarray(self.feature_levels, dtype=np.int64)
        return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    @property
    def stat_dim(self) -> int:
        return int(self.class_levels * sum(self.feature_levels))

    @property
    def param_names(self):
        names = [f"pi[{i}]" for i in range(self.class_levels)]
        for k, jk in enumerate(self.feature_levels):
            names += [f"p[{k}][{i}][{j}]" for i in range(self.class_levels) for j in range(jk)]
        return tuple(names)

    @property
    def csv_columns(self) -> list:
        return ["y"] + [f"x{k + 1}" for k in range(self.n_features)]

    def default_sensitivity(self, l2: bool = False) -> float:
        """Bounded DP: Delta_1 = 2K, Delta_2 = sqrt(2K) (derivation in the class docstring)."""
        return math.sqrt(2.0 * self.n_features) if l2 else 2.0 * self.n_features

    @property
    def true_sensitivity(self) -> float | None:
        return 2.0 * self.n_features

    @property
    def statistic_range(self):
        return np.zeros(self.stat_dim), np.full(self.stat_dim, float(self.n))

    def _tables(self, flat):
        """Split a stacked vector into the K tables, each shaped (I, J_k)."""
        flat = np.asarray(flat, float)
        return [flat[o:o + self.class_levels * jk].reshape(self.class_levels, jk)
                for o, jk in zip(self.offsets, self.feature_levels)]

    def sample_prior(self, rng, size):
        cols = [rng.dirichlet(np.full(self.class_levels, self.alpha), size=size)]
        for jk in self.feature_levels:
            rows = rng.dirichlet(np.full(jk, self.alpha), size=(size, self.class_levels))
            cols.append(rows.reshape(size, -1))
        return np.concatenate(cols, axis=1)

    def sample_records(self, rng, theta, n=None):
        """(n, K + 1) integer array: column 0 is y, column k is x_k."""
        n = n or self.n
        theta = np.asarray(theta, float)
        big_i = self.class_levels
        out = np.empty((n, self.n_features + 1), dtype=np.int64)
        pi = theta[:big_i]
        out[:, 0] = rng.choice(big_i, size=n, p=pi / pi.sum())
        for k, (tab, jk) in enumerate(zip(self._tables(theta[big_i:]), self.feature_levels)):
            cdf = np.cumsum(tab / tab.sum(axis=1, keepdims=True), axis=1)
            u = rng.random(n)
            out[:, k + 1] = np.minimum((u[:, None] >= cdf[out[:, 0], :]).sum(axis=1), jk - 1)
        return out

    def statistic(self, records):
        r = np.asarray(records, dtype=np.int64)
        y = r[:, 0]
        parts = [np.bincount(y * jk + r[:, k + 1], minlength=self.class_levels * jk)
                 for k, jk in enumerate(self.feature_levels)]
        return np.concatenate(parts).astype(float)

    def check_records(self, records, field="records"):
        """Records as an (n, K + 1) array of integer levels from 0 (columns y, x1..xK)."""
        cols = self.csv_columns
        r = _record_rows(records, cols, field, "integer levels")
        levels = (self.class_levels,) + tuple(self.feature_levels)
        for c, (name, lev) in enumerate(zip(cols, levels)):
            col = r[:, c]
            bad = ~np.isfinite(col) | (col < 0) | (col > lev - 1) | (np.round(col) != col)
            if bad.any():
                fail(f"{field} column {name}", col[bad][0].item(), f"must be an integer level 0..{lev - 1}")
        return r.astype(np.int64)

    def suff(self, records):
        return self.statistic(records)

    def _dirichlet_params(self, suff):
        """(alpha + class counts, [alpha + n^k for each k]); class counts are the row sums of table 0
        (the same for every table of a valid release, which :meth:`project` guarantees)."""
        tables = self._tables(suff)
        return self.alpha + tables[0].sum(axis=1), [self.alpha + t for t in tables]

    def posterior_sample(self, rng, suff, size):
        a_pi, a_p = self._dirichlet_params(suff)
        cols = [rng.dirichlet(a_pi, size=size)]
        for a in a_p:
            cols.append(np.stack([rng.dirichlet(row, size=size) for row in a], axis=1).reshape(size, -1))
        return np.concatenate(cols, axis=1)

    def posterior_marginals(self, suff):
        a_pi, a_p = self._dirichlet_params(suff)
        out = {f"pi[{i}]": stats.beta(a_pi[i], a_pi.sum() - a_pi[i]) for i in range(self.class_levels)}
        for k, a in enumerate(a_p):
            for i, row in enumerate(a):
                for j, v in enumerate(row):
                    out[f"p[{k}][{i}][{j}]"] = stats.beta(v, row.sum() - v)
        return out

    def project(self, s_dp):
        """Valid tables nearest the noisy ones, for the naive method and chain starts.

        1. Class totals: table k gives the noisy row sums r_i^k = sum_j m_ij^k, unbiased for n_i
           with variance proportional to J_k; combine them with weights 1/J_k and project the
           combined vector onto {c >= 0, sum c = n} (Euclidean).
        2. Each row (k, i) of noisy counts is projected onto {c >= 0, sum_j c_j = c_i}.
        The result is non-negative, every table has row sums c and total n, so the class counts
        the conjugate update reads from table 0 agree with every other table. Counts are not
        rounded (the Dirichlet update takes real counts).
        """
        tables = self._tables(s_dp)
        w = 1.0 / np.asarray(self.feature_levels, float)
        rows = np.stack([t.sum(axis=1) for t in tables])
        c = _simplex_projection((w[:, None] * rows).sum(axis=0) / w.sum(), float(self.n))
        out = [np.stack([_simplex_projection(t[i], c[i]) for i in range(self.class_levels)]).ravel()
               for t in tables]
        return np.concatenate(out)

    def theta_from(self, value, field="data.simulate"):
        """``{pi = [..], p = [[[..]..]..]}`` (p[k][i] a probability vector over J_k levels; or p flat,
        table by table and row-major, in the order of the parameter names ``p[k][i][j]``), or
        ``{from_prior = true}`` (returns None: the caller draws theta from the prior)."""
        value = dict(value)
        if "from_prior" in value:
            if value["from_prior"] is not True or len(value) != 1:
                fail(f"{field}.from_prior", value["from_prior"], "must be true and the only key (or give pi and p)")
            return None
        extra = set(value) - {"pi", "p"}
        if extra or "pi" not in value or "p" not in value:
            fail(field, value, "naive_bayes_loglinear needs pi = [..] and p = [table k][class i][level j], "
                               "or from_prior = true")
        big_i = self.class_levels
        pi = _probability_vector(f"{field}.pi", value["pi"], big_i)
        p = value["p"]
        shape = (f"must be a list of K = {self.n_features} tables, table k a list of I = {big_i} rows of "
                 f"J_k = {list(self.feature_levels)} probabilities (or all {self.stat_dim} flattened in the order "
                 "of s_dp)")
        if isinstance(p, (list, tuple)) and len(p) == self.stat_dim and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in p):
            p = [np.asarray(t).tolist() for t in self._tables(p)]  # flat, table by table, row-major
        if not isinstance(p, (list, tuple)) or len(p) != self.n_features:
            fail(f"{field}.p", p, shape)
        parts = [pi]
        for k, (tab, jk) in enumerate(zip(p, self.feature_levels)):
            if not isinstance(tab, (list, tuple)) or len(tab) != big_i:
                fail(f"{field}.p[{k}]", tab, shape)
            parts += [_probability_vector(f"{field}.p[{k}][{i}]", row, jk) for i, row in enumerate(tab)]
        return np.concatenate(parts)

    def prior_dict(self):
        return {"class_levels": self.class_levels, "feature_levels": list(self.feature_levels), "alpha": self.alpha}


@dataclass(frozen=True)
class LinearRegression:
    r"""Clamped linear regression with a random design (Ju et al. 2022, Sec. 5; dapper Example 3).

    Records r_i = (x_i, y_i), x_i in R^p, i = 1..n:

        x_i ~ N_p(m, Sigma),   y_i | x_i ~ N(beta_0 + x_i^T beta_{1:p}, sigma^2),   beta ~ N(0, tau^2 I_{p+1}),

    with m (``x_mean``), Sigma (``x_cov``), sigma and tau (``prior_sd``) known. Parameters
    ``beta[0]`` (intercept) .. ``beta[p]``. CSV records have the columns ``x1..xp,y``.

    Unknown sigma^2 (``sigma_prior = (a, b)``, spec ``sigma_prior = { a = .., b = .. }``):
    sigma^2 ~ InvGamma(a, b) (shape a, scale b) independent of beta; the parameters are then
    ``beta[0..p]`` and ``sigma2``. DA-MCMC adds the Gibbs step sigma^2 | beta, x, y ~
    InvGamma(a + n/2, b + RSS/2). Given a statistic (X^T X, X^T y, y^T y) the posterior is not
    conjugate (independent priors), but sigma^2's marginal is one-dimensional:
    log p(sigma^2 | S) = log InvGamma(sigma^2; a, b) - (n/2) log sigma^2 - (1/2) log |A|
    - (y^T y / sigma^2 - mu^T A mu) / 2 with A = X^T X / sigma^2 + I / tau^2, mu = A^{-1} X^T y / sigma^2
    (beta integrated out), so ``posterior_sample`` draws sigma^2 from it on an adaptive grid of
    log sigma^2 and then beta | sigma^2 ~ N(mu, A^{-1}) exactly; the marginals are the matching
    grid mixtures (confidential and naive posteriors).

    Release. Each column c (x_1..x_p, then y) is clamped to [lo_c, hi_c] and normalised to [-1, 1],
    v~ = 2 ([v]_lo^hi - lo) / (hi - lo) - 1; with z~ = (1, x~_1..x~_p, y~) the released statistic
    is s = sum_i t(r_i) with t(r) = (x~^T y~, y~^T y~, the unique entries of x~^T x~ without the
    constant (0, 0) entry), in this order (dapper's ``st_f``)::

        s[0..p]        sum_i x~_j y~      for j = 0..p (x~_0 = 1, so s[0] = sum y~)
        s[p + 1]       sum_i y~^2
        s[p + 2..d-1]  sum_i x~_j x~_k    for k = 1..p, and j = 0..k within k (the upper triangle of
                                          x~^T x~ column by column, (0, 0) = n left out)

    d = (p + 1) + 1 + p (p + 3) / 2 = (p + 1)(p + 2) / 2 + (p + 1) entries; for p = 2 the order is
    (sum y~, sum x~1 y~, sum x~2 y~, sum y~^2, sum x~1, sum x~1^2, sum x~2, sum x~1 x~2, sum x~2^2).

    Sensitivity (bounded DP: n public, a neighbour replaces one record). Write the m = p + 1
    normalised coordinates of two records as a, b in [-1, 1]^m and d_j = |a_j - b_j|,
    s_j = |a_j + b_j|; then d_j + s_j = 2 max(|a_j|, |b_j|) <= 2. Every coordinate appears once
    linearly (change d_j), once squared (|a_j^2 - b_j^2| = d_j s_j) and in one cross product with
    every other coordinate, where a_j a_k - b_j b_k = ((a_j - b_j)(a_k + b_k) + (a_j + b_j)(a_k - b_k)) / 2
    changes by at most (d_j s_k + s_j d_k) / 2. With D = sum d_j and S = sum s_j the L1 change is

        <= D + sum_j d_j s_j + (D S - sum_j d_j s_j) / 2 = D + (sum_j d_j s_j + D S) / 2
        <= D + (2D - D^2/m + D (2m - D)) / 2          (s_j = 2 - d_j; sum d_j^2 >= D^2 / m)
        =  (m + 2) D - (m + 1) D^2 / (2m)  <=  m (m + 2)^2 / (2 (m + 1))   (at D = m (m + 2)/(m + 1)),

    reached by a = (-1, .., -1), b = (1/(m+1), .., 1/(m+1)), so the true L1 sensitivity is
    Delta_1* = (p + 1)(p + 3)^2 / (2 (p + 2)) (5.33, 9.38, 14.4 for p = 1, 2, 3). The paper's
    Delta = p^2 + 3p + 3 (the issue's contract and the default here) is larger for every p:
    2 (p + 2)(p^2 + 3p + 3) - (p + 1)(p + 3)^2 = p^3 + 3p^2 + 3p + 3 > 0, so Laplace(Delta/epsilon)
    on each entry is epsilon-DP (conservative). dapper's footnote calls p^2 + 3p + 3 an error and uses
    the entry-by-entry bound p^2 + 4p + 3 (2 per linear and cross entry, 1 per square); both are
    valid upper bounds, the paper's is the tighter of the two. L2 (Gaussian by rho): per coordinate
    d_j^2 + d_j^2 s_j^2 <= d_j^2 (1 + (2 - d_j)^2) <= 4 and every cross entry moves by at most 2, so
    Delta_2 <= sqrt(4m + 4 m (m - 1) / 2) = sqrt(2 (p + 1)(p + 2)) (the default; the largest change
    found numerically, at vertices of the cube, is smaller: 2 sqrt(floor((p+2)/2) ceil((p+2)/2))).

    Conjugacy and the clamp. The latent records of DA-MCMC are the unclamped (x, y): the model is
    the regression above, and the release is computed from the clamped versions of those records.
    Since s_dp depends on beta only through (x, y), p(beta | x, y, s_dp) = p(beta | x, y), the
    ordinary conjugate update on the raw records,

        beta | x, y ~ N(mu_n, Sigma_n),  Sigma_n = (X^T X / sigma^2 + I / tau^2)^{-1},
        mu_n = Sigma_n X^T y / sigma^2,  X = (1, x),

    which is exactly what paper 000 Sec. 5 and dapper's ``post_f`` use. Clamping enters only
    through eta(s_dp | s(x, y)). (The posterior of beta given the *clamped* data, were only those
    known, would not be normal: a clamped y is a censored observation.) ``suff`` is the raw
    statistic (X^T X flattened row-major, then X^T y).
    """

    n: int
    p: int = 2
    x_mean: tuple = (0.9, -1.17)
    x_cov: tuple = ((1.0, 0.0), (0.0, 1.0))
    sigma: float = math.sqrt(2.0)
    lo: tuple = (-10.0, -10.0, -10.0)
    hi: tuple = (10.0, 10.0, 10.0)
    prior_sd: float = 2.0
    sigma_prior: tuple | None = None

    name = "linear_regression"
    k = None  # no categorical record: randomized response does not apply
    integer_statistic = False
    support = (-np.inf, np.inf)
    methods = ("da_mcmc", "naive", "abc_rejection", "pseudo_marginal", "auto")
    refusals = {
        "exact": "no closed form or grid: the law of the clamped d-dimensional statistic given beta is not "
                 "tractable; da_mcmc, pseudo_marginal and abc_rejection are exact samplers for it",
        "ops": "one-posterior sampling is private only for a bounded log-likelihood per record, which the "
               "normal regression likelihood of unbounded records does not have",
        "bernstein_sheldon": "its CLT step needs the mean and covariance of the clamped, normalised "
                             "statistic given beta (moments of a clamped multivariate normal, no closed form) "
                             "and its conjugate beta | s step holds only when clamping never binds",
        "mcem": "the MLE by Monte Carlo EM is built for the one-parameter models",
        "rjmcmc": "an unknown n is supported for the one-parameter models only",
    }

    @property
    def stat_dim(self) -> int:
        return (self.p + 1) + 1 + self.p * (self.p + 3) // 2

    @property
    def unknown_sigma(self) -> bool:
        return self.sigma_prior is not None

    @property
    def param_names(self):
        return tuple(f"beta[{j}]" for j in range(self.p + 1)) + (("sigma2",) if self.unknown_sigma else ())

    @property
    def csv_columns(self) -> list:
        return [f"x{j + 1}" for j in range(self.p)] + ["y"]

    @property
    def chol(self) -> np.ndarray:
        return np.linalg.cholesky(np.asarray(self.x_cov, float))

    def stat_labels(self) -> list:
        """Names of the released entries in order (z~_0 = 1, z~_j = x~_j, y~)."""
        xs = ["1"] + [f"x{j}" for j in range(1, self.p + 1)]
        out = [f"sum {xs[j]}*y" if j else "sum y" for j in range(self.p + 1)] + ["sum y^2"]
        for k in range(1, self.p + 1):
            out += [f"sum {xs[k]}" if j == 0 else f"sum {xs[j]}*{xs[k]}" for j in range(k + 1)]
        return out

    def default_sensitivity(self, l2: bool = False) -> float:
        """L1: the paper's p^2 + 3p + 3; L2: sqrt(2 (p + 1)(p + 2)) (derivations in the class docstring)."""
        p = self.p
        return math.sqrt(2.0 * (p + 1) * (p + 2)) if l2 else float(p * p + 3 * p + 3)

    @property
    def true_sensitivity(self) -> float | None:
        """The exact L1 sensitivity (p + 1)(p + 3)^2 / (2 (p + 2))."""
        p = self.p
        return (p + 1) * (p + 3) ** 2 / (2.0 * (p + 2))

    @property
    def statistic_range(self):
        lo = np.full(self.stat_dim, -float(self.n))
        lo[self.p + 1] = 0.0
        for k in range(1, self.p + 1):  # squares x~_k^2 are >= 0
            lo[self._index(k, k)] = 0.0
        return lo, np.full(self.stat_dim, float(self.n))

    def _index(self, j, k):
        """Position of sum z~_j z~_k (0 <= j <= k, k >= 1) in s."""
        return self.p + 2 + (k * (k + 1)) // 2 - 1 + j

    def _bounds(self):
        return np.asarray(self.lo, float), np.asarray(self.hi, float)

    def sample_prior(self, rng, size):
        beta = rng.normal(0.0, self.prior_sd, size=(size, self.p + 1))
        if not self.unknown_sigma:
            return beta
        a, b = self.sigma_prior
        return np.column_stack([beta, b / rng.gamma(a, 1.0, size=size)])

    def _sigmas(self, theta):
        """sigma for each row of theta (its sigma2 column when sigma is unknown)."""
        theta = np.atleast_2d(theta)
        if self.unknown_sigma:
            return np.sqrt(theta[:, self.p + 1])
        return np.full(theta.shape[0], self.sigma)

    def sample_records(self, rng, theta, n=None):
        """(n, p + 1) array with columns x1..xp, y (unclamped)."""
        n = n or self.n
        beta = np.asarray(theta, float)[:self.p + 1]
        sigma = float(self._sigmas(np.asarray(theta, float))[0])
        x = rng.multivariate_normal(np.asarray(self.x_mean, float), np.asarray(self.x_cov, float), size=n,
                                    method="cholesky")
        y = beta[0] + x @ beta[1:] + sigma * rng.standard_normal(n)
        return np.column_stack([x, y])

    def statistic(self, records):
        from .regression_kernels import statistics

        r = np.ascontiguousarray(records, dtype=float)
        s = np.empty(self.stat_dim)
        lo, hi = self._bounds()
        statistics(r, lo, hi, s, np.empty((self.p + 1, self.p + 1)), np.empty(self.p + 1), np.empty(1))
        return s

    def check_records(self, records, field="records"):
        """Records as an (n, p + 1) array of finite numbers (columns x1..xp, y)."""
        cols = self.csv_columns
        r = _record_rows(records, cols, field, "numbers")
        bad = ~np.isfinite(r)
        if bad.any():
            i, c = np.argwhere(bad)[0]
            fail(f"{field} column {cols[c]}", r[i, c].item(), "must be a finite number")
        return r

    def suff(self, records):
        """Raw conjugate statistic: X^T X (row-major, X = (1, x)), then X^T y, then y^T y."""
        r = np.asarray(records, float)
        x = np.column_stack([np.ones(r.shape[0]), r[:, :self.p]])
        y = r[:, self.p]
        return np.concatenate([(x.T @ x).ravel(), x.T @ y, [y @ y]])

    def _split(self, suff):
        q = self.p + 1
        suff = np.asarray(suff, float)
        return suff[:q * q].reshape(q, q), suff[q * q:q * q + q], float(suff[q * q + q])

    def posterior_params(self, suff, sigma2=None):
        """Mean and covariance of beta | S, sigma^2 (sigma^2 defaults to the known sigma^2)."""
        q = self.p + 1
        xtx, xty, _ = self._split(suff)
        s2 = self.sigma**2 if sigma2 is None else float(sigma2)
        prec = xtx / s2 + np.eye(q) / self.prior_sd**2
        cov = np.linalg.inv(prec)
        cov = 0.5 * (cov + cov.T)
        return cov @ xty / s2, cov

    def sigma2_grid(self, suff, points: int = 600):
        """(sigma^2 grid, cell probabilities, cell widths) of p(sigma^2 | S) with beta integrated out
        (class docstring), on a grid of log sigma^2 that covers log density > max - 40."""
        xtx, xty, yty = self._split(suff)
        a, b = self.sigma_prior
        lam, u = np.linalg.eigh(0.5 * (xtx + xtx.T))
        lam = np.maximum(lam, 0.0)
        c2 = (u.T @ xty) ** 2
        tau2 = self.prior_sd**2

        def log_post(logv):  # density of log sigma^2 (Jacobian included)
            v = np.exp(logv)[:, None]
            prec = lam[None, :] / v + 1.0 / tau2
            quad = np.sum(c2[None, :] / (v * v * prec), axis=1)
            v = v[:, 0]
            return (-a * logv - b / v - 0.5 * self.n * logv - 0.5 * np.sum(np.log(prec), axis=1)
                    - 0.5 * (yty / v - quad))

        centre = math.log((b + 0.5 * max(yty, 1e-12)) / (a + 0.5 * self.n))
        coarse = np.linspace(centre - 40.0, centre + 40.0, 4001)
        lp = log_post(coarse)
        keep = coarse[lp > lp.max() - 40.0]
        lo_, hi_ = keep.min() - 0.02, keep.max() + 0.02
        edges = np.linspace(lo_, hi_, points + 1)
        mids = 0.5 * (edges[1:] + edges[:-1])
        lp = log_post(mids)
        w = np.exp(lp - lp.max())
        return np.exp(mids), w / w.sum(), edges

    def posterior_sample(self, rng, suff, size):
        if not self.unknown_sigma:
            mean, cov = self.posterior_params(suff)
            return rng.multivariate_normal(mean, cov, size=size, method="cholesky")
        grid, w, edges = self.sigma2_grid(suff)
        cell = rng.choice(grid.size, size=size, p=w)
        logv = edges[cell] + rng.random(size) * (edges[cell + 1] - edges[cell])  # uniform within the cell
        s2 = np.exp(logv)
        u, d, mean = self._given_sigma2(suff, s2)
        z = rng.standard_normal((size, self.p + 1)) / np.sqrt(d)
        return np.column_stack([mean + z @ u.T, s2])

    def _given_sigma2(self, suff, s2):
        """beta | S, sigma^2 for many sigma^2 at once: with X^T X = U diag(lam) U^T, the precision is
        U diag(d) U^T with d = lam / sigma^2 + 1 / tau^2, so the covariance is U diag(1/d) U^T and the mean
        U diag(1/d) U^T X^T y / sigma^2. Returns (U, d (k, q), means (k, q))."""
        xtx, xty, _ = self._split(suff)
        lam, u = np.linalg.eigh(0.5 * (xtx + xtx.T))
        lam = np.maximum(lam, 0.0)
        s2 = np.asarray(s2, float)[:, None]
        d = lam[None, :] / s2 + 1.0 / self.prior_sd**2
        mean = ((u.T @ xty)[None, :] / (s2 * d)) @ u.T
        return u, d, mean

    def posterior_marginals(self, suff):
        if not self.unknown_sigma:
            mean, cov = self.posterior_params(suff)
            return {name: stats.norm(mean[j], math.sqrt(cov[j, j])) for j, name in enumerate(self.param_names)}
        grid, w, edges = self.sigma2_grid(suff, points=300)
        u, d, mean = self._given_sigma2(suff, grid)
        var = (1.0 / d) @ (u.T ** 2)  # diagonal of U diag(1/d) U^T, one row per grid point
        out = {}
        for j in range(self.p + 1):
            out[f"beta[{j}]"] = _NormalMixture(w, mean[:, j], np.sqrt(var[:, j]))
        out["sigma2"] = _GridLaw(np.exp(edges), w)
        return out

    def clamped_moments(self, s):
        """The full (p + 2) x (p + 2) matrix M~ = sum z~ z~^T of the normalised records from a
        statistic vector s (M~[0, 0] = n), rows/columns (1, x~_1..x~_p, y~)."""
        p, q = self.p, self.p + 1
        s = np.asarray(s, float)
        m = np.empty((q + 1, q + 1))
        m[0, 0] = self.n
        for j in range(q):
            m[j, q] = m[q, j] = s[j]
        m[q, q] = s[p + 1]
        for k in range(1, q):
            for j in range(k + 1):
                m[j, k] = m[k, j] = s[self._index(j, k)]
        return m

    def project(self, s_dp):
        """The raw-scale conjugate statistic the naive method reads from a noisy release.

        1. Rebuild M~ = sum z~ z~^T (z~ = (1, x~, y~)) from s_dp, with the known M~[0, 0] = n.
        2. Project its x-block x~^T x~ (rows/columns 0..p) onto the positive semidefinite cone,
           the nearest PSD matrix in Frobenius norm (Higham 1988: eigenvalues clipped at 0), as
           dapper's naive analysis does (``pracma::nearest_psd``). With an unknown sigma^2 the whole
           M~ is projected, so that the residual sum of squares y^T y - (X^T y)^T (X^T X)^+ X^T y
           the sigma^2 update reads is >= 0.
        3. De-normalise: the clamped record is z = A z~ with A[0, 0] = 1 and, for column c,
           A[c, 0] = (hi_c + lo_c)/2, A[c, c] = (hi_c - lo_c)/2, so sum z z^T = A M~ A^T; its x-block
           is X^T X and its last column X^T y of the clamped data, taken as if they were the raw data.
        The prior precision I / tau^2 keeps the naive posterior covariance positive definite even
        when the projected X^T X is singular.
        """
        q = self.p + 1
        m = self.clamped_moments(s_dp)
        k = q + 1 if self.unknown_sigma else q
        xb = m[:k, :k]
        w, v = np.linalg.eigh(0.5 * (xb + xb.T))
        m[:k, :k] = (v * np.maximum(w, 0.0)) @ v.T
        lo, hi = self._bounds()
        a = np.zeros((q + 1, q + 1))
        a[0, 0] = 1.0
        a[1:, 0] = 0.5 * (hi + lo)
        a[np.arange(1, q + 1), np.arange(1, q + 1)] = 0.5 * (hi - lo)
        raw = a @ m @ a.T
        return np.concatenate([raw[:q, :q].ravel(), raw[:q, q], [raw[q, q]]])

    def sample_statistic(self, rng, theta):
        """s(x, y) of n records simulated at each row of theta (compiled, O(n p^2) per row)."""
        from .regression_kernels import simulate_statistic

        theta = np.ascontiguousarray(np.atleast_2d(theta), dtype=float)
        out = np.empty((theta.shape[0], self.stat_dim))
        lo, hi = self._bounds()
        simulate_statistic(rng, np.ascontiguousarray(theta[:, :self.p + 1]), self._sigmas(theta), self.n, self.chol,
                           np.asarray(self.x_mean, float), lo, hi, out)
        return out

    def theta_from(self, value, field="data.simulate"):
        """``{beta = [beta_0, .., beta_p]}``, plus ``sigma2 = ..`` (> 0) when sigma is unknown."""
        value = dict(value)
        keys = {"beta", "sigma2"} if self.unknown_sigma else {"beta"}
        if set(value) != keys:
            need = f"beta = [beta_0, .., beta_p] ({self.p + 1} numbers)" + (
                " and sigma2 = the true sigma^2 (model.sigma_prior makes sigma^2 a parameter)" if self.unknown_sigma
                else " and nothing else (sigma is model.sigma)")
            fail(field, value, f"linear_regression needs {need}")
        beta = number_list(f"{field}.beta", value["beta"], self.p + 1)
        if self.unknown_sigma:
            return np.append(beta, positive(f"{field}.sigma2", value["sigma2"]))
        return beta

    def prior_dict(self):
        d = {"p": self.p, "x_mean": list(self.x_mean), "x_cov": [list(r) for r in self.x_cov],
             "lo": list(self.lo), "hi": list(self.hi), "prior_sd": self.prior_sd}
        if self.unknown_sigma:
            d["sigma_prior"] = {"a": self.sigma_prior[0], "b": self.sigma_prior[1]}
        else:
            d["sigma"] = self.sigma
        return d


class _NormalMixture:
    """sum_g w_g N(mu_g, sd_g^2): the marginal of one coefficient under a grid over sigma^2
    (only what the result builders use: mean, cdf, ppf)."""

    def __init__(self, w, mu, sd):
        self.w, self.mu, self.sd = np.asarray(w), np.asarray(mu), np.asarray(sd)

    def mean(self):
        return float(self.w @ self.mu)

    def cdf(self, x):
        x = np.asarray(x, float)
        return (special.ndtr((x[..., None] - self.mu) / self.sd) @ self.w).reshape(x.shape)

    def ppf(self, q):
        """By interpolation of the cdf on a fine grid (computed once)."""
        if not hasattr(self, "_grid"):
            lo = float((self.mu - 10 * self.sd).min())
            hi = float((self.mu + 10 * self.sd).max())
            self._grid = np.linspace(lo, hi, 2001)
            self._cdf = self.cdf(self._grid)
        return np.interp(q, self._cdf, self._grid)


class _GridLaw:
    """A law with constant density on each cell of log sigma^2 (cell edges ``edges``, masses ``w``),
    so uniform within a cell in log sigma^2 (as ``posterior_sample`` draws it)."""

    def __init__(self, edges, w):
        self.edges, self.w = np.asarray(edges), np.asarray(w)
        self.cum = np.concatenate([[0.0], np.cumsum(w)])

    def mean(self):
        lo, hi = self.edges[:-1], self.edges[1:]  # E[v] for log v uniform on [log lo, log hi]
        return float(self.w @ ((hi - lo) / np.log(hi / lo)))

    def cdf(self, x):
        x = np.clip(np.asarray(x, float), self.edges[0], self.edges[-1])
        return np.interp(np.log(x), np.log(self.edges), self.cum)

    def ppf(self, q):
        return np.exp(np.interp(q, self.cum, np.log(self.edges)))


def _probability_vector(field, value, length):
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != length:
        fail(field, value, f"must be a list of {length} probabilities")
    v = number_list(field, value, length)
    if (v < 0).any() or abs(v.sum() - 1.0) > 1e-6:
        fail(field, list(value), "must be non-negative and sum to 1 (a probability vector)")
    return v / v.sum()


def record_columns(model_table: Mapping[str, Any]) -> list | None:
    """CSV columns of a multi-column record (``y, x1..xK`` for naive_bayes_loglinear), else None."""
    if model_table.get("name") == "linear_regression":
        p = model_table.get("p", MODEL_INFO["linear_regression"]["prior"]["p"])
        p = p if isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= MAX_P else 1
        return [f"x{j + 1}" for j in range(p)] + ["y"]
    if model_table.get("name") != "naive_bayes_loglinear":
        return None
    levels = _feature_levels(model_table.get("feature_levels", MODEL_INFO["naive_bayes_loglinear"]["prior"]["feature_levels"]))
    return ["y"] + [f"x{k + 1}" for k in range(len(levels))]


def _feature_levels(value) -> tuple:
    allowed = "must be a non-empty list of at most 64 integers in 2..1000 (the number of levels J_k of each feature)"
    if not isinstance(value, (list, tuple)) or not value or len(value) > 64:
        fail("model.feature_levels", value, allowed)
    out = []
    for v in value:
        if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 2 <= v <= 1000:
            fail("model.feature_levels", value, allowed)
        out.append(int(v))
    return tuple(out)


_KEYS = {
    "beta_binomial": {"a", "b"},
    "poisson_gamma": {"alpha", "beta", "upper"},
    "dirichlet_multinomial": {"alpha"},
    "normal_known_sd": {"sd", "lo", "hi", "prior_mean", "prior_sd"},
    "naive_bayes_loglinear": {"class_levels", "feature_levels", "alpha"},
    "linear_regression": {"p", "x_mean", "x_cov", "sigma", "lo", "hi", "prior_sd", "sigma_prior"},
}


def make_model(name: str, params: Mapping[str, Any]):
    """Build a model from its spec table (``[model]``): ``n`` plus the model's prior keys."""
    from .validation import choice

    params = dict(params)
    params.pop("name", None)
    choice("model.name", name, MODEL_NAMES)
    if "n" not in params:
        fail("model.n", None, "is required: the number of confidential records, an integer >= 1")
    n = positive_int("model.n", params.pop("n"), 1, MAX_N)
    unknown = set(params) - _KEYS[name]
    if unknown:
        key = sorted(unknown)[0]
        fail(f"model.{key}", params[key], f"is not a key of {name}; allowed: n, " + ", ".join(sorted(_KEYS[name])))
    if name == "beta_binomial":
        return BetaBinomial(n=n, a=positive("model.a", params.get("a", 1.0)), b=positive("model.b", params.get("b", 1.0)))
    if name == "poisson_gamma":
        upper = params.get("upper")
        if upper is not None:
            upper = positive_int("model.upper", upper, 1, 100_000)
        return PoissonGamma(n=n, alpha=positive("model.alpha", params.get("alpha", 1.0)),
                            beta=positive("model.beta", params.get("beta", 1.0)), upper=upper)
    if name == "dirichlet_multinomial":
        alpha = number_list("model.alpha", params.get("alpha", [1.0, 1.0, 1.0]))
        if alpha.size < 2 or alpha.size > 64 or (alpha <= 0).any():
            fail("model.alpha", params.get("alpha"), "must be a list of 2 to 64 numbers > 0 (one per cell)")
        return DirichletMultinomial(n=n, alpha=tuple(float(a) for a in alpha))
    if name == "naive_bayes_loglinear":
        d = MODEL_INFO["naive_bayes_loglinear"]["prior"]
        levels = positive_int("model.class_levels", params.get("class_levels", d["class_levels"]), 2, 1000)
        features = _feature_levels(params.get("feature_levels", d["feature_levels"]))
        if levels * sum(features) > 100_000:
            fail("model.feature_levels", list(features), f"with class_levels = {levels} the tables would have "
                 f"{levels * sum(features)} cells; at most 100000")
        return NaiveBayesLoglinear(n=n, class_levels=levels, feature_levels=features,
                                   alpha=positive("model.alpha", params.get("alpha", d["alpha"])))
    if name == "linear_regression":
        return _make_regression(n, params)
    d = MODEL_INFO["normal_known_sd"]["prior"]
    sd = positive("model.sd", params.get("sd", d["sd"]))
    lo = finite("model.lo", params.get("lo", d["lo"]))
    hi = finite("model.hi", params.get("hi", d["hi"]))
    if not hi > lo:
        fail("model.hi", hi, f"must be greater than model.lo = {lo}")
    return NormalKnownSD(n=n, sd=sd, lo=lo, hi=hi, prior_mean=finite("model.prior_mean", params.get("prior_mean", d["prior_mean"])),
                         prior_sd=positive("model.prior_sd", params.get("prior_sd", d["prior_sd"])))


MAX_P = 10


def _make_regression(n: int, params: Mapping[str, Any]) -> LinearRegression:
    """linear_regression's keys: p (1..10), x_mean (p numbers), x_cov (p x p symmetric positive
    definite), sigma > 0, lo / hi (a number or p + 1 numbers, columns x1..xp, y; lo < hi), prior_sd > 0,
    sigma_prior = {a, b} (both > 0; replaces sigma: sigma^2 ~ InvGamma(a, b) becomes a parameter)."""
    d = MODEL_INFO["linear_regression"]["prior"]
    p = positive_int("model.p", params.get("p", d["p"]), 1, MAX_P)
    if "x_mean" in params:
        x_mean = number_list("model.x_mean", params["x_mean"], p)
    else:
        x_mean = np.asarray(d["x_mean"] if p == 2 else np.zeros(p), float)
    x_cov = _covariance(params.get("x_cov", np.eye(p).tolist()), p)
    sigma = positive("model.sigma", params.get("sigma", d["sigma"]))
    sigma_prior = None
    if "sigma_prior" in params:
        sp = params["sigma_prior"]
        if "sigma" in params:
            fail("model.sigma", params["sigma"], "is not used with model.sigma_prior (sigma^2 is then a parameter "
                 "with that inverse-gamma prior); give one of them")
        if not isinstance(sp, Mapping) or set(sp) != {"a", "b"}:
            fail("model.sigma_prior", sp, "must be a table { a = .., b = .. }: the InvGamma(shape a, scale b) prior "
                 "on sigma^2, both > 0")
        sigma_prior = (positive("model.sigma_prior.a", sp["a"]), positive("model.sigma_prior.b", sp["b"]))
    bounds = {}
    for key in ("lo", "hi"):
        v = params.get(key, d[key])
        if isinstance(v, (list, tuple, np.ndarray)):
            arr = number_list(f"model.{key}", v, p + 1)
        else:
            arr = np.full(p + 1, finite(f"model.{key}", v))
        bounds[key] = arr
    cols = [f"x{j + 1}" for j in range(p)] + ["y"]
    for c, (a, b) in enumerate(zip(bounds["lo"], bounds["hi"])):
        if not b > a:
            fail("model.hi", params.get("hi", d["hi"]), f"must be greater than model.lo in every column "
                 f"(columns {', '.join(cols)}); column {cols[c]} has lo = {a:g}, hi = {b:g}")
    return LinearRegression(n=n, p=p, x_mean=tuple(float(v) for v in x_mean),
                            x_cov=tuple(tuple(float(v) for v in row) for row in x_cov), sigma=sigma,
                            lo=tuple(float(v) for v in bounds["lo"]), hi=tuple(float(v) for v in bounds["hi"]),
                            prior_sd=positive("model.prior_sd", params.get("prior_sd", d["prior_sd"])),
                            sigma_prior=sigma_prior)


def _covariance(value, p: int) -> np.ndarray:
    allowed = f"must be a symmetric positive definite {p} x {p} matrix, a list of {p} rows of {p} numbers"
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != p:
        fail("model.x_cov", value, allowed)
    rows = []
    for row in value:
        if not isinstance(row, (list, tuple, np.ndarray)) or len(row) != p:
            fail("model.x_cov", value, allowed)
        rows.append(number_list("model.x_cov", list(row), p))
    m = np.array(rows)
    if not np.allclose(m, m.T, rtol=1e-9, atol=1e-12):
        fail("model.x_cov", value, allowed + " (it is not symmetric)")
    if np.linalg.eigvalsh(m).min() <= 1e-12 * max(1.0, float(np.abs(m).max())):
        fail("model.x_cov", value, allowed + " (it is not positive definite)")
    return m


def log_beta_binomial_pmf(s, n, a, b):
    """log BetaBinomial(s; n, a, b), the prior predictive of the number of ones."""
    s = np.asarray(s, float)
    return (special.gammaln(n + 1) - special.gammaln(s + 1) - special.gammaln(n - s + 1)
            + special.betaln(a + s, b + n - s) - special.betaln(a, b))
