"""Soak (issue 14, "Hosted for a class": bounded memory): one `streamlit run` server for a bounded time,
SEATS websocket sessions at once (tests/ws_client.py), each a student who opens the app, asks STEPS
questions and leaves, a new student taking the seat. Every question is a new scenario (a new ε, unique
over the whole soak; n cycling through N_VALUES; one method switched off or back on), so every run is a
cache miss and the caches fill past their ``max_entries`` (the test checks it did: the distinct
(scenario, method) runs outnumber the ``max_entries`` of ``ui.compute.method_runs._run_cached`` at least
twice) and keep evicting.

Memory: the resident set (VmRSS in /proc/<pid>/status) of the server process, the Python interpreter
that leads the process group `streamlit_server` starts (checked from its command line), sampled every
SAMPLE_S. Bounded memory means it levels off once the caches are full: the mean of the last third of
the samples exceeds the mean of the middle third by less than 5% (an unbounded cache would keep the
growth of the first third going: each run adds its draws). Means of thirds, not single samples, so the
sawtooth of the garbage collector and of freed arenas does not decide. The figures are printed.

Students keep coming for at least SOAK_SECONDS and until the distinct runs outnumber twice the cache's
``max_entries`` (at most SOAK_MAX_SECONDS): the check is that the caches filled and kept evicting, whatever the
machine's speed.

A student who leaves leaves a disconnected session, which Streamlit keeps for
``server.disconnectedSessionTTL`` (120 s by default) in case the tab reconnects: on a real server the
number kept levels off after 120 s. The soak is shorter than that, so it runs the server with a TTL of
SESSION_TTL_S, which brings that steady state inside the measured window instead of counting the
retained sessions of a soak that ends too soon as growth.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import time

import numpy as np
import pytest

from browser_support import streamlit_process
from test_load_thirty import EPSILON, mechanism_text, problems, rss_kib
from figures.labels import METHOD_LABELS
from ws_client import Session

pytestmark = pytest.mark.serial  # a server of its own: make test runs these files alone, after the rest

SOAK_SECONDS = 45.0     # students keep coming at least this long after the warm-up (thirds of 15 s > the 10 s TTL)
SOAK_MAX_SECONDS = 100.0  # ... and on until the caches have filled twice over, at most this long
SEATS = 6
STEPS = 4               # questions per student before they leave
N_VALUES = (20, 40, 60)
N_LABEL = "n (number of confidential records)"
SAMPLE_S = 0.5
MAX_GROWTH = 0.05
TIMEOUT_S = 120.0
TOGGLED = ("da_mcmc", "abc_rejection", "ops")
SESSION_TTL_S = "10"


def test_the_servers_memory_levels_off_while_sessions_cycle_through_scenarios(tmp_path, capsys):
    from ui.compute.method_runs import _run_cached

    max_entries = _run_cached._info.max_entries
    epsilons = (round(0.3 + 0.001 * j, 3) for j in itertools.count(1))  # unique over the soak
    samples: list[tuple[float, int]] = []
    asked: set[tuple] = set()
    failures: list[str] = []
    students = [0]

    def done(t0: float) -> bool:
        """Past SOAK_SECONDS once the distinct runs outnumber twice the cache's max_entries (a slower machine asks
        fewer questions a second: 458 to 587 in 45 s on one machine, so a fixed window tested its speed), or past
        SOAK_MAX_SECONDS."""
        elapsed = time.monotonic() - t0
        return elapsed >= SOAK_MAX_SECONDS or (elapsed >= SOAK_SECONDS and len(asked) >= 2 * max_entries)

    async def student(url: str, seat: int, t0: float) -> None:
        async with Session(url, timeout=TIMEOUT_S) as s:
            run = await s.open()
            eps_id = s.widget_id(run, "text_input", EPSILON)
            n_id = s.widget_id(run, "text_input", N_LABEL)
            toggles = {m: s.widget_id(run, "checkbox", METHOD_LABELS[m]) for m in TOGGLED}
            on = {m: True for m in TOGGLED}
            for step in range(STEPS):
                if done(t0):
                    break
                eps, n = next(epsilons), N_VALUES[(seat + step) % len(N_VALUES)]
                m = TOGGLED[(seat + step) % len(TOGGLED)]
                on[m] = not on[m]
                s.stage_widget(n_id, str(n), "string_value")
                s.stage_widget(toggles[m], on[m], "bool_value")
                await s.send_widget(eps_id, repr(float(eps)), "string_value")  # one rerun with all three changes
                run = await s.wait_run(until=lambda r: r.query().get("epsilon") == repr(eps))
                bad = problems(run)
                if run.figure_titles != [mechanism_text(eps)] or bad:
                    failures.append(f"seat {seat} ε = {eps}: {run.figure_titles} {bad}")
                    return
                methods = run.query().get("methods", "")
                asked.update((eps, n, name) for name in methods.split(",") if name)

    async def seat(url: str, index: int, t0: float) -> None:
        for _ in range(10_000):
            if done(t0) or failures:
                return
            students[0] += 1
            await student(url, index, t0)

    async def sampler(pid: int, t0: float) -> None:
        while True:  # cancelled at the end
            samples.append((time.monotonic() - t0, rss_kib(pid)["VmRSS"]))
            await asyncio.sleep(SAMPLE_S)

    async def soak(url: str, pid: int) -> float:
        async with Session(url, timeout=300.0) as warm:  # the cold start, outside the measured window
            await warm.open()
        t0 = time.monotonic()
        sampling = asyncio.create_task(sampler(pid, t0))
        await asyncio.gather(*(seat(url, i, t0) for i in range(SEATS)))
        sampling.cancel()
        return time.monotonic() - t0

    with streamlit_process(tmp_path / "streamlit.log", env={"DPL_CHAIN_THREADS": "1",
                                                                  "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": SESSION_TTL_S}
                           ) as (url, proc):
        with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
            cmd = fh.read().split(b"\0")
        assert b"streamlit" in cmd and b"python" in os.path.basename(cmd[0]), cmd
        wall = asyncio.run(soak(url, proc.pid))
        peak = rss_kib(proc.pid)["VmHWM"]

    rss = np.array([kib for _, kib in samples], dtype=float) / 1024
    thirds = np.array_split(rss, 3)
    first, middle, last = (float(t.mean()) for t in thirds)
    growth = last / middle - 1.0
    report = {"wall_s": round(wall, 1), "students": students[0], "seats": SEATS, "runs_asked": len(asked),
              "run_cache_max_entries": max_entries, "samples": len(rss),
              "rss_mib": {"start": round(float(rss[0]), 1), "first_third_mean": round(first, 1),
                          "middle_third_mean": round(middle, 1), "last_third_mean": round(last, 1),
                          "end": round(float(rss[-1]), 1), "peak": round(peak / 1024, 1)},
              "last_vs_middle_growth": round(growth, 4)}
    with capsys.disabled():
        print(f"\nsoak: {json.dumps(report)}")
    assert not failures, failures
    assert len(asked) >= 2 * max_entries, report  # the caches filled and kept evicting
    assert growth < MAX_GROWTH, report
