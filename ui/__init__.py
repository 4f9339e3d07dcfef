"""Streamlit-side helpers of DP Posterior Lab.

``keys`` (session-state names), ``params`` (widget values <-> spec dict <-> query string),
``compute`` (cached engine wrappers), ``plots`` (pure ``Result -> plotly Figure`` builders),
``tables`` (pure display tables and exports), ``sidebar`` (the shared scenario widgets) and
``presets`` (the demo and the guided examples). Only ``compute`` and ``sidebar`` touch streamlit
state; ``params``, ``plots`` and ``tables`` are plain functions that tests call directly.
"""
