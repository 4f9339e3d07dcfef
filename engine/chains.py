"""Running independent Markov chains: threads, progress reports and cancellation, written once.

A sampler supplies ``run_one(c, tick, stop)`` that runs chain c in blocks and, after each block,
stores its iteration count in ``progress[c]``, calls ``tick()`` and returns early when
``stop.is_set()``. :func:`run_chains` runs the chains on threads (the compiled kernels release the
GIL) or one after another, and reports ``on_progress(done, total)`` from the calling thread. A
callback that returns ``False`` asks the run to stop: every chain ends at its next block boundary
and the sampler keeps what was drawn (:func:`kept` says which chains and how many post-warm-up
iterations). Cancellation never changes the draws made before it.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

import numpy as np

__all__ = ["Cancelled", "run_chains", "kept"]


class Cancelled(Exception):
    """A run stopped by its caller before any draw worth keeping existed."""


def run_chains(run_one: Callable, chains: int, per_chain: int, progress: np.ndarray, on_progress=None,
               parallel: bool = True) -> tuple[list, bool]:
    """Run ``run_one(c, tick, stop)`` for every chain; returns (outputs in chain order, stopped)."""
    stop = threading.Event()
    total = chains * per_chain

    def report() -> None:
        if on_progress is not None and on_progress(int(progress.sum()), total) is False:
            stop.set()

    workers = min(chains, os.cpu_count() or 1) if parallel else 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futs = [pool.submit(run_one, c, lambda: None, stop) for c in range(chains)]
            pending = set(futs)
            while pending:
                _, pending = wait(pending, timeout=0.1)
                report()
            outs = [f.result() for f in futs]
    else:
        outs = [run_one(c, report, stop) for c in range(chains)]
        report()
    return outs, stop.is_set()


def kept(progress: np.ndarray, warmup: int, draws: int) -> tuple[list[int], int]:
    """(chains that got past warm-up, post-warm-up iterations all of those completed): every chain and
    every draw unless the run was stopped. Raises :class:`Cancelled` when no chain got past warm-up."""
    chains = [c for c, done in enumerate(progress) if done > warmup]
    if not chains:
        raise Cancelled(f"stopped during warm-up ({int(progress.max())} of {warmup} warm-up iterations): no draws to keep")
    return chains, int(min(min(int(progress[c]) for c in chains) - warmup, draws))
