"""Every figure with its downloads: a PNG (rendered offline) and a self-contained HTML file.

:func:`chart` replaces ``st.plotly_chart`` on the pages. The PNG is made only when the button is
clicked (a deferred download), by :func:`figures.export.png_bytes`: kaleido driving Debian's chromium,
about 4 s for the first figure of a server process and 0.3 s after that. Where no static export is
possible (no chromium), the button is replaced by a note pointing at the figure's own camera button,
which saves a PNG in the browser (plotly.js's client-side export, also offline). The camera button
is configured to save at twice the screen resolution under the same file name.
"""
from __future__ import annotations

import streamlit as st

from figures import export
from figures.axes import alt_text

__all__ = ["chart", "chart_config", "file_figure", "TOOLBAR_REMOVED"]


def file_figure(fig, for_file=None):
    """A function of no arguments giving the figure a download holds: ``fig`` where ``for_file`` is None,
    ``for_file`` where it is a figure, and where it is a function, its result, made on the first call and kept (the
    PNG and the HTML button share it)."""
    if for_file is None:
        return lambda: fig
    if not callable(for_file):
        return lambda: for_file
    made: list = []

    def resolved():
        if not made:
            made.append(for_file())
        return made[0]

    return resolved


#: plotly's toolbar buttons the figures keep off: a phone shows the toolbar always (no hover), and its eight buttons
#: sat over the figure's title (audit s23: "Laplace noise, scale b = …" unreadable at 390 px); dragging still zooms
#: and a double click still resets, and each button was a Tab stop (eight per figure) for a keyboard reader
TOOLBAR_REMOVED = ["zoom2d", "pan2d", "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"]


def chart_config(name: str, camera: bool = True) -> dict:
    """A figure's plotly config: the camera saves ``name``.png at twice the screen's resolution (or is removed:
    ``camera=False``); the toolbar keeps only it and the reset of the axes (:data:`TOOLBAR_REMOVED`)."""
    removed = TOOLBAR_REMOVED + ([] if camera else ["toImage"])
    return {"toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}, "displaylogo": False,
            "modeBarButtonsToRemove": removed}


def chart(fig, *, key: str, name: str, container=None, for_file=None, camera: bool = True) -> None:
    """``st.plotly_chart`` at full width, named for screen readers (:func:`figures.axes.alt_text`), plus PNG and
    HTML download buttons under it.

    ``name`` is the file name without extension; ``key`` the chart's widget key (buttons derive theirs);
    ``for_file`` the figure the PNG and HTML hold when it differs from the one shown (a download that must stand
    alone, titled with its scenario: :func:`figures.budget.with_scenario`; an upload's figure without the curves
    computed from the records themselves), or a function of no arguments that makes it: called only when a button
    is clicked, once for both (a titled copy of the Compare figure costs 39 ms, and a page reran it for every
    figure on every rerun, for files hardly anyone downloads); ``camera=False`` removes the figure's own camera
    button, which saves the figure shown (there, the one with those curves)."""
    saved = file_figure(fig, for_file)
    where = container if container is not None else st
    where.plotly_chart(fig, key=key, width="stretch", alt=alt_text(fig), config=chart_config(name, camera))
    # one row that sizes each button to its label and wraps when the row is narrow (fixed column shares cut
    # the labels to "P..", "H.." in a half-width figure, even on a desktop)
    row = where.container(horizontal=True, gap="small")
    if export.static_export_available():
        row.download_button("PNG", data=lambda: export.png_bytes(saved()), file_name=f"{name}.png", mime="image/png",
                            on_click="ignore", key=f"{key}_png", icon=":material/image:", width="content")
    else:
        row.caption("PNG: the camera icon on the figure")
    row.download_button("HTML", data=lambda: export.html_text(saved()),
                         file_name=f"{name}.html", mime="text/html", on_click="ignore", key=f"{key}_html",
                         icon=":material/code:", width="content")
