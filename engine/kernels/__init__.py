"""Compiled kernels: every numba function of the engine, one module per sampler family.

=====================  ==========================================================================
module                 what it compiles
=====================  ==========================================================================
:mod:`.shared`         what two or more families use: the noise log-density, one record's
                       Metropolis move, a category draw, a small Cholesky factor, and the linear
                       regression model's record and statistic
:mod:`.da_mcmc`        the per-record sweeps and chains of DA-MCMC (Ju et al. 2022, Alg. 1) for
                       every built-in model
:mod:`.abc`            ABC rejection's proposal batches (Gong 2020, Alg. 3)
:mod:`.pseudo_marginal` the pseudo-marginal chain and its likelihood estimates (Andrieu & Roberts 2009)
:mod:`.rjmcmc`         the reversible-jump chains for an unknown n (paper 002, Alg. 1)
=====================  ==========================================================================

Kernels work on plain arrays and a ``numpy.random.Generator`` passed in; they import nothing from
the engine but each other. The methods in :mod:`engine.methods` (and the regression model's
statistic in :mod:`engine.models.linear_regression`) call them.
"""
