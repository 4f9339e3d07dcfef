"""The one result type every method returns.

A :class:`Result` holds posterior draws shaped ``(chain, draw, parameter)`` in the ArviZ
layout (``posterior`` / ``sample_stats`` / ``observed_data``), per-draw sampler statistics,
free-form run information and, for the closed-form method, the marginal densities on a grid.
Conversion to ``arviz.InferenceData`` lives in :mod:`engine.numerics.diagnostics` (one adapter module).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from .validation import instance

__all__ = ["Result", "Problem", "expect_result", "expect_problem"]


def _frozen_mapping(d: Mapping | None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Result:
    """Posterior draws from one method.

    Attributes
    ----------
    method : str
        The method that drew them: ``naive``, ``da_mcmc``, ``abc_rejection``, ``ops``, ``exact``,
        ``pseudo_marginal``, ``auto`` (``info["picked"]`` says which exact method ran), ``rjmcmc`` (n unknown: an
        ``n`` column), ``bernstein_sheldon`` (approximate), ``mcem`` (a point estimate, not draws:
        ``info["estimator"]``) or ``confidential`` (the posterior given the confidential records, available in
        simulation mode).
    param_names : tuple of str
        Column names, e.g. ``("theta",)`` or ``("p[0]", "p[1]", "p[2]", "p[3]")``.
    draws : ndarray, shape (chain, draw, len(param_names))
    sample_stats : mapping of str to ndarray of shape (chain, draw)
        DA-MCMC records ``acceptance_rate`` (mean Metropolis acceptance probability of the
        record sweep, the quantity bounded below by exp(-epsilon) in Ju et al. 2022,
        Prop. 3.1), ``accepted_fraction`` (share of records whose proposal was accepted) and
        ``lp`` is not recorded (the marginal likelihood is intractable).
    s_dp : ndarray
        The privatized release the draws condition on.
    info : mapping
        ``wall_time_s`` always; method-specific entries are documented by each method.
    density : mapping of parameter name to (grid, pdf), optional
        Marginal posterior densities on a grid (``exact`` and conjugate methods).
    """

    method: str
    param_names: tuple[str, ...]
    draws: np.ndarray
    s_dp: np.ndarray
    sample_stats: Mapping[str, np.ndarray] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)
    density: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None

    def __post_init__(self):
        draws = np.asarray(self.draws, dtype=float)
        if draws.ndim != 3 or draws.shape[2] != len(self.param_names):
            raise ValueError(
                f"draws: shape {draws.shape} does not match (chain, draw, {len(self.param_names)})"
            )
        draws.setflags(write=False)
        object.__setattr__(self, "draws", draws)
        object.__setattr__(self, "s_dp", np.asarray(self.s_dp, dtype=float))
        object.__setattr__(self, "sample_stats", _frozen_mapping(self.sample_stats))
        object.__setattr__(self, "info", _frozen_mapping(self.info))
        if self.density is not None:
            object.__setattr__(self, "density", _frozen_mapping(self.density))

    def __reduce__(self):
        # mappingproxy fields do not pickle; rebuild from plain dicts (st.cache_data, dask, multiprocessing)
        return (Result, (self.method, self.param_names, np.array(self.draws), np.array(self.s_dp),
                         dict(self.sample_stats), dict(self.info),
                         None if self.density is None else dict(self.density)))

    @property
    def n_chains(self) -> int:
        return self.draws.shape[0]

    @property
    def n_draws(self) -> int:
        return self.draws.shape[1]

    def flat(self, name: str) -> np.ndarray:
        """All draws of one parameter, chains concatenated."""
        return self.draws[:, :, self.param_names.index(name)].reshape(-1)


@dataclass(frozen=True)
class Problem:
    """A prepared scenario: model, mechanism and the release to condition on.

    ``records`` and ``true_params`` are present only when the confidential data are known
    (simulation or CSV upload); ``ops`` and the confidential-data posterior need them.

    ``unknown_n`` (an :class:`engine.models.sample_size.UnknownSize`: prior on n, size mechanism, n_dp) is
    set when the sample size is private; ``model.n`` is then the naive plug-in round(n_dp), which
    methods that need a known n use, and ``true_params["n"]`` is the true size when it is known.
    """

    model: Any
    mechanism: Any
    s_dp: np.ndarray
    records: np.ndarray | None = None
    true_params: Mapping[str, Any] | None = None
    unknown_n: Any = None

    def __post_init__(self):
        s = np.asarray(self.s_dp, dtype=float)
        s.setflags(write=False)
        object.__setattr__(self, "s_dp", s)
        bind = getattr(self.mechanism, "bind_release", None)
        if bind is not None:  # a clipped release: its likelihood depends on which side of the bounds s_dp sits
            object.__setattr__(self, "mechanism", bind(s))
        if self.records is not None:
            r = np.array(self.records)
            r.setflags(write=False)
            object.__setattr__(self, "records", r)
        if self.true_params is not None:
            object.__setattr__(self, "true_params", _frozen_mapping(self.true_params))

    def __reduce__(self):
        return (Problem, (self.model, self.mechanism, np.array(self.s_dp),
                          None if self.records is None else np.array(self.records),
                          None if self.true_params is None else dict(self.true_params), self.unknown_n))


def expect_result(value: Any, field: str = "result") -> Result:
    """``value`` when it is a :class:`Result`, else a ``ValueError`` naming ``field``: the library functions that
    read a run's draws (``engine.summary``, ``write_outputs``, ...) raised AttributeError on anything else."""
    return instance(field, value, Result, "must be an engine Result (what engine.run or engine.run_method returns)")


def expect_problem(value: Any, field: str = "problem") -> Problem:
    """``value`` when it is a :class:`Problem`, else a ``ValueError`` naming ``field`` (as :func:`expect_result`)."""
    return instance(field, value, Problem, "must be a prepared Problem (what engine.prepare returns)")
