"""The naive-Bayes log-linear model (``naive_bayes_loglinear``; Ju et al. 2022, Sec. 4, after Karwa et
al. 2016): records (y, x_1..x_K), s = the K class-by-level tables; the class docstring derives the
sampler pieces and the sensitivity.

:mod:`engine.models` is the registry that names every model, with the table of their records,
statistics, priors and sensitivities.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..core.validation import fail, model_positive, number_list, positive_int, record_field
from .base import Marginal, record_rows

__all__ = ["NaiveBayesLoglinear", "INFO", "KEYS", "build", "feature_levels"]

#: Parameters, prior keys and their defaults (for the spec loader, the README and the app).
INFO = {"params": ("pi", "p"),
        "prior": {"class_levels": 2, "feature_levels": [2, 2], "alpha": 2.0}}
#: The [model] keys besides n.
KEYS = {"class_levels", "feature_levels", "alpha"}


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
    methods = ("da_mcmc", "naive", "pseudo_marginal", "auto")  # the methods that support this model

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
    def param_support(self):
        """Each parameter's range, for drawing its density (figures.kde): every one a probability."""
        return {name: (0.0, 1.0) for name in self.param_names}

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
        r = record_rows(records, cols, field, "integer levels")
        levels = (self.class_levels,) + tuple(self.feature_levels)
        for c, (name, lev) in enumerate(zip(cols, levels)):
            col = r[:, c]
            bad = ~np.isfinite(col) | (col < 0) | (col > lev - 1) | (np.round(col) != col)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                fail(record_field(f"{field} column {name}", i), col[i].item(), f"must be an integer level 0..{lev - 1}")
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
        out = {f"pi[{i}]": Marginal(stats.beta, a_pi[i], a_pi.sum() - a_pi[i]) for i in range(self.class_levels)}
        for k, a in enumerate(a_p):
            for i, row in enumerate(a):
                for j, v in enumerate(row):
                    out[f"p[{k}][{i}][{j}]"] = Marginal(stats.beta, v, row.sum() - v)
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


def _probability_vector(field, value, length):
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != length:
        fail(field, value, f"must be a list of {length} probabilities")
    v = number_list(field, value, length)
    if (v < 0).any() or abs(v.sum() - 1.0) > 1e-6:
        fail(field, list(value), "must be non-negative and sum to 1 (a probability vector)")
    return v / v.sum()


def feature_levels(value) -> tuple:
    """``model.feature_levels`` checked: J_k >= 2 levels per feature, at most 64 features."""
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


def build(n: int, params: Mapping[str, Any]) -> NaiveBayesLoglinear:
    """The model from its [model] table (``n`` already checked by :func:`engine.models.make_model`)."""
    d = INFO["prior"]
    levels = positive_int("model.class_levels", params.get("class_levels", d["class_levels"]), 2, 1000)
    features = feature_levels(params.get("feature_levels", d["feature_levels"]))
    if levels * sum(features) > 100_000:
        fail("model.feature_levels", list(features), f"with class_levels = {levels} the tables would have "
             f"{levels * sum(features)} cells; at most 100000")
    return NaiveBayesLoglinear(n=n, class_levels=levels, feature_levels=features,
                               alpha=model_positive("model.alpha", params.get("alpha", d["alpha"])))
