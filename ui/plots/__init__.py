"""Pure figure builders: engine Results (or tidy sweep tables) in, ``plotly.graph_objects.Figure`` out.

Nothing in this package touches streamlit or the engine's samplers; tests build Results by hand and
inspect ``fig.to_dict()``. Every trace carries ``meta = {"kind": ..., "method": ..., "param": ...}`` so
a test (or a reader of the exported HTML) can tell what a curve is without relying on colours. Colours
come from :mod:`ui.palette`. From the bottom up:

``axes``         what a parameter is (axis titles, picker labels), method names, the panel grid
``kde``          how a marginal is drawn from a result: its own grid density, a KDE or a histogram
``posteriors``   the Compare page: marginal posteriors, methods overlaid; the posterior pmf of n
``diagnostics``  the Diagnostics page: trace, rank and acceptance per chain; Monte Carlo EM's path
``budget``       the Privacy budget page: interval and sd against the privacy budget
"""
