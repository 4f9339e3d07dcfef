"""What a long computation shows while it runs, and what a stopped one hands on.

Progress
    Each run opens an ``st.status`` box; the cached function draws an ``st.progress`` bar in it and
    passes the engine an ``on_progress(done, total)`` callback (:class:`_Progress`) that moves the bar.
    Streamlit replays the bar on a cache hit; the box's final label (the run log line) is set outside the
    cache, so a hit says "(cached)": computed once, by whichever session asked first (the caches are
    shared and Streamlit computes one key once, other askers wait for it). ``_fresh`` is how the caller
    tells: the body of a cached function sets it, so it is set only on a cache miss.

Stop and preemption
    :class:`_Progress` is also where a run notices that the session moved on (the Stop button, a newer
    input) and stops; :class:`SessionHandover` carries what a stopped run finished to the session's next
    run, outside session state. Used by the runs and sweeps here and by :mod:`ui.studies`.

Nothing here imports streamlit at import time (:meth:`SessionHandover.session` asks Streamlit for the
script run's session when called).
"""
from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["SessionHandover"]

_fresh = threading.local()  # set by the body of _run_cached: this call computed (a cache miss)


class _Progress:
    """``on_progress(done, total)`` that moves an ``st.progress`` bar and stops the run when the session
    moves on.

    The bar moves at most every 2% or every 0.25 s. Touching it is also where Streamlit tells a script
    run that a newer one was requested (a new input, the Stop button): it raises its rerun/stop signal
    there. The callback catches that signal, keeps it in ``interrupt`` and returns ``False``, so the
    engine stops at its next block (:mod:`engine.core.chains`) instead of finishing a run nobody waits for;
    :func:`ui.compute.method_runs._run_cached` then re-raises the signal, so the stopped run is never
    cached and the newer run starts at once (preemption, not queueing).
    """

    def __init__(self, bar, label: str):
        self.bar, self.label = bar, label
        self.owner = threading.get_ident()
        self.last = -1.0
        self.last_time = time.monotonic()
        self.interrupt: BaseException | None = None

    def text(self, done: int, total: int) -> str:
        return f"{self.label}: {done:,} / {total:,}"

    def __call__(self, done: int, total: int) -> bool | None:
        if self.interrupt is not None:
            return False
        if threading.get_ident() != self.owner or total <= 0:
            return None  # Streamlit elements may only be touched from the script thread
        frac = min(max(done / total, 0.0), 1.0)
        now = time.monotonic()
        if frac - self.last < 0.02 and frac < 1.0 and now - self.last_time < 0.25:
            return None
        self.last, self.last_time = frac, now
        try:
            self.bar.progress(frac, text=self.text(done, total))
        except BaseException as signal:  # noqa: BLE001 - Streamlit's StopException / RerunException
            self.interrupt = signal
            return False
        return None


class SessionHandover:
    """What a run stopped in one session hands to that session's next run, outside session state.

    Streamlit (``runner.fastReruns``, the default) starts the newer run at once on a new thread and
    asks the older one to stop; the older run notices at its next progress update and unwinds while
    the newer one already runs, and a session-state write made while unwinding raises Streamlit's stop
    again and is lost. So the stopped run leaves what it finished here, keyed by session, and marks
    itself done; the newer run waits (at most ``wait_s``) for that mark before reading. Bounded: the
    last ``max_sessions`` sessions' entries are kept."""

    def __init__(self, max_sessions: int = 32, wait_s: float = 15.0):
        self.max_sessions, self.wait_s = max_sessions, wait_s
        self._lock = threading.Lock()
        self._done: dict[str, threading.Event] = {}
        self._kept: dict[str, Any] = {}

    @staticmethod
    def session() -> str:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        return ctx.session_id if ctx is not None else "-"

    def start(self, session: str) -> threading.Event:
        """A run of ``session`` begins: set the returned event when it ends, however it ends."""
        done = threading.Event()
        with self._lock:
            self._done.pop(session, None)
            self._done[session] = done
            while len(self._done) > 8 * self.max_sessions:
                self._done.pop(next(iter(self._done)))
        return done

    def keep(self, session: str, value: Any) -> None:
        with self._lock:
            self._kept.pop(session, None)
            self._kept[session] = value
            while len(self._kept) > self.max_sessions:
                self._kept.pop(next(iter(self._kept)))

    def take(self, session: str) -> Any:
        """What the session's last stopped run kept (after waiting for it to finish unwinding), or None."""
        with self._lock:
            done = self._done.get(session)
        if done is not None:
            done.wait(self.wait_s)
        with self._lock:
            return self._kept.get(session)

    def forget(self, session: str) -> None:
        with self._lock:
            self._kept.pop(session, None)
