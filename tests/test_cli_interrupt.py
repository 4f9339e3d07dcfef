"""Ctrl-C on a real run (README, The CLI: "Ctrl-C prints ``interrupted`` and exits with 130"). The chains ran on
threads inside ``with ThreadPoolExecutor``, whose exit waited for every chain to finish its last iteration: the
terminal showed a frozen bar for the rest of the run, then ``interrupted``. Now the chains stop at their next block."""
from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: 100,000 records x 200,000 iterations x 4 chains: a quarter of an hour on a 2-core machine, over a minute on any
#: machine this suite runs on; its blocks are 40 iterations (4 million record updates), a fraction of a second
LONG = """seed = 1
[model]
name = "beta_binomial"
n = 100000
[mechanism]
name = "laplace"
epsilon = 1.0
[data]
simulate = { theta = 0.3 }
[method]
name = "da_mcmc"
chains = 4
draws = 200000
"""


def _read(fd: int, seconds: float) -> str:
    """What the terminal shows within ``seconds`` ("" when nothing more)."""
    ready, _, _ = select.select([fd], [], [], seconds)
    if not ready:
        return ""
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except OSError:  # the child closed the terminal
        return ""


def test_ctrl_c_stops_a_long_run_at_its_next_block_and_writes_nothing(tmp_path):
    spec = tmp_path / "long.toml"
    spec.write_text(LONG)
    out = tmp_path / "out"
    master, slave = pty.openpty()  # stderr on a terminal, so the progress bar shows when sampling has begun
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "engine", "run", str(spec), "--out", str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    shown = ""
    try:
        deadline = time.monotonic() + 300  # imports and compilation on a loaded machine: not what is tested
        while time.monotonic() < deadline and proc.poll() is None:
            shown += _read(master, 1.0)
            percents = [float(p) for p in re.findall(r"(\d+\.\d)%", shown)]
            if percents and max(percents) > 0:  # the chains are past their first block
                break
        assert proc.poll() is None and percents and max(percents) > 0, shown
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        stdout, _ = proc.communicate(timeout=120)
        stopped_after = time.monotonic() - t0
        while True:
            more = _read(master, 0.2)
            if not more:
                break
            shown += more
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    percents = [float(p) for p in re.findall(r"(\d+\.\d)%", shown)]
    assert proc.returncode == 130, (proc.returncode, shown)
    assert shown.rstrip().endswith("interrupted"), shown
    assert max(percents) < 50, shown  # stopped early in the run, not after most of it
    assert stopped_after < 20, f"interrupted {stopped_after:.1f} s after Ctrl-C"  # a run of over a minute
    assert not out.exists() and stdout == b""
