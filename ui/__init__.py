"""Streamlit-side helpers of DP Posterior Lab. Layers point down: ``pages/`` on top, then the streamlit
modules, then the pure ones; no module imports one above it.

Pure (no streamlit; tests call them directly): ``keys`` (session-state names), ``params`` (widget
values <-> spec dict <-> query string), ``tables`` (display tables and exports), ``narrative`` (the
sentences over the figures), ``presets`` (the demo and the guided examples) and ``warmup``. The figures
themselves (``Result -> plotly Figure``), their colours, labels and PNG export are the package
``figures``, one floor down, which the study command of the CLI draws with too.

Streamlit: ``compute`` (cached engine wrappers), ``studies`` (the Calibration page's), ``sidebar`` (the
shared scenario widgets), ``picker``, ``downloads`` and ``routing``. Session state is touched only by
``sidebar``, ``picker`` and ``studies``, through the names in ``keys``.
"""
