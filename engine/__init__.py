"""DP Posterior Lab engine: Bayesian inference from differentially private releases.

Methods: ``naive`` (conjugate update on s_dp as if exact), ``da_mcmc`` (Ju et al. 2022, Alg. 1),
``abc_rejection`` (Gong 2020, Alg. 3), ``ops`` (one-posterior sampling), ``exact`` (the
finite-mixture posterior), ``pseudo_marginal``, ``auto``, ``rjmcmc`` (unknown n, paper 002 Alg. 1)
and ``mcem`` (the MLE by Monte Carlo EM, paper 002 Alg. 2). The engine imports neither streamlit nor plotly.

The layers (core records, compiled kernels, mechanisms, models, numerics, methods, the API, studies
and the CLI) and where to add a model, a mechanism or a method: ARCHITECTURE.md at the repository root.
"""
from .api import METHODS, check_s_dp, confidential_posterior, data_rng, method_rng, prepare, run, run_method
from .core.chains import Cancelled
from .core.data import load_records_csv
from .core.results import Problem, Result
from .core.scenarios import DEMO_SPEC, scenario
from .core.spec import Spec, spec_to_dict, spec_to_toml
from .cost import BudgetExceeded, Cost, estimate_cost, fit_to_budget
from .dpwizard import import_dpwizard, read_package
from .mechanisms import MECHANISM_NAMES, budget_from_scale, make_mechanism, scale_from_budget
from .mechanisms.libraries import LibraryRelease, release_from, release_options
from .mechanisms.release import privatize
from .methods import METHOD_NAMES, validate_method
from .methods.abc_rejection import NoneAccepted
from .methods.exact import exact_mixture, has_closed_form
from .methods.rjmcmc import n_pmf
from .models import MODEL_INFO, MODEL_NAMES, make_model
from .models.custom import CustomModel
from .models.sample_size import SizePrior, UnknownSize, plug_in_n
from .numerics.plausibility import implausible_release, release_distance
from .numerics.diagnostics import convergence, draws_frame, summary, summary_dict, to_inference_data, write_outputs
from .protection.report import risk
from .spec import build_mechanism, load_spec, spec_from_dict
from .studies.cost import estimate_calibration_cost, estimate_sweep_cost, fit_calibration_to_budget, fit_sweep_to_budget
from .studies.mean_split import MeanSplit, mean_budget_split
from .studies.protection import protection_sweep
from .studies.sweep import epsilon_spec, epsilon_sweep, smallest_epsilon_meeting

__all__ = [
    "METHODS", "METHOD_NAMES", "MECHANISM_NAMES", "MODEL_NAMES", "MODEL_INFO",
    "Problem", "Result", "Spec", "CustomModel",
    "prepare", "run", "run_method", "confidential_posterior", "check_s_dp", "data_rng", "method_rng",
    "load_records_csv", "privatize", "build_mechanism", "validate_method",
    "epsilon_spec", "epsilon_sweep", "smallest_epsilon_meeting",
    "load_spec", "spec_from_dict", "spec_to_dict", "spec_to_toml",
    "make_model", "make_mechanism", "scale_from_budget", "budget_from_scale",
    "exact_mixture", "has_closed_form", "n_pmf", "SizePrior", "UnknownSize", "plug_in_n",
    "estimate_cost", "fit_to_budget", "Cost", "estimate_sweep_cost", "fit_sweep_to_budget",
    "estimate_calibration_cost", "fit_calibration_to_budget", "BudgetExceeded", "Cancelled", "NoneAccepted",
    "DEMO_SPEC", "scenario", "risk", "protection_sweep", "release_from", "release_options", "LibraryRelease",
    "mean_budget_split", "MeanSplit", "import_dpwizard", "read_package",
    "summary", "summary_dict", "draws_frame", "to_inference_data", "write_outputs", "convergence",
    "implausible_release", "release_distance",
]
