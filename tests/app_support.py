"""What the AppTest tests share: the app opened headless on a page, optionally from a link."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LANDING = "pages/compare.py"


def open_app(page: str = LANDING, query: Mapping[str, str] | None = None, timeout: float = 120) -> AppTest:
    """The app run once (through its router, with ``query`` as the link's parameters), then switched to
    ``page``. ``timeout`` covers a first run that compiles numba kernels."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page != LANDING:
        at.switch_page(page).run()
    return at
