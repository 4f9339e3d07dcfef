"""A lightweight Streamlit client: one app session over Streamlit's own websocket protocol, no browser.

What a browser tab does, reduced to what the load tests need (Streamlit 1.67, read from its server in
``streamlit/web/server/starlette/starlette_websocket.py`` and ``streamlit/runtime/app_session.py``):

* **Handshake.** Open ``ws://HOST:PORT/_stcore/stream`` with ``Sec-WebSocket-Protocol: streamlit``.
  The server repurposes that header's comma-separated entries (subprotocol, XSRF token, session id to
  reconnect to); a new session needs only the first, and no ``Origin`` header means no origin check.
  The server creates the session on connect (``runtime.connect_session``) and runs nothing until the
  client asks.
* **Runs.** The client sends a ``BackMsg`` with ``rerun_script`` = a ``ClientState``: the query string,
  the page (``page_script_hash`` or the URL path as ``page_name``; empty means the default page) and
  the widget states. Like the frontend's widget manager, :class:`Session` keeps every widget value it
  has set and sends them all on every rerun (widgets it never touched keep their server-side state).
  ``cached_message_hashes`` stays empty, so the server always sends whole messages, never ``ref_hash``.
* **Replies.** ``ForwardMsg``\\ s: ``new_session`` opens every script run (its ``metadata.run`` names the
  run), ``delta`` messages carry elements and blocks at ``metadata.delta_path``, ``page_info_changed``
  carries the new query string (which the client sends back on the next rerun, as the browser's URL
  would), and ``script_finished`` closes the run: FINISHED_SUCCESSFULLY, or FINISHED_EARLY_FOR_RERUN
  when a newer request (or ``st.rerun``) replaced it.

A run's :class:`Run` holds every delta it sent, last one per path winning (the settled screen: a
successful run redraws everything, and the frontend drops what it did not redraw), plus everything ever
drawn (every figure title, every error), so a result that only flashed by is still seen.

Bounded: every wait has a deadline and every loop a message count.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

__all__ = ["Run", "Session", "ProtocolError", "FINISHED_SUCCESSFULLY", "FINISHED_EARLY_FOR_RERUN"]

FINISHED_SUCCESSFULLY = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
FINISHED_EARLY_FOR_RERUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
MAX_MESSAGES_PER_WAIT = 200_000  # a run of the Compare page sends a few hundred
MAX_FRAME_BYTES = 256 * 2**20     # figures travel as JSON; the default 1 MiB frame limit is too small


class ProtocolError(AssertionError):
    """The server did not answer as a Streamlit session should (timeout, closed socket, bad run)."""


@dataclass
class Run:
    """One script run as the client saw it."""

    run_id: str
    page_script_hash: str = ""
    elements: dict[tuple[int, ...], tuple[str, Any]] = field(default_factory=dict)  # path -> (type, proto)
    finished: int | None = None                   # a ForwardMsg.ScriptFinishedStatus value
    titles_drawn: list[str] = field(default_factory=list)   # every figure title any delta carried
    errors_drawn: list[str] = field(default_factory=list)   # exception and error-alert texts
    warnings_drawn: list[str] = field(default_factory=list)
    messages: int = 0
    query_string: str = ""                        # the page's query string after this run

    def query(self) -> dict[str, str]:
        from urllib.parse import parse_qs

        return {k: v[-1] for k, v in parse_qs(self.query_string).items()}

    # ---- the settled screen
    def of_type(self, kind: str) -> list[Any]:
        return [proto for path, (k, proto) in sorted(self.elements.items()) if k == kind]

    @property
    def figure_titles(self) -> list[str]:
        return [t for t in (_figure_title(p) for p in self.of_type("plotly_chart")) if t is not None]

    def widget(self, kind: str, label: str):
        """The element proto of the widget of this type and label, or None."""
        found = [p for p in self.of_type(kind) if p.label == label]
        return found[0] if found else None


    @property
    def status_labels(self) -> list[str]:
        """Labels of the ``st.status`` boxes (expandable blocks with a state) on the settled screen."""
        return [p.expandable.label for p in self.of_type("block")
                if p.WhichOneof("type") == "expandable" and p.expandable.state]

    @property
    def errors(self) -> list[str]:
        return [_error_text(k, p) for k, p in self.elements.values() if _error_text(k, p) is not None]

    def texts(self) -> list[str]:
        """Markdown and caption bodies on the settled screen."""
        return [p.body for p in self.of_type("markdown")]


def _figure_title(chart) -> str | None:
    try:
        title = json.loads(chart.spec).get("layout", {}).get("title", {})
    except (ValueError, AttributeError):
        return None
    return title.get("text") if isinstance(title, dict) else title


def _error_text(kind: str, proto) -> str | None:
    if kind == "exception":
        return f"{proto.type}: {proto.message}"
    if kind == "alert" and proto.format == proto.ERROR:
        return proto.body
    return None


class Session:
    """One app session on one websocket. Use as ``async with Session(url) as s:``."""

    def __init__(self, url: str, timeout: float = 60.0):
        self.url = url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        self.timeout = timeout
        self.query_string = ""
        self.page_script_hash = ""
        self.widget_states: dict[str, WidgetState] = {}
        self.runs_seen = 0
        self.last: Run | None = None
        self._ws = None

    async def __aenter__(self) -> "Session":
        try:
            self._ws = await asyncio.wait_for(
                websockets.connect(self.url, subprotocols=["streamlit"], max_size=MAX_FRAME_BYTES,
                                   open_timeout=self.timeout, ping_interval=None),
                self.timeout)
        except (OSError, asyncio.TimeoutError, websockets.WebSocketException) as exc:
            raise ProtocolError(f"cannot open {self.url}: {type(exc).__name__}: {exc}") from None
        return self

    async def __aexit__(self, *exc) -> None:
        if self._ws is not None:
            await self._ws.close()

    def number_value(self, run: Run, label: str) -> float | None:
        """The value a browser would show in the number input ``label`` after ``run``: the value this
        client sent for it, unless the run set it (``set_value``, e.g. from session state), else the
        value the server drew it with. (The server does not echo a value the client set.)"""
        w = run.widget("number_input", label) or run.widget("text_input", label)
        if w is None:
            return None
        if w.set_value or w.id not in self.widget_states:
            value = w.value if w.HasField("value") else (w.default if w.HasField("default") else None)
        else:
            sent = self.widget_states[w.id]
            value = getattr(sent, sent.WhichOneof("value"))
        return float(value) if isinstance(value, str) and value.strip() else value  # the sidebar's number boxes

    @staticmethod
    def widget_id(run: Run, kind: str, label: str) -> str:
        w = run.widget(kind, label)
        if w is None:
            raise ProtocolError(f"no {kind} labelled {label!r} on the page (run {run.run_id})")
        return w.id

    # ---- requests
    async def open(self, query_string: str = "", page_name: str = "") -> Run:
        """The first run, as a fresh tab at ``/page_name?query_string`` asks for it."""
        self.query_string = query_string
        return await self.rerun(page_name=page_name)

    async def set_widget(self, widget_id: str, value: Any, kind: str = "double_value") -> Run:
        """Change one widget (``kind``: the WidgetState field, e.g. ``double_value``, ``int_value``,
        ``bool_value``, ``string_value``) and wait for the run that follows."""
        await self.send_widget(widget_id, value, kind)
        return await self.wait_run()

    async def send_widget(self, widget_id: str, value: Any, kind: str = "double_value") -> None:
        """Change one widget and ask for a rerun without waiting for it."""
        self.stage_widget(widget_id, value, kind)
        await self._send_rerun()

    def stage_widget(self, widget_id: str, value: Any, kind: str = "double_value") -> None:
        """Change one widget's value for the next rerun request, without sending anything."""
        state = WidgetState(id=widget_id)
        setattr(state, kind, value)
        self.widget_states[widget_id] = state

    async def rerun(self, page_name: str = "") -> Run:
        await self._send_rerun(page_name)
        return await self.wait_run()

    async def _send_rerun(self, page_name: str = "") -> None:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        cs.page_script_hash = self.page_script_hash if not page_name else ""
        cs.page_name = page_name
        cs.widget_states.widgets.extend(self.widget_states.values())
        self._requested = self.runs_seen  # the answer is a run that starts after this request
        try:
            await self._ws.send(msg.SerializeToString())
        except websockets.WebSocketException as exc:
            raise ProtocolError(f"send failed: {type(exc).__name__}: {exc}") from None

    # ---- replies
    async def wait_run(self, timeout: float | None = None, until=None) -> Run:
        """Read until a run that started after the last request finishes successfully (and, if given,
        satisfies ``until(run)``: e.g. the run of the latest of several requests); returns it.
        Runs replaced by a newer one (FINISHED_EARLY_FOR_RERUN) are read through, their drawings kept
        in ``self.drawn_since_request`` so a caller can check nothing foreign flashed by."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        run: Run | None = None
        self.drawn_since_request: list[Run] = []
        for _ in range(MAX_MESSAGES_PER_WAIT):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                raw = await asyncio.wait_for(self._ws.recv(), left)
            except asyncio.TimeoutError:
                break
            except websockets.WebSocketException as exc:
                raise ProtocolError(f"socket closed while waiting for a run: {type(exc).__name__}: {exc}") from None
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.runs_seen += 1
                run = Run(run_id=msg.metadata.run.script_run_id, page_script_hash=msg.new_session.page_script_hash,
                          query_string=self.query_string)
                self.drawn_since_request.append(run)
                continue
            if kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string
                if run is not None:
                    run.query_string = self.query_string
                continue
            if kind == "ref_hash":
                raise ProtocolError("server sent a ref_hash though the client reported no cached messages")
            if run is None:
                continue  # the tail of a run that started before the request
            run.messages += 1
            if kind == "navigation":
                self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
            elif kind == "delta":
                self._delta(run, tuple(msg.metadata.delta_path), msg.delta)
            elif kind == "script_finished":
                run.finished = msg.script_finished
                if run.finished == FINISHED_SUCCESSFULLY:
                    self.last = run
                    if until is None or until(run):
                        return run
                    run = None
                    continue
                if run.finished != FINISHED_EARLY_FOR_RERUN:
                    raise ProtocolError(f"run {run.run_id} ended with status "
                                        f"{ForwardMsg.ScriptFinishedStatus.Name(run.finished)}: {run.errors_drawn}")
                run = None  # a newer run follows
        raise ProtocolError(f"no finished run within {self.timeout if timeout is None else timeout:.3g} s "
                            f"(last run: {None if run is None else run.run_id}, "
                            f"titles drawn: {None if run is None else run.titles_drawn})")

    @staticmethod
    def _delta(run: Run, path: tuple[int, ...], delta) -> None:
        which = delta.WhichOneof("type")
        if which == "new_element":
            kind = delta.new_element.WhichOneof("type")
            proto = getattr(delta.new_element, kind)
            run.elements[path] = (kind, proto)
            if kind == "plotly_chart":
                title = _figure_title(proto)
                if title is not None:
                    run.titles_drawn.append(title)
            text = _error_text(kind, proto)
            if text is not None:
                run.errors_drawn.append(text)
            elif kind == "alert" and proto.format == proto.WARNING:
                run.warnings_drawn.append(proto.body)
        elif which == "add_block":
            run.elements[path] = ("block", delta.add_block)  # an update (st.status) keeps its children
