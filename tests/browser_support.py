"""What the real-browser tests share: the app served by `streamlit run` on a free port, and how to
launch Debian's chromium through Playwright (never `playwright install`)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
CHART = '[data-testid="stPlotlyChart"]'
TABLE = '[data-testid="stDataFrame"]'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, url: str, log: Path, timeout: float = 90.0) -> None:
    """Poll ``/_stcore/health`` until the server answers 200; fail early if it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit not healthy after {timeout} s:\n{log.read_text()}")


@contextmanager
def streamlit_server(log: Path, script: str = "app.py", env: dict | None = None) -> Iterator[str]:
    """``streamlit run <script>`` (the app by default) on a free port in its own process group; yields
    the base URL and always stops that process group (and nothing else) on exit."""
    with streamlit_process(log, script, env) as (url, _):
        yield url


@contextmanager
def streamlit_process(log: Path, script: str = "app.py", env: dict | None = None
                      ) -> Iterator[tuple[str, subprocess.Popen]]:
    """:func:`streamlit_server` that also yields the server process (the Python interpreter running
    Streamlit, leader of its process group), e.g. to sample its memory."""
    port = free_port()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env=None if env is None else {**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, log)
        yield url, proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group, nothing else
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def percentiles(values: list[float]) -> dict:
    """p50, p95 and max of latencies in seconds, for the load tests' reports."""
    import numpy as np

    p50, p95 = np.percentile(values, [50, 95])
    return {"n": len(values), "p50_s": round(float(p50), 3), "p95_s": round(float(p95), 3),
            "max_s": round(float(max(values)), 3)}


def write_report(report: dict, tmp_path: Path, name: str, env_var: str) -> None:
    """A load test's report as ``name`` in its tmp dir, and where ``env_var`` points (bench/app.py sets it)."""
    text = json.dumps(report, indent=2)
    (tmp_path / name).write_text(text)
    target = os.environ.get(env_var)
    if target:
        with open(target, "w") as fh:
            fh.write(text)
