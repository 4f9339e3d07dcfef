"""User-defined models: the four pieces of a dapper privacy model (Eng et al., Section 4).

A :class:`CustomModel` is built from plain Python callables:

* ``latent_sampler(rng, theta, size)`` -> ``size`` records drawn from f(. | theta) (first axis = records);
* ``posterior_sampler(rng, records, theta)`` -> a new theta from a Markov kernel that leaves
  p(theta | x) invariant (Ju et al. 2022, Assumption 1; an exact conjugate draw qualifies);
* ``record_statistic(records)`` -> per-record contributions t(x_i), shape (size, m), so that
  s(x) = sum_i t(x_i) (record additivity, Assumption 2);
* ``log_mechanism(s_dp, s)`` -> log eta(s_dp | s) up to a constant. When omitted, the problem's
  engine mechanism supplies it.

Optional: ``prior_sampler(rng, size)`` (ABC rejection) and ``log_prior(theta)`` -> log p(theta) up to a
constant, -inf outside the support (the pseudo-marginal sampler, which needs the prior density).

DA-MCMC then runs Algorithm 1 in plain Python (:class:`PythonRunner`): correct for any model,
roughly a microsecond per record instead of nanoseconds, so keep n moderate. The built-in models
use the same interface for the pure-Python reference in the tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.validation import positive_int

__all__ = ["CustomModel", "PythonRunner"]


@dataclass(frozen=True)
class CustomModel:
    """A model given by callables; see the module docstring for each piece's contract."""

    n: int
    param_names: tuple
    latent_sampler: Callable
    posterior_sampler: Callable
    record_statistic: Callable
    init_theta: tuple
    log_mechanism: Callable | None = None
    prior_sampler: Callable | None = None
    epsilon: float | None = None
    log_prior: Callable | None = None
    name: str = field(default="custom")

    def __post_init__(self):
        positive_int("model.n", self.n, 1)
        for f in ("latent_sampler", "posterior_sampler", "record_statistic"):
            if not callable(getattr(self, f)):
                raise ValueError(f"model.{f} = {getattr(self, f)!r} is invalid: must be a callable")
        if len(self.init_theta) != len(self.param_names):
            raise ValueError(f"model.init_theta = {self.init_theta!r} is invalid: needs one value per parameter "
                             f"{tuple(self.param_names)}")
        object.__setattr__(self, "param_names", tuple(self.param_names))

    true_sensitivity = None

    def bind(self, problem) -> "PythonRunner":
        return PythonRunner(problem)

    def sample_statistic(self, rng, theta):
        """s(x) for one database per row of theta (used by ABC rejection)."""
        out = []
        for th in theta:
            recs = self.latent_sampler(rng, th, self.n)
            out.append(np.sum(np.asarray(self.record_statistic(recs), float).reshape(self.n, -1), axis=0))
        return np.asarray(out)

    def sample_prior(self, rng, size):
        if self.prior_sampler is None:
            raise ValueError("model.prior_sampler = None is invalid: abc_rejection needs a prior sampler")
        return np.asarray(self.prior_sampler(rng, size), float).reshape(size, -1)


@dataclass
class _State:
    x: np.ndarray
    t: np.ndarray
    s: np.ndarray
    theta: np.ndarray


class PythonRunner:
    """Algorithm 1 of Ju et al. (2022) in plain Python for a :class:`CustomModel`."""

    def __init__(self, problem):
        self.problem = problem
        model = problem.model
        if model.log_mechanism is not None:
            self._log_eta = lambda s: float(model.log_mechanism(problem.s_dp, s))
        elif problem.mechanism is not None:
            self._log_eta = lambda s: float(problem.mechanism.log_prob(problem.s_dp, s))
        else:
            raise ValueError("mechanism = None is invalid: a custom model needs log_mechanism or an engine mechanism")

    def _t(self, records):
        return np.asarray(self.problem.model.record_statistic(records), float).reshape(len(records), -1)

    def init_state(self, rng) -> _State:
        model = self.problem.model
        theta = np.asarray(model.init_theta, float)
        x = np.asarray(model.latent_sampler(rng, theta, model.n))
        t = self._t(x)
        return _State(x=x.copy(), t=t, s=t.sum(axis=0), theta=theta)

    def advance(self, rng, st: _State, n_iter, out_theta, out_acc, out_frac) -> None:
        model = self.problem.model
        n = model.n
        for it in range(n_iter):
            st.theta = np.asarray(model.posterior_sampler(rng, st.x, st.theta), float).reshape(-1)
            out_theta[it] = st.theta
            props = np.asarray(model.latent_sampler(rng, st.theta, n))
            tp = self._t(props)
            u = rng.random(n)
            cur = self._log_eta(st.s)
            asum, nacc = 0.0, 0
            for i in range(n):
                s_new = st.s - st.t[i] + tp[i]
                new = self._log_eta(s_new)
                lr = new - cur
                al = 1.0 if lr >= 0 else math.exp(lr)
                asum += al
                if u[i] < al:
                    st.x[i] = props[i]
                    st.t[i] = tp[i]
                    st.s = s_new
                    cur = new
                    nacc += 1
            out_acc[it] = asum / n
            out_frac[it] = nacc / n
