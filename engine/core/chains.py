"""Running independent Markov chains: threads, progress reports and cancellation, written once.

A sampler supplies ``run_one(c, tick, stop)`` that runs chain c in blocks and, after each block,
stores its iteration count in ``progress[c]``, calls ``tick()`` and returns early when
``stop.is_set()``. :func:`run_chains` runs the chains on threads (the compiled kernels release the
GIL) or one after another, and reports ``on_progress(done, total)`` from the calling thread. A
callback that returns ``False`` asks the run to stop: every chain ends at its next block boundary
and the sampler keeps what was drawn (:func:`kept` says which chains and how many post-warm-up
iterations). Cancellation never changes the draws made before it. An exception in the calling thread
(Ctrl-C's ``KeyboardInterrupt``, or one the callback raises) stops the chains the same way and then
propagates once they have ended, about a block later, rather than after their last iteration.

Threads per run: at most :func:`chain_threads` chains run at once (``DPL_CHAIN_THREADS``, default
every core). A server hosting many sessions sets it to 1 so that thirty concurrent runs share the
cores instead of each asking for all of them. Each chain draws from its own stream, whatever thread
runs it and in whatever order, so the draws do not depend on the number of threads.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

import numpy as np

__all__ = ["Cancelled", "run_chains", "kept", "chain_threads", "warmup_blocks", "CHAIN_THREADS_ENV"]

CHAIN_THREADS_ENV = "DPL_CHAIN_THREADS"


class Cancelled(Exception):
    """A run stopped by its caller before any draw worth keeping existed."""


def chain_threads() -> int:
    """Threads one run's chains may use: ``DPL_CHAIN_THREADS`` (a whole number >= 1) if set, else every
    core (``os.cpu_count()``). Read at every run, so a server's setting applies without a restart of
    the engine. Raises ValueError naming the variable for anything else."""
    raw = os.environ.get(CHAIN_THREADS_ENV, "").strip()
    if not raw:
        return os.cpu_count() or 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{CHAIN_THREADS_ENV} = {raw!r} is invalid: must be a whole number of threads >= 1 "
                         "(or unset for every core)")
    return value


def run_chains(run_one: Callable, chains: int, per_chain: int, progress: np.ndarray, on_progress=None,
               parallel: bool = True) -> tuple[list, bool]:
    """Run ``run_one(c, tick, stop)`` for every chain; returns (outputs in chain order, stopped)."""
    stop = threading.Event()
    total = chains * per_chain

    def report() -> None:
        if on_progress is not None and on_progress(int(progress.sum()), total) is False:
            stop.set()

    workers = min(chains, chain_threads()) if parallel else 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futs = [pool.submit(run_one, c, lambda: None, stop) for c in range(chains)]
            pending = set(futs)
            try:
                while pending:
                    _, pending = wait(pending, timeout=0.1)
                    report()
            except BaseException:  # Ctrl-C, or the callback raised: the chains end at their next block, not their last
                stop.set()
                raise
            outs = [f.result() for f in futs]
    else:
        outs = [run_one(c, report, stop) for c in range(chains)]
        report()
    return outs, stop.is_set()


def warmup_blocks(warmup: int, total: int):
    """The ``(start, end)`` blocks an adaptive chain runs in: at most 100 iterations (warm-up / 20, at least
    10), never straddling the middle of warm-up nor its end, where the adaptive samplers re-tune and freeze
    their proposals. A caller checks its stop flag before each block."""
    block = int(max(10, min(100, warmup // 20 if warmup else 100)))
    half, done = warmup // 2, 0
    while done < total:
        end = min(done + block, total)
        if done < half:
            end = min(end, half)
        elif done < warmup:
            end = min(end, warmup)
        yield done, end
        done = end


def kept(progress: np.ndarray, warmup: int, draws: int) -> tuple[list[int], int]:
    """(chains that got past warm-up, post-warm-up iterations all of those completed): every chain and
    every draw unless the run was stopped. Raises :class:`Cancelled` when no chain got past warm-up."""
    chains = [c for c, done in enumerate(progress) if done > warmup]
    if not chains:
        raise Cancelled(f"stopped during warm-up ({int(progress.max())} of {warmup} warm-up iterations): no draws to keep")
    return chains, int(min(min(int(progress[c]) for c in chains) - warmup, draws))
