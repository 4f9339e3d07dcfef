"""Keep every page behind the router in ``app.py``.

Streamlit still supports its older multipage mode, in which any ``pages/`` directory next to the
main script is a set of pages served directly. ``st.navigation`` switches that mode off for the
whole server process, but only once ``app.py`` has run: on a freshly started server, a first
visit to a deep link such as ``/privacy_budget`` is served straight from ``pages/``, without the
router's navigation, page config or page titles.

``app.py`` runs the selected page inside :func:`routed`; a page calls :func:`ensure_routed` first,
and when it finds itself running outside the router it runs ``app.py`` (which opens the same page
through ``st.navigation``, since the URL path is the file's name) and stops the direct run.

:func:`history_navigation` says whether the browser's Back or Forward asked for this run: only then does a URL
other than the one the app last wrote hold the user's intent (ui.sidebar.state, ui.picker, the Privacy budget page).
"""
from __future__ import annotations

import runpy
import threading
from contextlib import contextmanager
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["routed", "ensure_routed", "history_navigation"]

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


def history_navigation() -> bool:
    """Whether the browser's Back or Forward asked for this run.

    The browser sends its URL with every rerun it asks for. After a change, the page writes the new scenario into
    the URL; a second change sent before the browser has that write carries the URL from before the first, and a
    rerun of that kind is an edit, not Back: its widgets win and the URL is written again. Streamlit's frontend marks
    the reruns its ``popstate`` handler sends (``ClientState.is_history_navigation``, on the run's context in the
    Streamlit this lab pins); a rerun with the flag and a URL the page did not last write is Back or Forward. A
    coalesced rerun keeps the flag of the newest request (an edit made while Back's run is pending is an edit).
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    return bool(ctx is not None and getattr(ctx, "is_history_navigation", False))
