"""Server start-up: the first visitor waits no longer than the tenth.

A cold server process has not imported the engine (NumPy, SciPy, pandas, numba: seconds on two
cores), has not loaded the compiled kernels from numba's on-disk cache, and has not built a plotly
figure. Left to the first session, that work lands on the first visitor's clock (bench/app.py
measured 10–14 s against 4 s for a bare page). ``app.py`` therefore declares the app as an
``st.App`` whose lifespan calls :func:`warm` once per server process, before the server answers
``/_stcore/health``: ready means warm.

The engine and the UI's plot and table modules are imported with this module, which ``app.py``
imports when the server loads it, also before the server answers. :func:`warm` then runs the landing
page's work off-screen — prepare the demo scenario, run every method the page runs, summarise and
draw the figure — so later sessions only pay for their own (cached) runs. It then moves everything
alive into the garbage collector's permanent generation (``gc.freeze``): Streamlit runs a full
collection after every script run (``runner.postScriptGC``), and without the freeze each one walks
the whole heap of imported modules (a quarter of a second per ε change on two cores, measured with
py-spy); frozen, it walks only what the runs themselves made. It never raises: a failed warm-up is
logged and the server starts anyway (the first visitor then pays, as before).
"""
from __future__ import annotations

import asyncio
import gc
import logging
import time
from contextlib import asynccontextmanager

import engine
from figures import posteriors

from . import tables
from .params.scenario import Scenario
from .params.spec import method_settings, to_spec_dict

__all__ = ["warm", "lifespan"]

_LOG = logging.getLogger("dp_posterior_lab.warmup")


def warm() -> float:
    """Load kernels and draw the demo once; returns the seconds it took."""
    t0 = time.perf_counter()
    try:
        scenario = Scenario()
        problem = engine.prepare(engine.spec_from_dict(to_spec_dict(scenario)))
        results = [engine.run_method(problem, method_settings(scenario, m), seed=scenario.seed)
                   for m in scenario.methods]
        for r in results:
            engine.summary(r)
        engine.estimate_cost(problem, method_settings(scenario, "da_mcmc"))  # measures this machine's rates
        tables.comparison_table({})
        posteriors.posterior_densities(results, true_params={"theta": 0.3}).to_json()
    except Exception:  # noqa: BLE001 - an optimisation must never stop the server
        _LOG.exception("warm-up failed; the first visitor will pay the start-up work")
    gc.collect()
    gc.freeze()
    return time.perf_counter() - t0


@asynccontextmanager
async def lifespan(_app):
    """``st.App`` lifespan: warm the process (in a worker thread) before serving."""
    seconds = await asyncio.to_thread(warm)
    _LOG.info("engine warm in %.1f s", seconds)
    yield
