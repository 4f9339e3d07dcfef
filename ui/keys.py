"""Session-state keys: every ``st.session_state`` name the app uses, in one place.

``SCENARIO`` holds the canonical :class:`ui.params.scenario.Scenario`. The scenario widgets in the sidebar
all start with :data:`SCENARIO_WIDGET_PREFIX`; they are re-seeded from ``SCENARIO`` whenever
Streamlit drops a widget's state (a page switch) and cleared together when a preset loads. Keys
that depend on the model, mechanism or method are built by the functions at the bottom, never by
string literals in pages.
"""
from __future__ import annotations

# Canonical state (not widgets) ------------------------------------------------------------------
SCENARIO = "scenario"  # ui.params.scenario.Scenario currently shown
LINK_NOTE = "link_note"  # why a shared link could not be read (shown once)
UPLOAD = "upload"  # {"name": str, "size": int, "records": ndarray} of the last valid CSV upload
PRESET_NOTE = "preset_note"  # which preset was just loaded (shown once on the Compare page)
BUDGET_NOTE = "budget_note"  # the budget carried over by a switch of mechanism or release (shown once, under the box)
BUDGET_SCENARIO = "budget_scenario"  # the last scenario whose model and noise built: the budget a switch carries
STOPPED_RUN = "stopped_run"  # the scenario (canonical spec JSON) whose run the Stop button stopped
W_STOP = "pw_stop"  # the Stop button beside a run in progress
W_SWEEP_AS_LAB = "pw_sweep_as_lab"  # Privacy budget: a library release's noise swept with the lab's own mechanism
W_FIT_BUDGET = "pw_fit_budget"  # "use settings that fit" button (per method: W_FIT_BUDGET + "_" + method)
LAST_PAGE = "last_page"  # page of the previous run: a page switch re-seeds the sidebar widgets
LINKED_UPLOAD = "linked_upload"  # the session opened on a link made from an upload (its file is not in it)
WRITTEN_QUERY = "written_query"  # the scenario's part of the URL as the sidebar last wrote it (Back, Forward)
WRITTEN_BUDGET_QUERY = "written_budget_query"  # the Privacy budget page's part of the URL as it last wrote it
BUDGET_SIDEBAR_EPS = "budget_sidebar_eps"  # the sidebar's ε (as a sweep ε) when the Privacy budget page last ran
BUDGET_LINK_READ = "budget_link_read"  # the Privacy budget page read its link keys this run ("Your ε" keeps them)
TYPED_ERRORS = "typed_number_errors"  # {sidebar section: message} of number boxes whose text is not a number

# Scenario widgets (sidebar, shared by Compare, Privacy budget and Diagnostics) --------------------
SCENARIO_WIDGET_PREFIX = "sw_"
W_MODEL = "sw_model"
W_N = "sw_n"
W_MECHANISM = "sw_mechanism"
W_EPSILON = "sw_epsilon"
W_RHO = "sw_rho"
W_DELTA = "sw_delta"
W_TRUTH_PROB = "sw_truth_prob"
W_SENS_OVERRIDE = "sw_sensitivity_override"
W_SENSITIVITY = "sw_sensitivity"
W_DATA = "sw_data"
W_SEED = "sw_seed"
W_CSV = "sw_csv"
W_CSV_COLUMN = "sw_csv_column"
W_CHAINS = "sw_chains"
W_DRAWS = "sw_draws"
W_WARMUP = "sw_warmup"
W_ABC_SECONDS = "sw_abc_max_seconds"
W_ABC_PROPOSALS = "sw_abc_max_proposals"
W_OPS_K = "sw_ops_k"
W_SAMPLE_SIZE = "sw_sample_size"  # known / unknown (private: released with noise, or only inside the statistic)
W_N_PRIOR = "sw_n_prior"
W_N_PRIOR_MEAN = "sw_n_prior_mean"
W_N_PRIOR_DISPERSION = "sw_n_prior_dispersion"
W_N_MECHANISM = "sw_n_mechanism"
W_N_BUDGET_FORM = "sw_n_budget_form"
W_N_EPSILON = "sw_n_epsilon"
W_N_SCALE = "sw_n_scale"
W_N_DP = "sw_n_dp"
W_TRUTH_P = "sw_truth_p"  # naive_bayes_loglinear: the true p[k][i][j], flat text
W_FROM_PRIOR = "sw_from_prior"  # naive_bayes_loglinear: draw the true parameters from the prior
W_RELEASE = "sw_release"  # How was it released? the lab's own simulation, OpenDP or diffprivlib

# dp-wizard package (sidebar, Data section): not "sw_" keys, so a page switch or loading a statistic keeps them
DPWIZARD = "dpwizard_import"  # {"name", "summary", "specs", "error"} of the last uploaded package
W_DPWIZARD = "pw_dpwizard_upload"
W_DPWIZARD_PICK = "pw_dpwizard_pick"
W_DPWIZARD_LOAD = "pw_dpwizard_load"

# Parameter picker (Compare, Diagnostics, Privacy budget): the canonical pick, then one widget per page
PICKED_PARAM = "picked_param"  # the parameter whose marginal the main figures show (multi-parameter models)
PARAM_QUERY = "param"  # the page address's key for that pick, when it is not the first parameter (ui.picker)
P_RESIZED = "shape_resized"  # what a change of p (regression) or of the levels (log-linear) kept, said once
W_PARAM_COMPARE = "pw_param_compare"
W_PARAM_DIAG = "pw_param_diag"
W_MULTIPLES = "pw_multiples"  # the small-multiples expander (open or not)
W_MULTIPLES_PAGE = "pw_multiples_page"  # small multiples: which page of panels
MULTIPLES_CHART = "pw_multiples_chart"

# Compare page -----------------------------------------------------------------------------------
W_NETCDF_METHOD = "pw_netcdf_method"
W_TOML_RECORDS = "pw_toml_records"  # put an upload's confidential records in the TOML download (off by default)
W_SHARE_DIRECT = "pw_share_direct"  # an upload: put what the records show directly in the downloads (off)
POSTERIOR_CHART = "pw_posterior_chart"
N_PMF_CHART = "pw_n_pmf_chart"

# Privacy budget page ----------------------------------------------------------------------------
W_GRID = "pw_budget_grid"
W_GRID_MIN = "pw_budget_grid_min"
W_GRID_MAX = "pw_budget_grid_max"
W_GRID_POINTS = "pw_budget_grid_points"
W_GRID_FILL = "pw_budget_grid_fill"
W_SWEEP_METHODS = "pw_sweep_methods"
STOPPED_SWEEP = "stopped_sweep"  # the sweep (ui.compute.sweeps.sweep_key) whose run the Stop button stopped
W_SWEEP_STOP = "pw_sweep_stop"  # the Stop button beside a sweep in progress
W_SWEEP_FIT = "pw_sweep_fit"  # "use settings that fit" button of a sweep over the work budget
W_SWEEP_PARAM = "pw_sweep_param"
W_TARGET_SD = "pw_target_sd"
W_STEP = "pw_budget_step"
INTERVAL_CHART = "pw_interval_chart"
SD_CHART = "pw_sd_chart"
STEP_CHART = "pw_step_chart"
W_FRESH = "pw_budget_fresh"  # fresh releases per epsilon (replicates) on or off
W_FRESH_COUNT = "pw_budget_fresh_count"  # R, releases per epsilon
RELEASES_CHART = "pw_releases_chart"
W_MEAN_SPLIT = "pw_mean_split"  # a mean released as (sum, count): compute the best split on or off
W_MEAN_LOWER = "pw_mean_lower"
W_MEAN_UPPER = "pw_mean_upper"
W_MEAN_SD = "pw_mean_sd"
W_MEAN_N = "pw_mean_n"
W_MEAN_PRIOR_MEAN = "pw_mean_prior_mean"
W_MEAN_PRIOR_SD = "pw_mean_prior_sd"
MEAN_SPLIT_CHART = "pw_mean_split_chart"

# Diagnostics page -------------------------------------------------------------------------------
W_DIAG_METHOD = "pw_diag_method"
TRACE_CHART = "pw_trace_chart"
ACCEPTANCE_CHART = "pw_acceptance_chart"
RANK_CHART = "pw_rank_chart"
MCEM_CHART = "pw_mcem_chart"

# Calibration page -------------------------------------------------------------------------------
SWEEP_AS_LAB_REQUEST = "pw_sweep_as_lab_request"  # Privacy budget: the lab's mechanism asked for (the run reads it)
STUDY_REQUEST = "cal_request"  # a study asked for (the Run button): the run it starts reads the boxes
STUDY_RESULT = "cal_result"  # CalibrationInputs of the last finished study (re-read from the cache)
PRESET_RESULT = "cal_preset_result"  # name of the last preset run
PRESET_REQUEST = "cal_preset_request"  # preset name to run on this rerun (set by the Run preset button)
PRESET_RUNNING = "cal_preset_running"  # preset name running on this rerun (what Stop stops)
PRESET_STOPPED = "cal_preset_stopped"  # preset name stopped (Stop button or newer input) before it finished
STUDY_RUNNING = "cal_running"  # CalibrationInputs of the study running on this rerun (what Stop stops)
STUDY_STOPPED = "cal_stopped"  # CalibrationInputs of a study stopped (Stop button or newer input) before it finished
W_CAL_MODEL = "pw_cal_model"
W_CAL_MECHANISM = "pw_cal_mechanism"
W_CAL_EPSILON = "pw_cal_epsilon"
W_CAL_N = "pw_cal_n"
W_CAL_METHODS = "pw_cal_methods"
W_CAL_M = "pw_cal_replicates"
W_CAL_RUN = "pw_cal_run"
W_CAL_CANCEL = "pw_cal_cancel"  # the Stop button beside a study in progress
W_CAL_FIT = "pw_cal_fit"  # "run with M that fits" button of a study over the work budget
W_CAL_PRESET = "pw_cal_preset"
W_CAL_PRESET_RUN = "pw_cal_preset_run"
W_CAL_PRESET_CANCEL = "pw_cal_preset_cancel"  # the Stop button beside a preset in progress
W_CAL_DOWNLOAD = "pw_cal_download"
W_CAL_SUMMARY_DOWNLOAD = "pw_cal_summary_download"

# Calibration page figures (their download buttons derive their keys from these)
CAL_ECDF_CHART = "pw_cal_ecdf_chart"
CAL_COVERAGE_CHART = "pw_cal_coverage_chart"
CAL_KS_CHART = "pw_cal_ks_chart"
CAL_MMD_CHART = "pw_cal_mmd_chart"
CAL_SBC_CHART = "pw_cal_sbc_chart"

# What it protects page (pages/protection.py): its charts
PROTECTION_TRADEOFF_CHART = "pw_protection_tradeoff_chart"
FRONTIER_CHART = "pw_frontier_chart"  # Privacy budget: protection against utility over the ε grid
PROTECTION_BELIEF_CHART = "pw_protection_belief_chart"
PROTECTION_RECORD_CHART = "pw_protection_record_chart"


def preset_chart_key(preset: str, figure: str) -> str:
    """Key of one figure of a paper preset on the Calibration page."""
    return f"pw_cal_preset_{preset}_{figure}"


def prior_key(model: str, field: str) -> str:
    """Widget of one prior field of one model (each model keeps its own values)."""
    return f"{SCENARIO_WIDGET_PREFIX}prior_{model}_{field}"


def truth_key(model: str) -> str:
    """Widget of the true parameter used to simulate data under ``model``."""
    return f"{SCENARIO_WIDGET_PREFIX}truth_{model}"


def s_dp_key(model: str) -> str:
    """Widget of a typed-in release for ``model`` (its length depends on the model)."""
    return f"{SCENARIO_WIDGET_PREFIX}s_dp_{model}"


def budget_form_key(mechanism: str) -> str:
    """Widget choosing how ``mechanism``'s budget is stated (e.g. rho or epsilon + delta)."""
    return f"{SCENARIO_WIDGET_PREFIX}budget_form_{mechanism}"


def release_mechanism_key(library: str) -> str:
    """Widget choosing a library's mechanism (its own name: ``laplace``, ``GaussianAnalytic``, ...)."""
    return f"{SCENARIO_WIDGET_PREFIX}release_{library}_mechanism"


def release_param_key(library: str, mechanism: str, param: str) -> str:
    """Widget of one parameter of one library mechanism (each mechanism keeps its own values: a delta of 0 is
    right for diffprivlib's Laplace and refused by its Gaussian)."""
    return f"{SCENARIO_WIDGET_PREFIX}release_{library}_{mechanism}_{param}"


def method_key(method: str) -> str:
    """On/off switch of one method."""
    return f"{SCENARIO_WIDGET_PREFIX}method_{method}"


def table_all_key(model: str) -> str:
    """Compare table toggle: every parameter, or the picked one only (per model: its default depends on
    how many parameters the model has)."""
    return f"pw_table_all_params_{model}"


def preset_key(name: str) -> str:
    """Button that loads one preset on the Learn page."""
    return f"pw_preset_{name}"


def is_scenario_widget(key: str) -> bool:
    return key.startswith(SCENARIO_WIDGET_PREFIX)
