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


def test_the_exact_everywhere_map_counts_independent_draws_without_an_r_hat(monkeypatch):
    """bench/run.py printed "live map: 0/80 cells" after session 21: summary() gives independent draws (the exact
    posterior auto picks on these cells) no R-hat (NaN), and the map took max(r_hat) <= 1.01, false for NaN. With
    the speed goal set to 0 (this test times nothing), every exact cell is reached and states no R-hat."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import exact_everywhere
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(exact_everywhere, "GOAL_ESS_PER_S", 0.0)
    out = exact_everywhere.live_map(n_values=(10,), eps_values=(1.0,))
    assert out["reached"] == out["total"] == 4, out["cells"]
    assert all(c["picked"] == "exact" and c["r_hat"] is None for c in out["cells"]), out["cells"]
