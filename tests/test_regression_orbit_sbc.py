"""linear_regression's orbit moves (issue 23, :mod:`engine.kernels.orbit`; method key ``orbit_moves``):
simulation-based calibration, 300 replicates per case, the naive posterior as the negative control. The kernel's
pieces, agreement with long runs and the settings are in test_regression_orbit.py.
"""
from __future__ import annotations

import pytest

from engine.methods import da_mcmc as da_module
from engine.methods.da_mcmc import da_mcmc
from engine.models import make_model
from test_regression_fast import CLAMPED_SIGMA, DESIGN, _sbc


@pytest.mark.parametrize("design, n, epsilon, m, k, thin, delayed", [
    (DESIGN, 10, 1.0, 3, 10, 40, None), (DESIGN, 100, 5.0, 5, 30, 40, 1.0), (DESIGN, 500, 5.0, 50, 10, 10, None),
    (CLAMPED_SIGMA, 100, 5.0, 10, 10, 30, 0.0)],
    ids=["n=10", "n=100 delayed", "n=500", "sigma2 n=100 one stage"])
def test_sbc_with_orbit_moves(design, n, epsilon, m, k, thin, delayed, monkeypatch):
    """300 replicates, level 0.001 per coordinate, with partial sweeps and orbit moves (with sigma^2 a
    parameter and about 20% of y clamped too); the naive posterior must be rejected somewhere (p < 1e-4), or
    the test has no power. ``delayed``: ORBIT_DA_CLAMPED for the run (1: the delayed acceptance always on, 0:
    always off; None: the default, on for the replicates with few clamped records). At n = 100 with 30 moves and
    5 records an iteration the moves carry the chain: there, with the delayed acceptance's correction left out
    (the second stage's ratio alone), every coordinate fails at p < 1e-5; thinned by 10 instead of 40 the right
    chain fails too (p = 4e-5: its first stage ignores clamping, which costs mixing here), one stage does not.
    At n = 10 thinning by 20 was too little for one of two release seeds (p = 2e-4 for beta[2]; by 40 and 60
    both pass)."""
    if delayed is not None:
        monkeypatch.setattr(da_module, "ORBIT_DA_CLAMPED", delayed)

    def run(problem, rng):
        res = da_mcmc(problem, rng, chains=1, draws=19 * thin, warmup=300, parallel=False, records_per_iteration=m,
                      orbit_moves=k)
        return res.draws[0, thin - 1::thin, :]

    pv, pn = _sbc(n, epsilon, run, seed=2041, design=design)
    assert len(pv) == len(make_model("linear_regression", {"n": n, **design}).param_names)
    assert min(pv) > 0.001, pv
    assert min(pn) < 1e-4, pn
