"""Static export of plotly figures as PNG, offline.

How it works: plotly's static export goes through kaleido 1.x, which renders the figure in a
headless Chromium driven over the DevTools protocol (the ``choreographer`` package). No browser is
ever downloaded: kaleido finds the browser through the ``BROWSER_PATH`` environment variable, which
:func:`png_bytes` sets to Debian's ``/usr/bin/chromium`` when it is unset and that file exists
(``make test`` installs the package). plotly.js itself ships inside the plotly wheel.

A file leaves with a white background (:func:`for_export`: plotly's ``plotly_white`` template) whatever the
app's theme: in the app the figures carry no template of their own and take Streamlit's, but a PNG or an HTML
file has no Streamlit around it and would take plotly's default instead (a blue-grey plot area, on which the
palette's colours lose some of their 3:1 contrast). White is what slides and documents have, and what the
light theme shows.

Cost (2-core machine): the first figure of a process starts Chromium, about 4 s; kaleido's sync
server is then kept running for the life of the process (stopped at exit), and each further figure
takes about 0.3 s. Without Chromium or kaleido, :class:`StaticExportUnavailable` (a RuntimeError)
says what is missing; callers fall back to HTML.
"""
from __future__ import annotations

import atexit
import os
import threading

__all__ = ["png_bytes", "html_text", "page_title", "for_export", "EXPORT_TEMPLATE", "StaticExportUnavailable",
           "CHROMIUM", "static_export_available"]

CHROMIUM = "/usr/bin/chromium"
_LOCK = threading.Lock()
_STATE = {"server": False}


#: the template of every exported figure (PNG, HTML): white, like the app's light theme
EXPORT_TEMPLATE = "plotly_white"


def for_export(fig):
    """A copy of ``fig`` drawn on :data:`EXPORT_TEMPLATE` (the figure itself is left as it is).

    A title hung from the figure's top (:func:`figures.axes.top_title`) is moved down by one line of its font, and
    the top margin with it: the plotly.js that draws the files (plotly's own, which kaleido and the HTML page use)
    hangs it a line higher than the one in the app does, and the first line of Compare's title came out cut in
    half at the top of the PNG."""
    import plotly.graph_objects as go

    out = go.Figure(fig)
    out.update_layout(template=EXPORT_TEMPLATE)
    title = out.layout.title
    if title.yanchor == "top" and title.yref == "container" and title.text:
        line = title.font.size or _TITLE_FONT
        out.update_layout(title_pad_t=(title.pad.t or 0) + line)
        if out.layout.margin.t is not None:
            out.update_layout(margin_t=out.layout.margin.t + line)
    return out


#: plotly's title font size where a figure sets none (its layout font, 12 px, times 1.4)
_TITLE_FONT = 17


def page_title(fig) -> str:
    """The words of a figure's title and subtitle in one line, for an HTML page's ``<title>`` (a browser tab, a
    bookmark, a file list): plotly's line breaks and tags out, "Plotly figure" where the figure has no title."""
    import re

    title = fig.layout.title
    parts = [title.text or "", (title.subtitle.text if title.subtitle else None) or ""]
    words = " · ".join(" ".join(re.sub(r"<[^>]+>", " ", p).split()) for p in parts if p.strip())
    return words or "Plotly figure"


def html_text(fig) -> str:
    """The figure as a self-contained HTML page (plotly.js inside, no network), on :data:`EXPORT_TEMPLATE`, with a
    ``<title>`` of the figure's title and subtitle (:func:`page_title`; plotly writes none)."""
    import html

    page = for_export(fig).to_html(include_plotlyjs=True, full_html=True)
    return page.replace("<head>", f"<head>\n    <title>{html.escape(page_title(fig))}</title>", 1)


class StaticExportUnavailable(RuntimeError):
    """No static (PNG) export is possible here; the message says why and what to install."""


def _browser() -> str:
    path = os.environ.get("BROWSER_PATH")
    if path:
        if not os.path.exists(path):
            raise StaticExportUnavailable(f"BROWSER_PATH = {path!r} is invalid: no such file; point it at a "
                                          "Chromium or Chrome binary")
        return path
    if os.path.exists(CHROMIUM):
        os.environ["BROWSER_PATH"] = CHROMIUM
        return CHROMIUM
    raise StaticExportUnavailable(f"PNG export needs Chromium at {CHROMIUM} (Debian package `chromium`) or a "
                                  "browser named by BROWSER_PATH; figures are saved as HTML only")


def static_export_available() -> bool:
    """True when kaleido is installed and a browser is found (does not start it)."""
    try:
        _browser()
        import kaleido  # noqa: F401
    except (StaticExportUnavailable, ImportError):
        return False
    return True


def _stop_server() -> None:
    import kaleido

    with _LOCK:
        if _STATE["server"]:
            kaleido.stop_sync_server(silence_warnings=True)
            _STATE["server"] = False


def png_bytes(fig, *, width: int | None = None, height: int | None = None, scale: float = 2) -> bytes:
    """The figure as PNG bytes on :data:`EXPORT_TEMPLATE`, rendered offline by kaleido in Debian's Chromium.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    width, height : int, optional
        Pixels before scaling; default the figure's layout size, else 700 x 500.
    scale : float
        Device pixel ratio (2 gives a sharp image for slides).

    Raises
    ------
    StaticExportUnavailable
        kaleido is not installed, or no browser is found, or rendering failed.
    """
    _browser()
    try:
        import kaleido
    except ImportError as exc:
        raise StaticExportUnavailable("PNG export needs the kaleido package (pip install -r requirements.txt); "
                                      "figures are saved as HTML only") from exc
    opts = {"format": "png", "scale": scale,
            "width": width or fig.layout.width or 700, "height": height or fig.layout.height or 500}
    with _LOCK:
        try:
            if not _STATE["server"]:
                kaleido.start_sync_server(silence_warnings=True)
                _STATE["server"] = True
                atexit.register(_stop_server)
            data = kaleido.calc_fig_sync(for_export(fig), opts=opts)
        except Exception as exc:  # noqa: BLE001 - any browser failure becomes one clear error
            raise StaticExportUnavailable(f"PNG export failed in the browser at {os.environ.get('BROWSER_PATH')}: "
                                          f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(data, (bytes, bytearray)) or not bytes(data).startswith(b"\x89PNG"):
        raise StaticExportUnavailable("PNG export returned no PNG image")
    return bytes(data)
