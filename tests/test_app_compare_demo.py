"""The Compare page on the demo at ε = 0.1, as a presenter shows it (audit s21): what its headline, figure, run log
and downloads say. One run of the page serves every test here (the methods are slow on two cores)."""
from dataclasses import replace

import pytest

from app_support import open_app

from ui import keys
from ui.params.query import to_query
from ui.presets import DEMO


@pytest.fixture(scope="module")
def at():
    page = open_app(query=to_query(replace(DEMO, epsilon=0.1)), timeout=240)
    assert not page.exception, page.exception
    return page


def test_the_netcdf_file_offers_the_exact_posterior_first(at):
    """Audit s21 item 17: the NetCDF selector opened on Naive, the biased baseline."""
    box = at.selectbox(key=keys.W_NETCDF_METHOD)
    assert "naive" in box.options or "Naive" in box.options
    assert box.value == "auto"
