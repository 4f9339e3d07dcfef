"""Figures: every plotly figure of the lab, built by pure functions (results or tidy tables in,
``plotly.graph_objects.Figure`` out), for both front ends: the app's pages and ``python -m engine study``.

Nothing here imports streamlit; only :mod:`.studies` imports the engine (its study tables' summaries),
so the package sits above ``engine/studies`` and below the command line and the app (ARCHITECTURE.md).
Tests build results by hand and inspect ``fig.to_dict()``. Every trace carries
``meta = {"kind": ..., "method": ..., "param": ...}`` so a test (or a reader of the exported HTML) can
tell what a curve is without relying on colours. From the bottom up:

``labels``       what the lab calls each method, model, mechanism and choice, in words
``palette``      one colour per method, the same on every page and in every export
``export``       PNG export through kaleido and Debian's Chromium
``axes``         what a parameter is (axis titles, picker labels), method names, the panel grid
``kde``          how a marginal is drawn from a result: its own grid density, a KDE or a histogram
``posteriors``   the Compare page: marginal posteriors, methods overlaid; the posterior pmf of n
``diagnostics``  the Diagnostics page: trace, rank and acceptance per chain; Monte Carlo EM's path
``budget``       the Privacy budget page: interval and sd against the privacy budget
``studies``      the Calibration page and the study command: ECDF, KS, coverage, SBC, MMD, the presets
"""
