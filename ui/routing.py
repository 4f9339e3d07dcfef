"""Keep every page behind the router in ``app.py``.

Streamlit still supports its older multipage mode, in which any ``pages/`` directory next to the
main script is a set of pages served directly. ``st.navigation`` switches that mode off for the
whole server process, but only once ``app.py`` has run: on a freshly started server, a first
visit to a deep link such as ``/privacy_budget`` is served straight from ``pages/``, without the
router's navigation, page config or page titles.

``app.py`` runs the selected page inside :func:`routed`; a page calls :func:`ensure_routed` first,
and when it finds itself running outside the router it runs ``app.py`` (which opens the same page
through ``st.navigation``, since the URL path is the file's name) and stops the direct run.
"""
from __future__ import annotations

import runpy
import threading
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

__all__ = ["routed", "ensure_routed"]

APP = Path(__file__).resolve().parents[1] / "app.py"
_state = threading.local()  # one Streamlit script run per thread


@contextmanager
def routed():
    """Mark the page run that ``app.py`` starts."""
    _state.active = True
    try:
        yield
    finally:
        _state.active = False


def ensure_routed() -> None:
    """Run the router instead of this page if the page was opened around it."""
    if getattr(_state, "active", False):
        return
    runpy.run_path(str(APP), run_name="__main__")
    st.stop()
