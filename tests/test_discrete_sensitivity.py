"""Discrete noise on an integer statistic moves between whole numbers, so its sensitivity is a norm of a
whole-number move: an integer (L1, or any norm of a one-number statistic) or, for the discrete Gaussian's L2 norm
over several counts, the square root of one. A sensitivity of 1.5 on poisson_gamma made the risk pair 0 against
1.5 (a record that does not exist) and a ceiling of 79.1% matching neither the stated 1-DP (73.1%) nor what integer
records get (66.1%); it is refused, as the library tables already refuse it."""
from __future__ import annotations

import math

import pytest

import engine
from ui.params.messages import in_words

MESSAGE = ("mechanism.sensitivity = 1.5 is invalid: must be an integer ≥ 1 for discrete noise on an integer "
           "statistic")


def _spec(model, mechanism):
    return {"seed": 3, "model": model, "mechanism": mechanism, "data": {"s_dp": [12.0]}}


@pytest.mark.parametrize("name, budget", [("discrete_laplace", {"epsilon": 1.0}), ("discrete_gaussian", {"rho": 0.5})])
@pytest.mark.parametrize("model", [{"name": "poisson_gamma", "n": 10}, {"name": "beta_binomial", "n": 20},
                                   {"name": "dirichlet_multinomial", "n": 20, "alpha": [1.0, 1.0, 1.0]}],
                         ids=lambda m: m["name"])
def test_a_non_integer_sensitivity_for_discrete_noise_is_refused(name, budget, model):
    spec = _spec(model, {"name": name, "sensitivity": 1.5, **budget})
    if model["name"] == "dirichlet_multinomial":
        spec["data"]["s_dp"] = [6.0, 7.0, 7.0]
    with pytest.raises(ValueError, match=MESSAGE):
        engine.prepare(spec)


def test_the_square_root_of_a_whole_number_is_an_l2_sensitivity_only_over_several_counts():
    """dirichlet_multinomial's own L2 sensitivity √2 (one count down, another up) stays valid for the discrete
    Gaussian; on a one-number statistic √2 is a move no record makes."""
    hist = {"seed": 3, "model": {"name": "dirichlet_multinomial", "n": 20, "alpha": [1.0, 1.0, 1.0]},
            "mechanism": {"name": "discrete_gaussian", "rho": 0.5}, "data": {"s_dp": [6.0, 7.0, 7.0]}}
    assert engine.prepare(hist).mechanism.sensitivity == pytest.approx(math.sqrt(2))
    hist["mechanism"]["sensitivity"] = math.sqrt(2)
    engine.prepare(hist)
    with pytest.raises(ValueError, match="mechanism.sensitivity = 1.4142135623730951 is invalid: must be an integer"):
        engine.prepare(_spec({"name": "poisson_gamma", "n": 10},
                             {"name": "discrete_gaussian", "rho": 0.5, "sensitivity": math.sqrt(2)}))


def test_whole_number_sensitivities_and_continuous_noise_are_unchanged():
    r = engine.risk(_spec({"name": "poisson_gamma", "n": 10},
                          {"name": "discrete_laplace", "epsilon": 1.0, "sensitivity": 2}), realistic=False)
    assert r["neighbours"]["shift"] == [2.0]
    assert r["informed_adversary"]["max"] == pytest.approx(1 / (1 + math.exp(-1.0)), abs=1e-12)
    engine.prepare(_spec({"name": "poisson_gamma", "n": 10}, {"name": "laplace", "epsilon": 1.0, "sensitivity": 1.5}))


def test_the_sidebar_says_it_next_to_the_sensitivity_box():
    with pytest.raises(ValueError) as err:
        engine.prepare(_spec({"name": "poisson_gamma", "n": 10},
                             {"name": "discrete_laplace", "epsilon": 1.0, "sensitivity": 1.5}))
    words = in_words(str(err.value))
    assert words.startswith("sensitivity Δ must be an integer ≥ 1 for discrete noise on an integer statistic")
    assert "(you entered 1.5)" in words


def test_command_line_refuses_it_in_one_line_with_exit_2(tmp_path, cli):
    spec = tmp_path / "spec.toml"
    spec.write_text('seed = 3\n[model]\nname = "poisson_gamma"\nn = 10\n[mechanism]\nname = "discrete_laplace"\n'
                    'epsilon = 1\nsensitivity = 1.5\n[data]\ns_dp = [12.0]\n')
    out = cli("risk", str(spec), "--out", str(tmp_path / "o"))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + MESSAGE)
    assert not (tmp_path / "o" / "risk.json").exists()
