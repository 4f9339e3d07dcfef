"""Numerics shared by the methods: the laws and summaries that are not samplers.

=========================  ======================================================================
module                     holds
=========================  ======================================================================
:mod:`.statistic_laws`     the likelihood L(theta) = p(s_dp | theta) of the one-parameter models,
                           on windows of the statistic (FFT for clamped sums)
:mod:`.grid_posterior`     one-parameter posteriors on an adaptive grid
:mod:`.densities`          marginal densities on a grid from draws or closed forms
:mod:`.conjugate`          conjugate posteriors given the statistic (naive, confidential)
:mod:`.rank_diagnostics`   rank-normalised split R-hat and bulk/tail ESS in NumPy
:mod:`.diagnostics`        the convergence verdict, summaries, outputs, the one ArviZ adapter
=========================  ======================================================================
"""
