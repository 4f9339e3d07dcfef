"""Session 26's fixes to things earlier sessions noticed and left (each test fails without its fix)."""
from __future__ import annotations

import numpy as np

from engine.core.results import Result
from figures.labels import result_label
from ui.compute.files import name_part


def _result(method, **info):
    return Result(method=method, param_names=("theta",), draws=np.zeros((1, 4, 1)), s_dp=np.array([1.0]), info=info)


def test_a_plug_in_size_is_written_with_thousands_separators_and_a_file_name_drops_them():
    """The legends said "Naive at plug-in n = 1000000" beside the figure's "plug-in n = 1,000,000" line."""
    label = result_label(_result("naive", plug_in_n=1_000_000))
    assert label == "Naive at plug-in n = 1,000,000"
    assert result_label(_result("exact", representation="grid", plug_in_n=12_345)) == \
        "Numerical posterior given plug-in n = 12,345"
    assert name_part(label) == "Naive_at_plug-in_n_1000000"
    assert name_part("p[0][1]") == "p_0_1" and name_part("a,b 1,23") == "a_b_1_23"


def test_every_method_switch_says_what_the_method_is():
    """A newcomer met "OPS", "Pseudo-marginal" and "Exact (closed form)" as bare switch labels; the last is a grid
    for the clamped models, which only the run's label said."""
    from app_support import open_app

    from ui import keys
    from ui.params.scenario import METHODS

    at = open_app()
    helps = {m: at.sidebar.toggle(key=keys.method_key(m)).help for m in METHODS}
    assert all(helps.values()), helps
    assert "numerical grid" in helps["exact"] and "Exact (numerical)" in helps["exact"]
    assert "approximate" in helps["bernstein_sheldon"] and "not a posterior" in helps["mcem"]
