"""User-defined models: the four pieces of a dapper privacy model (Eng et al., Section 4).

A :class:`CustomModel` is built from plain Python callables:

* ``latent_sampler(rng, theta, size)`` -> ``size`` records drawn from f(. | theta) (first axis = records);
* ``posterior_sampler(rng, records, theta)`` -> a new theta (one value per name of ``param_names``) from a
  Markov kernel that leaves p(theta | x) invariant (Ju et al. 2022, Assumption 1; an exact conjugate draw
  qualifies);
* ``record_statistic(records)`` -> per-record contributions t(x_i), shape (size, m) (or (size,) when m = 1),
  so that s(x) = sum_i t(x_i) (record additivity, Assumption 2); m is the length of the release ``s_dp``;
* ``log_mechanism(s_dp, s)`` -> log eta(s_dp | s) up to a constant, one number, -inf where s cannot give
  s_dp. When omitted, the problem's engine mechanism supplies it; when both are given, ``log_mechanism`` is
  used, and ``abc_rejection`` (which accepts by the engine mechanism, whose maximum it knows) checks that
  the two differ by a constant at every statistic it draws.

Optional: ``prior_sampler(rng, size)`` -> ``size`` prior draws, shape (size, k) (ABC rejection; the
pseudo-marginal sampler starts its chains there), ``log_prior(theta)`` -> log p(theta) up to a constant,
-inf outside the support (the pseudo-marginal sampler, which needs the prior density), and ``epsilon``, the
mechanism's pure epsilon-DP guarantee, for DA-MCMC's acceptance bound exp(-epsilon) (Prop. 3.1).

DA-MCMC then runs Algorithm 1 in plain Python (:class:`PythonRunner`): correct for any model,
a few microseconds per record (the pieces' own Python calls) instead of nanoseconds, so keep n moderate.
The built-in models use the same interface for the pure-Python reference in the tests.

Every piece is checked where it is used: a piece whose signature cannot take its arguments is refused when
the model is built; a call that raises, or returns the wrong shape, a non-finite value or (for
``log_mechanism`` and ``log_prior``) NaN or +inf, raises a ``ValueError`` naming the piece, what it returned
and what is allowed. ``record_statistic`` is checked for record additivity once per chain, on the first
records drawn: t of the first record alone and of the others must equal their rows of t of all records.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.validation import fail, positive, positive_int, shown_value

__all__ = ["CustomModel", "PythonRunner", "log_eta_function"]

#: each piece's positional arguments, in order
SIGNATURES = {
    "latent_sampler": ("rng", "theta", "size"),
    "posterior_sampler": ("rng", "records", "theta"),
    "record_statistic": ("records",),
    "log_mechanism": ("s_dp", "s"),
    "prior_sampler": ("rng", "size"),
    "log_prior": ("theta",),
}
_OPTIONAL = ("log_mechanism", "prior_sampler", "log_prior")


def _check_signature(piece: str, fn) -> None:
    """Refuse a callable that cannot be called with its piece's positional arguments (a callable without an
    inspectable signature, such as a numpy ufunc, is checked when first called)."""
    args = SIGNATURES[piece]
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*args)
    except TypeError:
        fail(f"model.{piece}", fn, f"its signature {sig} cannot take the {len(args)} positional arguments "
             f"{piece}({', '.join(args)})")


def _call(piece: str, fn, *args):
    """fn(*args), with an exception raised inside a user's piece turned into a ValueError that names it."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - any failure of user code is reported with the piece's name
        fail(f"model.{piece}", fn, f"calling {piece}({', '.join(SIGNATURES[piece])}) raised "
             f"{type(exc).__name__}: {exc}")


def _numbers(piece: str, fn, value, what: str) -> np.ndarray:
    """``value`` as a float array, or a ValueError naming the piece when it is not numbers."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        fail(f"model.{piece}", fn, f"it returned {shown_value(value)}; it must return {what} (numbers)")


def _one_number(piece: str, fn, value, at: str) -> float:
    """A log density's value: one number (a size-1 array is taken), never NaN or +inf; -inf is allowed."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        arr = _numbers(piece, fn, value, "one number")
        if arr.size != 1:
            fail(f"model.{piece}", fn, f"it returned an array of shape {arr.shape} {at}; it must return one "
                 "number (a log density summed over the statistic's entries)")
        v = float(arr.reshape(-1)[0])
    if math.isnan(v) or v == math.inf:
        fail(f"model.{piece}", fn, f"it returned {v} {at}; it must return a finite number, or -inf where the "
             "density is zero")
    return v


def log_eta_function(problem) -> Callable[[np.ndarray], float]:
    """s -> log eta(s_dp | s) for a custom model: ``model.log_mechanism`` when given, else the engine mechanism's
    ``log_prob``; a value that is not one number, NaN or +inf raises a ValueError naming the piece."""
    model, sdp = problem.model, problem.s_dp
    if not np.all(np.isfinite(sdp)):
        fail("s_dp", sdp.tolist(), "must be finite numbers, one per entry of the custom model's statistic")
    if model.log_mechanism is not None:
        fn, piece = model.log_mechanism, "log_mechanism"
    elif problem.mechanism is not None:
        fn, piece = problem.mechanism.log_prob, "mechanism.log_prob"
    else:
        fail("mechanism", None, "a custom model needs model.log_mechanism or an engine mechanism")

    def log_eta(s):
        try:
            v = fn(sdp, s)
        except Exception as exc:  # noqa: BLE001
            fail(f"model.{piece}", fn, f"calling it at s_dp = {sdp.tolist()}, s = {np.asarray(s).tolist()} raised "
                 f"{type(exc).__name__}: {exc}")
        if isinstance(v, float) and v == v and v != math.inf:  # the usual case (a float or numpy float64), fast
            return v
        return _one_number(piece, fn, v, f"at s = {np.asarray(s).tolist()}")

    return log_eta


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
        object.__setattr__(self, "n", positive_int("model.n", self.n, 1))
        names = self.param_names
        if isinstance(names, str) or not isinstance(names, (tuple, list)) or not names or \
                not all(isinstance(p, str) and p for p in names) or len(set(names)) != len(names):
            fail("model.param_names", names, "must be a tuple of distinct, non-empty names, one per parameter, "
                 "e.g. ('theta',)")
        object.__setattr__(self, "param_names", tuple(names))
        for f in ("latent_sampler", "posterior_sampler", "record_statistic") + _OPTIONAL:
            fn = getattr(self, f)
            if fn is None and f in _OPTIONAL:
                continue
            if not callable(fn):
                fail(f"model.{f}", fn, "must be a callable" + (" or None" if f in _OPTIONAL else ""))
            _check_signature(f, fn)
        try:
            init = np.asarray(self.init_theta, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            init = None
        if init is None or np.ndim(self.init_theta) != 1 or init.size != len(self.param_names) \
                or not np.all(np.isfinite(init)):
            fail("model.init_theta", self.init_theta, f"needs one finite value per parameter {self.param_names}")
        object.__setattr__(self, "init_theta", tuple(float(v) for v in init))
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", positive("model.epsilon", self.epsilon))

    true_sensitivity = None

    @property
    def k(self) -> int:
        return len(self.param_names)

    def bind(self, problem) -> "PythonRunner":
        return PythonRunner(problem)

    def draw_records(self, rng, theta, size=None) -> np.ndarray:
        """latent_sampler(rng, theta, size), checked: ``size`` records along the first axis."""
        size = self.n if size is None else size
        x = np.asarray(_call("latent_sampler", self.latent_sampler, rng, theta, size))
        if x.ndim == 0 or x.shape[0] != size:
            fail("model.latent_sampler", self.latent_sampler, f"it returned an array of shape {x.shape} for "
                 f"size = {size} at theta = {np.asarray(theta).tolist()}; it must return size records along "
                 "the first axis")
        return x

    def contributions(self, records, width=None) -> np.ndarray:
        """record_statistic(records), checked: shape (records, m) of finite numbers (m = ``width`` when
        given: the release's length)."""
        k = len(records)
        t = _call("record_statistic", self.record_statistic, records)
        t = _numbers("record_statistic", self.record_statistic, t, "one row of contributions per record")
        if t.ndim == 1 and t.shape[0] == k:
            t = t[:, None]
        if t.ndim != 2 or t.shape[0] != k:
            fail("model.record_statistic", self.record_statistic, f"it returned shape {t.shape} for {k} records; "
                 f"it must return one row per record, shape ({k}, m), or ({k},) when m = 1")
        if width is not None and t.shape[1] != width:
            fail("model.record_statistic", self.record_statistic, f"it returns m = {t.shape[1]} entries per record "
                 f"and s_dp has {width}: the statistic needs one entry per released number")
        if not np.all(np.isfinite(t)):
            fail("model.record_statistic", self.record_statistic, f"it returned {shown_value(t.tolist())}; "
                 "contributions must be finite")
        return t

    def check_additive(self, records, t) -> None:
        """Record additivity (Ju et al. 2022, Assumption 2): t(x_1) alone and t(x_2..x_n) must equal the rows of
        t(x_1..x_n). A statistic of the whole database (a mean, a median) divided among the records fails."""
        parts = [(slice(0, 1), self.contributions(records[:1]))]
        if len(records) > 1:
            parts.append((slice(1, None), self.contributions(records[1:])))
        for rows, alone in parts:
            together = t[rows]
            if alone.shape != together.shape or not np.allclose(alone, together, rtol=1e-9,
                                                                  atol=1e-12 * (1.0 + np.abs(together).max())):
                fail("model.record_statistic", self.record_statistic, "it is not record-additive: the "
                     f"contributions of records {rows.start}.. computed alone, {shown_value(alone.tolist())}, "
                     f"differ from the same rows computed with all {len(records)} records, "
                     f"{shown_value(together.tolist())}; t(x_i) must depend on record i only, s(x) = sum_i t(x_i)")

    def draw_theta(self, rng, records, theta) -> np.ndarray:
        """posterior_sampler(rng, records, theta), checked: one finite value per parameter."""
        out = _call("posterior_sampler", self.posterior_sampler, rng, records, theta)
        th = _numbers("posterior_sampler", self.posterior_sampler, out, "one value per parameter").reshape(-1)
        if th.size != self.k or not np.all(np.isfinite(th)):
            fail("model.posterior_sampler", self.posterior_sampler, f"it returned {shown_value(th.tolist())} at "
                 f"theta = {np.asarray(theta).tolist()}; it must return one finite value per parameter "
                 f"{self.param_names}")
        return th

    def sample_statistic(self, rng, theta):
        """s(x) for one database per row of theta (used by ABC rejection)."""
        return np.asarray([self.contributions(self.draw_records(rng, th)).sum(axis=0) for th in theta])

    def sample_prior(self, rng, size):
        if self.prior_sampler is None:
            fail("model.prior_sampler", None, "abc_rejection needs a prior sampler, prior_sampler(rng, size)")
        out = _call("prior_sampler", self.prior_sampler, rng, size)
        draws = _numbers("prior_sampler", self.prior_sampler, out, f"{size} draws of {self.k} parameters")
        if draws.size != size * self.k or not np.all(np.isfinite(draws)):
            fail("model.prior_sampler", self.prior_sampler, f"it returned {shown_value(draws.tolist())} (shape "
                 f"{draws.shape}) for size = {size}; it must return size finite draws of the {self.k} "
                 f"parameters {self.param_names}, shape ({size}, {self.k})")
        return draws.reshape(size, self.k)

    def log_prior_at(self, theta) -> float:
        """log_prior(theta), checked: one number, -inf outside the support, never NaN or +inf."""
        v = _call("log_prior", self.log_prior, theta)
        return _one_number("log_prior", self.log_prior, v, f"at theta = {np.asarray(theta).tolist()}")


@dataclass
class _State:
    x: np.ndarray
    t: np.ndarray
    s: np.ndarray
    theta: np.ndarray


class PythonRunner:
    """Algorithm 1 of Ju et al. (2022) in plain Python for a :class:`CustomModel`.

    An iteration draws theta | x from ``posterior_sampler``, proposes a fresh record x_i' ~ f(. | theta) for each
    i and accepts it with probability min(1, eta(s_dp | s - t(x_i) + t(x_i')) / eta(s_dp | s)). A proposal to a
    statistic where eta is zero (log eta = -inf) is rejected. A chain whose records still give eta = 0 after a
    whole sweep has never conditioned on the release (its theta draws would be those of p(theta | x) at records
    the release rules out), so it stops with a ValueError rather than return such draws."""

    def __init__(self, problem):
        self.problem = problem
        self._log_eta = log_eta_function(problem)
        self._width = problem.s_dp.size

    def _t(self, records):
        return self.problem.model.contributions(records, self._width)

    def init_state(self, rng) -> _State:
        model = self.problem.model
        theta = np.asarray(model.init_theta, float)
        x = model.draw_records(rng, theta)
        t = self._t(x)
        model.check_additive(x, t)
        return _State(x=x.copy(), t=t, s=t.sum(axis=0), theta=theta)

    def _proposals(self, rng, st: _State) -> np.ndarray:
        props = self.problem.model.draw_records(rng, st.theta)
        if props.shape[1:] != st.x.shape[1:] or not np.can_cast(props.dtype, st.x.dtype, "same_kind"):
            model = self.problem.model
            fail("model.latent_sampler", model.latent_sampler, f"it returned records of shape {props.shape[1:]} and "
                 f"dtype {props.dtype} at theta = {st.theta.tolist()}, where the chain's first records had "
                 f"{st.x.shape[1:]} and {st.x.dtype}; every call must return records of one shape and kind")
        return props

    def advance(self, rng, st: _State, n_iter, out_theta, out_acc, out_frac) -> None:
        model = self.problem.model
        n = model.n
        cur = -math.inf
        for it in range(n_iter):
            st.theta = model.draw_theta(rng, st.x, st.theta)
            out_theta[it] = st.theta
            props = self._proposals(rng, st)
            tp = self._t(props)
            u = rng.random(n)
            cur = self._log_eta(st.s)
            asum, nacc = 0.0, 0
            for i in range(n):
                s_new = st.s - st.t[i] + tp[i]
                new = self._log_eta(s_new)
                lr = new - cur
                al = 0.0 if new == -math.inf else (1.0 if lr >= 0 else math.exp(lr))
                asum += al
                if u[i] < al:
                    st.x[i] = props[i]
                    st.t[i] = tp[i]
                    st.s = s_new
                    cur = new
                    nacc += 1
            out_acc[it] = asum / n
            out_frac[it] = nacc / n
        if n_iter and cur == -math.inf:
            fail("s_dp", self.problem.s_dp.tolist(), f"log eta(s_dp | s) is -inf at the chain's statistic s = "
                 f"{st.s.tolist()} after a whole sweep of its records: no single-record move reached a statistic "
                 "that can give the release. Check model.log_mechanism (log eta(s_dp | s), finite where s can give "
                 "s_dp), or start (model.init_theta) where the release is likely")
