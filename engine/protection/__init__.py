"""What epsilon protects: the privacy side of the trade-off, computed exactly per mechanism.

=============================  ==============================================================
module                         holds
=============================  ==============================================================
:mod:`.pairs`                  the neighbouring pair at the sensitivity, for every model (replace-one;
                               add/remove-one for an unknown n)
:mod:`.tradeoff`               the Neyman–Pearson trade-off curve of each noise law, clipped releases, the
                               guarantees' curves (eps-DP, mu-GDP, rho-zCDP)
:mod:`.lattice`                several independent coordinates: the curve between an optimistic and a
                               pessimistic product on a loss lattice (the stated ``max_error``)
:mod:`.realistic`              the model-and-prior adversary: P(record = v | s_dp) against the prior
:mod:`.report`                 ``engine.risk(problem_or_spec)``: everything as one plain dict
                               (risk.json); it sits above :mod:`engine.api` and is not imported here
=============================  ==============================================================

The package is named for what it answers, not ``risk``, so that ``engine.risk`` is the function.
"""
from .realistic import REALISTIC_MODELS, realistic_adversary
from .tradeoff import (RISK_MODELS, FiniteExperiment, GaussianExperiment, Neighbours, alpha_grid, epsilon_dp_ceiling,
                       epsilon_dp_tradeoff, experiment, gdp_tradeoff, laplace_tradeoff, neighbours, zcdp_delta,
                       zcdp_tradeoff)

__all__ = ["REALISTIC_MODELS", "RISK_MODELS", "FiniteExperiment", "GaussianExperiment", "Neighbours", "alpha_grid",
           "epsilon_dp_ceiling", "epsilon_dp_tradeoff", "experiment", "gdp_tradeoff", "laplace_tradeoff", "neighbours",
           "realistic_adversary", "zcdp_delta", "zcdp_tradeoff"]
