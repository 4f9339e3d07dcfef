"""Streamlit-side helpers of DP Posterior Lab. Layers point down: ``pages/`` on top, then the streamlit
modules, then the pure ones; no module imports one above it.

Pure (no streamlit; tests call them directly): ``keys`` (session-state names), ``palette``, ``params``
(widget values <-> spec dict <-> query string), ``plots`` and ``study_plots`` (``Result -> plotly
Figure`` builders), ``tables`` (display tables and exports), ``narrative`` (the sentences over the
figures), ``presets`` (the demo and the guided examples), ``export`` (PNG) and ``warmup``.

Streamlit: ``compute`` (cached engine wrappers), ``studies`` (the Calibration page's), ``sidebar`` (the
shared scenario widgets), ``picker``, ``downloads`` and ``routing``. Session state is touched only by
``sidebar``, ``picker`` and ``studies``, through the names in ``keys``.
"""
