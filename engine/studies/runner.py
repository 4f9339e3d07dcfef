"""Replicate runner: independent units of work on any executor, with progress, cancel and resume.

A study is a list of *units* (one replicate, or one (epsilon, replicate) cell), each a picklable
payload that a top-level function turns into rows of a tidy table. Units carry their own
``numpy.random.SeedSequence`` child, spawned once from the study seed
(``SeedSequence(seed).spawn(M)``), so a unit's rows depend on nothing but its payload: the table
is identical whichever executor runs it, in whatever order units finish and however they are
batched.

Executors
    ``executor=None`` starts a local process pool over ``workers`` processes (default all cores;
    ``spawn`` start method, so a process that already runs threads, such as Streamlit or numba
    chains, is never forked) and shuts it down afterwards; ``workers=1`` runs the units in the
    calling process instead. A spawned worker imports the calling script afresh, so a script that
    runs a study on the pool needs the ``if __name__ == "__main__":`` guard around it (without one
    every worker dies while starting up and the pool raises BrokenProcessPool). Any
    :class:`concurrent.futures.Executor` works unchanged, e.g. a Dask cluster::

        from dask.distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=2, threads_per_worker=1)   # or Client("tcp://host:8786")
        with Client(cluster) as client:
            table = calibration_study(spec, methods, replicates=1000,
                                      executor=client.get_executor())

    :class:`InlineExecutor` runs units in the calling process, one after another.

Progress and cancel
    ``on_progress(done, total)`` is called in the calling thread each time a unit finishes
    (units already on disk count as done). Returning ``False`` cancels the units not yet started
    and returns the rows of those that finished (``table.attrs["cancelled"] = True``); an
    exception raised inside ``on_progress`` (Streamlit's stop on a rerun) does the same and then
    propagates. Finished units are written to the store first either way.

Store and resume
    ``store=DIR`` keeps finished units on disk as Parquet parts (``DIR/part-*.parquet``, written
    atomically) next to ``DIR/study.json``, the study's configuration. Running the same study
    with the same store skips the units already there; a store holding a different study is
    refused with a ValueError. :func:`save_table` / :func:`load_table` write and read a whole
    table as Parquet or CSV.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["Unit", "InlineExecutor", "run_units", "spawn_seeds", "named_seed", "save_table", "load_table",
           "default_executor"]

FLUSH_SECONDS = 1.0


@dataclass(frozen=True)
class Unit:
    """One independent piece of a study: ``key`` (values of the table's key columns) and the
    picklable ``payload`` the study's row function receives."""

    key: tuple
    payload: Any


class InlineExecutor(cf.Executor):
    """Runs each submitted call at once in the calling process (no parallelism)."""

    def submit(self, fn, /, *args, **kwargs):
        future = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def default_executor(workers: int | None = None) -> cf.Executor:
    """A local process pool over ``workers`` processes (default: all cores), spawn start method; for
    ``workers=1`` an :class:`InlineExecutor` (one process: the caller's, with no pool to start and no
    ``__main__`` guard needed in a script)."""
    if workers == 1:
        return InlineExecutor()
    n = workers or os.cpu_count() or 1
    return cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))


def spawn_seeds(seed: int, count: int) -> list[np.random.SeedSequence]:
    """``SeedSequence(seed).spawn(count)``: child r drives replicate r and nothing else."""
    return np.random.SeedSequence(seed).spawn(count)


def named_seed(parent: np.random.SeedSequence, name: str) -> int:
    """An integer seed for ``name`` (a method) within one replicate, independent of which other
    names are present: hash of the parent's state and the name's bytes."""
    words = [int(w) for w in parent.generate_state(4)] + list(name.encode())
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _window(executor) -> int:
    """Tasks kept in flight: enough to keep every worker busy, few enough that a cancel is prompt."""
    if isinstance(executor, InlineExecutor):
        return 1
    workers = getattr(executor, "_max_workers", None)
    return 4 * workers if workers else 64


def _run_batch(fn: Callable[[Any], list[dict]], payloads: Sequence[Any]) -> list[list[dict]]:
    return [fn(p) for p in payloads]


# --------------------------------------------------------------------------- store
def _fingerprint(config: dict) -> str:
    return json.dumps(config, sort_keys=True, default=str)


def _open_store(store: str, config: dict) -> pd.DataFrame | None:
    os.makedirs(store, exist_ok=True)
    meta = os.path.join(store, "study.json")
    text = _fingerprint(config)
    if os.path.exists(meta):
        with open(meta, encoding="utf-8") as fh:
            if fh.read() != text:
                raise ValueError(f"store = {store!r} is invalid: it holds a different study; use another directory")
    else:
        with open(meta, "w", encoding="utf-8") as fh:
            fh.write(text)
    parts = sorted(f for f in os.listdir(store) if f.startswith("part-") and f.endswith(".parquet"))
    if not parts:
        return None
    return pd.concat([pd.read_parquet(os.path.join(store, f)) for f in parts], ignore_index=True)


def _write_part(store: str, rows: list[dict]) -> None:
    if not rows:
        return
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = os.path.join(store, "." + name + ".tmp")
    pd.DataFrame(rows).to_parquet(tmp, index=False)
    os.replace(tmp, os.path.join(store, name))


def save_table(table: pd.DataFrame, path: str) -> str:
    """Write a study table as Parquet (``.parquet``) or CSV (anything else); returns the path."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if path.endswith(".parquet"):
        table.to_parquet(path, index=False)
    else:
        table.to_csv(path, index=False)
    return path


def load_table(path: str) -> pd.DataFrame:
    """Read a table written by :func:`save_table` (or a store directory's parts)."""
    if os.path.isdir(path):
        parts = sorted(f for f in os.listdir(path) if f.startswith("part-") and f.endswith(".parquet"))
        return pd.concat([pd.read_parquet(os.path.join(path, f)) for f in parts], ignore_index=True)
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


# --------------------------------------------------------------------------- runner
def run_units(fn: Callable[[Any], list[dict]], units: Sequence[Unit], key_columns: Sequence[str], *,
              executor: cf.Executor | None = None, workers: int | None = None, batch_size: int = 1,
              on_progress: Callable[[int, int], Any] | None = None, store: str | None = None,
              config: dict | None = None) -> pd.DataFrame:
    """Run every unit (those not already in ``store``) and return the tidy table, sorted by key.

    Parameters
    ----------
    fn : callable(payload) -> list of dict
        A top-level (picklable) function; every row must hold the unit's key columns.
    units : sequence of Unit
    key_columns : sequence of str
        The columns that identify a unit, in the order of ``Unit.key``.
    executor : concurrent.futures.Executor, optional
        Default: a local process pool (:func:`default_executor`) over ``workers`` processes (all
        cores by default), or the calling process for ``workers=1``.
    batch_size : int
        Units per submitted task (the table does not depend on it).
    on_progress : callable(done, total), optional
        Return ``False`` to cancel; see the module docstring.
    store : str, optional
        Directory for resumable results; ``config`` (JSON-able) identifies the study in it.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size = {batch_size!r} is invalid: must be an integer >= 1")
    total = len(units)
    stored = _open_store(store, config or {}) if store is not None else None
    done_keys: set[tuple] = set()
    if stored is not None and not stored.empty:
        done_keys = {tuple(k) for k in stored[list(key_columns)].drop_duplicates().itertuples(index=False)}
    pending = [u for u in units if tuple(u.key) not in done_keys]
    done = total - len(pending)
    finished: list[list[dict]] = []
    unflushed: list[dict] = []
    last_flush = time.monotonic()
    cancelled = False
    own = executor is None and pending
    if own:
        executor = default_executor(workers)
    futures = {}
    consumed = set()

    def take(future):
        consumed.add(future)
        for rows in future.result():
            finished.append(rows)
            unflushed.extend(rows)
        return len(futures[future])

    try:
        if on_progress is not None and on_progress(done, total) is False:
            cancelled = True
        batches = [pending[i:i + batch_size] for i in range(0, len(pending), batch_size)][::-1]
        window = _window(executor)
        running: set = set()
        while not cancelled and (batches or running):
            while batches and len(running) < window:
                batch = batches.pop()
                future = executor.submit(_run_batch, fn, [u.payload for u in batch])
                futures[future] = batch
                running.add(future)
            finished_now, running = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in sorted(finished_now, key=lambda f: futures[f][0].key):
                done += take(future)
            if store is not None and time.monotonic() - last_flush >= FLUSH_SECONDS:
                _write_part(store, unflushed)
                unflushed, last_flush = [], time.monotonic()
            if on_progress is not None and on_progress(done, total) is False:
                cancelled = True
    finally:
        if cancelled or any(not f.done() for f in futures):
            for f in futures:
                f.cancel()
            cancelled = True
            for f in futures:  # keep what finished meanwhile
                if f not in consumed and f.done() and not f.cancelled() and f.exception() is None:
                    done += take(f)
        if store is not None:
            _write_part(store, unflushed)
        if own:
            executor.shutdown(wait=not cancelled, cancel_futures=True)
    frames = [stored] if stored is not None else []
    frames += [pd.DataFrame(rows) for rows in finished if rows]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(key_columns))
    if not table.empty:
        table = table.sort_values(list(key_columns), kind="stable").reset_index(drop=True)
    table.attrs["cancelled"] = cancelled
    table.attrs["units_done"] = done
    table.attrs["units_total"] = total
    return table
