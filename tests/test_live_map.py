"""bench/live_map.py (issue 23, "the map as a benchmark"): its JSON contract on a quick subset, a cell skipped for
its estimated cost, and a bad --models value named with exit code 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "live_map.py")


def test_quick_map_writes_every_cell_with_its_verdict(tmp_path):
    out = tmp_path / "map.json"
    run = subprocess.run([sys.executable, SCRIPT, "--quick", "--models", "beta_binomial", "--max-seconds", "0.5",
                          "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    res = json.loads(out.read_text())
    # --quick: Laplace, n in {100, 10^6}, epsilon in {0.01, 1}
    assert res["total"] == len(res["cells"]) == 4 and res["quick"] is True
    assert res["by_model"] == {"beta_binomial": f"{res['live']} of 4"}
    for c in res["cells"]:
        assert {"model", "n", "epsilon", "mechanism", "picked", "estimated_s", "live"} <= set(c)
        if "skipped" in c:
            assert c["estimated_s"] > 0.5 and c["live"] is False
        else:
            assert {"ess_bulk", "ess_tail", "r_hat", "wall_time_s", "ess_bulk_per_s", "ess_tail_per_s"} <= set(c)
            assert c["live"] == (min(c["ess_bulk_per_s"], c["ess_tail_per_s"]) >= res["goal_ess_per_s"]
                                 and c["r_hat"] <= res["r_hat_max"])
    assert {c["picked"] for c in res["cells"]} == {"exact"}


def test_bad_models_value_is_named():
    run = subprocess.run([sys.executable, SCRIPT, "--models", "linear"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "--models 'linear' is invalid" in run.stderr
