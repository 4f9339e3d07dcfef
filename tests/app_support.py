"""What the AppTest tests share: the app opened headless on a page, optionally from a link."""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Callable, Mapping

import streamlit
from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import local_script_runner

APP = str(Path(__file__).resolve().parents[1] / "app.py")
LANDING = "pages/compare.py"

# What AppTest redoes for every test that a server does once. A new AppTest scans every installed distribution's
# metadata for Streamlit components (0.4 s), and every run of one compiles app.py and the page again, the magic
# transform included (a new ScriptCache per run): together about a quarter of the AppTest files' time. The
# installed packages do not change while the tests run, and a script's code is kept by its path, size and
# modification time, so what the app runs is unchanged.
manifest_scanner.scan_component_manifests = functools.lru_cache(maxsize=1)(manifest_scanner.scan_component_manifests)
_BYTECODE: dict[tuple, object] = {}
_get_bytecode = ScriptCache.get_bytecode


def _kept_bytecode(self, script_path):
    path = os.path.abspath(script_path)
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size, config.get_option("runner.magicEnabled"))
    if key not in _BYTECODE:
        _BYTECODE[key] = _get_bytecode(self, script_path)
    return _BYTECODE[key]


ScriptCache.get_bytecode = _kept_bytecode


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


def record_downloads(patch, file_names: dict[str, list[str]] | None = None) -> dict[str, list[Callable]]:
    """The data functions of the download buttons the app draws from now on (``patch``: a pytest MonkeyPatch), by
    label, newest last. A deferred download (``data=`` a function, called when the button is clicked) needs the
    server's media file manager, which AppTest does not start: the button then holds no file, and a test calls the
    recorded function itself to see what a click would give. A download given its bytes at once is recorded as a
    function returning them. ``file_names``, where given, collects each button's file name by label (AppTest's
    element does not carry it)."""
    recorded: dict[str, list[Callable]] = {}
    button = DeltaGenerator.download_button

    def recording(self, label, data, *args, **kwargs):
        recorded.setdefault(label, []).append(data if callable(data) else (lambda: data))
        if file_names is not None:
            file_names.setdefault(label, []).append(kwargs.get("file_name", args[0] if args else None))
        return button(self, label, data, *args, **kwargs)

    patch.setattr(DeltaGenerator, "download_button", recording)
    # ``st.download_button`` is the main container's method bound when streamlit was imported, so the class's
    # patch above never sees it (the sweep table's and the calibration tables' buttons went unrecorded)
    main = streamlit.download_button.__self__
    patch.setattr(streamlit, "download_button", functools.partial(recording, main))
    return recorded


def assert_charts_fit_a_phone(at: AppTest) -> None:
    """Every chart on the page has a name for screen readers (``alt``), a title in lines of at most 42 characters
    (figures.axes.wrap: a phone shows it whole) and, where it has a legend, the legend as a row below the plot."""
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        layout = spec["layout"]
        title = (layout.get("title") or {}).get("text") or ""
        assert chart.proto.alt.strip(), title
        assert max(map(len, title.split("<br>"))) <= 42, title
        listed = [t for t in spec["data"] if t.get("showlegend", True) and t.get("name")]
        if listed and layout.get("showlegend") is not False:
            assert layout.get("legend", {}).get("orientation") == "h", (title, layout.get("legend"))


def press_back(at: AppTest, query: Mapping[str, object]) -> AppTest:
    """What the browser does on Back or Forward: the URL moves to ``query`` and a rerun follows, marked as history
    navigation (Streamlit's frontend sends ``is_history_navigation`` from its popstate handler; AppTest has no
    browser history, so its rerun request is built with the flag)."""
    at.query_params.clear()
    at.query_params.update(query)
    real = local_script_runner.RerunData
    local_script_runner.RerunData = functools.partial(real, is_history_navigation=True)
    try:
        return at.run()
    finally:
        local_script_runner.RerunData = real
