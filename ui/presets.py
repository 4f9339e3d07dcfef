"""Named scenarios: the Compare page's demo and the Learn page's guided examples."""
from __future__ import annotations

from dataclasses import dataclass

from .params.defaults import default_truth, default_truth_p
from .params.scenario import Scenario

__all__ = ["Preset", "DEMO", "PRESETS", "BAYES_VS_MLE", "EPSILON_ONE"]


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    blurb: str
    scenario: Scenario


# Beta-binomial, n = 40, flat prior, Laplace epsilon = 0.3, simulated theta = 0.3, seed 7 (engine.DEMO_SPEC).
DEMO = Scenario()

GONG_COUNT = Scenario(
    model="poisson_gamma", n=1, prior=(("alpha", 25.0), ("beta", 1.0), ("upper", None)),
    mechanism="laplace", budget_form="epsilon", epsilon=0.2, data="s_dp", s_dp="37.4", truth="3.0",
    methods=("naive", "da_mcmc", "abc_rejection", "auto"),  # not OPS: it needs the records, which a release is not
    chains=4, draws=5000, warmup=1000,
)

ADMISSIONS = Scenario(
    model="dirichlet_multinomial", n=400, prior=(("alpha", "1, 1, 1, 1"),),
    mechanism="randomized_response", budget_form="coin", truth_prob=0.5,
    data="s_dp", s_dp="104, 120, 74, 102", truth="0.25, 0.25, 0.25, 0.25",
    # sticky chains: run longer (dapper). 4 x 20,000 draws: ESS about 1,200, R-hat 1.002-1.004 over seeds 7-9
    methods=("naive", "da_mcmc"), chains=4, draws=20_000, warmup=1000,
)

# dapper Example 2: the same table with discrete Gaussian noise on the cells, sigma = 6.25; with the
# L2 sensitivity sqrt(2) of a cell-count vector that is rho = 2 / (2 * 6.25^2) = 0.0256.
ADMISSIONS_DG = Scenario(
    model="dirichlet_multinomial", n=400, prior=(("alpha", "1, 1, 1, 1"),),
    mechanism="discrete_gaussian", budget_form="rho", rho=0.0256,
    data="s_dp", s_dp="110, 131, 47, 110", truth="0.25, 0.25, 0.25, 0.25",
    methods=("naive", "da_mcmc", "exact"),  # ABC needs ~20 million proposals here: switch it on to see
    chains=4, draws=5000, warmup=1000,
)

NAIVE_BIASED = Scenario(
    model="beta_binomial", n=100, prior=(("a", 1.0), ("b", 1.0)), mechanism="laplace", epsilon=0.1,
    data="simulate", truth="0.3", seed=3, methods=("naive", "da_mcmc", "exact"),
    draws=10_000,  # 2 x 10,000: ESS about 1,100 (2,000 draws left DA-MCMC at ESS 217: a preset opens converged)
)

# Large n: 100,000 records at epsilon = 0.05 (Laplace scale 20). The approximate Bernstein-Sheldon
# sampler's cost does not grow with n; here the CLT holds (n theta in the tens of thousands) and it
# agrees with the exact posterior.
LARGE_N = Scenario(
    model="beta_binomial", n=100_000, prior=(("a", 1.0), ("b", 1.0)), mechanism="laplace", epsilon=0.05,
    data="simulate", truth="0.3", seed=5, methods=("naive", "exact", "bernstein_sheldon", "pseudo_marginal"),
    draws=8000,  # 2 x 8,000: the pseudo-marginal ESS is 860-1,130 over seeds 5-7 (2,000 draws: R-hat 1.02)
)

# Paper 000 Sec. 5 (dapper Example 3) at the paper's size: n = 100 records, p = 2 predictors x ~ N((0.9, -1.17), I),
# y | x ~ N(beta_0 + x^T beta, 2), clamp [-10, 10], N(0, 2^2) priors, true beta = (-1.79, -2.89, -0.66);
# nine normalised statistics released with Laplace noise at epsilon = 3 (sensitivity p^2 + 3p + 3 = 13).
# DA-MCMC mixes slowly here (the latent records and beta are strongly correlated: paper 000 Sec. 6; at
# 4 x 10,000 draws its verdict usually fails), so the preset opens on naive and Exact (best method), which
# picks the pseudo-marginal sampler (converged in about a second, agreeing with long DA-MCMC runs);
# switching DA-MCMC on is the lecturer's step, the lesson in the blurb.
REGRESSION = Scenario(
    model="linear_regression", n=100,
    prior=(("p", 2), ("x_mean", "0.9, -1.17"), ("x_cov", "1, 0; 0, 1"), ("sigma", 2.0 ** 0.5), ("lo", "-10"),
           ("hi", "10"), ("prior_sd", 2.0)),
    mechanism="laplace", epsilon=3.0, data="simulate", truth="-1.79, -2.89, -0.66", seed=7,
    methods=("naive", "auto"), chains=4, draws=10_000, warmup=1000,
)

# Paper 000 Sec. 4 at the paper's size: N = 100 records, I = 5 classes, K = 5 features of J = 3 levels each, the
# K class-by-level tables released with Laplace noise at epsilon = 1 (sensitivity 2K = 10: one record moves two
# cells of each table), Dirichlet(2) priors, records simulated from the prior. Exact (best method) picks DA-MCMC
# here: 4 x 5,000 draws in 2-3 s, R-hat <= 1.004 and bulk ESS >= 1,200 over seeds 7-9.
_LOGLINEAR_PRIOR = (("class_levels", 5), ("feature_levels", "3, 3, 3, 3, 3"), ("alpha", 2.0))
LOGLINEAR = Scenario(
    model="naive_bayes_loglinear", n=100, prior=_LOGLINEAR_PRIOR,
    mechanism="laplace", epsilon=1.0, data="simulate", from_prior=True, seed=7,
    # the truth boxes show what the sidebar would (unused while simulating from the prior; the link omits them)
    truth=default_truth("naive_bayes_loglinear", dict(_LOGLINEAR_PRIOR)),
    truth_p=default_truth_p("naive_bayes_loglinear", dict(_LOGLINEAR_PRIOR)),
    methods=("naive", "auto"), chains=4, draws=5000, warmup=1000,
)

PRESETS = (
    Preset("gong", "Gong's privatized count",
           "One count released with Laplace noise at ε = 0.2 (scale 5): s_dp = 37.4, Gamma(25, 1) "
           "prior on the Poisson rate (Gong 2020). The exact posterior is a finite mixture.", GONG_COUNT),
    Preset("admissions", "Admissions table, randomized response",
           "400 applicants, each answer (sex, admitted) kept with probability 3/4 by two fair coin flips "
           "(Eng et al., dapper, Example 1); reported cells male&admit, male&reject, female&admit, "
           "female&reject = 104, 120, 74, 102.", ADMISSIONS),
    Preset("admissions_dg", "Admissions table, discrete Gaussian",
           "The same 400 applicants, now with discrete Gaussian noise (σ = 6.25, ρ = 0.0256) added to "
           "each released cell count, as a census-style release would (dapper, Example 2): s_dp = 110, 131, "
           "47, 110.", ADMISSIONS_DG),
    Preset("naive_biased", "Naive analysis is biased",
           "100 records with θ = 0.3, their count released at ε = 0.1 (Laplace scale 10): the "
           "released 10.1 is taken as the count by the naive posterior, whose 90% interval misses 0.3; the "
           "exact posterior is wide enough to cover it.", NAIVE_BIASED),
    Preset("large_n", "Large n: the fast approximate sampler",
           "100,000 records released at ε = 0.05. Record-level DA-MCMC would sweep 100,000 records per "
           "iteration; the Bernstein–Sheldon Gibbs sampler works on the sufficient statistic with a normal "
           "(CLT) approximation, so its cost does not depend on n. Where the CLT holds, as here, it matches "
           "the exact posterior; at small n, or θ near 0 or 1, its intervals miss the truth too often, so it is always "
           "labelled approximate.", LARGE_N),
    Preset("regression", "Linear regression from clamped, noisy statistics, the paper's size",
           "Ju et al. (2022) §5 at the paper's size: 100 records of two predictors and a response, each clamped to "
           "[−10, 10] and normalised; the nine sums (x̃ᵀỹ, ỹᵀỹ, x̃ᵀx̃) released with Laplace noise at ε = 3 "
           "(sensitivity p² + 3p + 3 = 13). The naive posterior inverts the noisy x̃ᵀx̃ as if exact and lands far "
           "from the truth. The exact posterior accounts for the noise and the clamping: the pseudo-marginal sampler "
           "(picked by Exact, best method) converges in about a second. Then switch on DA-MCMC in the sidebar: "
           "it updates one record at a time, and because the records and β move together it crawls, so its "
           "verdict fails at these draws; that is the lesson of Ju et al. 2022 §6, and why the lab picks another "
           "sampler. Pick a coefficient above the figure; all three are in the small multiples.", REGRESSION),
    Preset("loglinear", "Naive-Bayes log-linear model, the paper's size",
           "Ju et al. (2022) §4 at the paper's size: 100 records of a class with 5 levels and 5 features of 3 levels each; the "
           "5 class-by-feature tables (75 cells) released with Laplace noise at ε = 1 (sensitivity 2K = 10: one "
           "record moves two cells of each table). The naive posterior treats the noisy cells, some negative, as "
           "counts; the exact posterior (Exact, best method, here DA-MCMC over the 100 records) converges in a few "
           "seconds. Pick a class probability π or a feature probability p above the figure, or change ε to see "
           "the paper's Fig. 1a.", LOGLINEAR),
)

# Issue 9's worked example: the size is private too. 7.3 is a count released with Laplace noise of scale 2
# (epsilon = 0.5 at sensitivity 1), n_dp = 21.4 the size released with Laplace noise of scale 1; Poisson(20)
# prior on n, flat prior on theta. RJMCMC gives the posterior of (theta, n); MCEM the MLE of theta.
BAYES_VS_MLE = Preset(
    "bayes_vs_mle", "Bayesian vs MLE, unknown n",
    "A count s_dp = 7.3 (Laplace noise, scale 2) of an unknown number of records, released as n_dp = 21.4 "
    "(Laplace noise, scale 1); Poisson(20) prior on n. RJMCMC's posterior of θ and n, the MLE of θ by Monte "
    "Carlo EM, and the known-n methods at the plug-in n = 21.",
    Scenario(model="beta_binomial", n=20, mechanism="laplace", budget_form="epsilon", epsilon=0.5, data="s_dp",
             s_dp="7.3", sample_size="unknown", n_prior="poisson", n_prior_mean=20.0, n_mechanism="laplace",
             n_budget_form="scale", n_scale=1.0, n_dp="21.4", methods=("naive", "da_mcmc", "rjmcmc", "mcem")),
)


# "What epsilon = 1 means" (issue 21): one survey of 100 people (theta = 0.3, flat prior), its count released at
# epsilon = 1 by each mechanism family, opened on the What it protects page. The Gaussian ones state the budget
# as rho = epsilon^2 / 2 = 0.5, the zCDP budget every 1-DP release also meets (the Gaussian at it is not 1-DP).
_SURVEY = dict(model="beta_binomial", n=100, prior=(("a", 1.0), ("b", 1.0)), data="simulate", truth="0.3", seed=11,
               methods=("naive", "auto"))
EPSILON_ONE = (
    Preset("eps1_laplace", "Laplace noise, ε = 1",
           "The count of 100 answers plus Laplace noise of scale 1 (sensitivity 1): pure 1-DP. Someone who knew "
           "the other 99 answers can move a 50% guess about the last one to at most e/(1+e) = 73%, whatever the "
           "release.", Scenario(mechanism="laplace", budget_form="epsilon", epsilon=1.0, **_SURVEY)),
    Preset("eps1_discrete_laplace", "Discrete Laplace noise, ε = 1",
           "The same count with integer (two-sided geometric) noise: the release is a whole number, the guarantee "
           "the same pure 1-DP; the best attack is a randomized test between neighbouring counts.",
           Scenario(mechanism="discrete_laplace", budget_form="epsilon", epsilon=1.0, **_SURVEY)),
    Preset("eps1_gaussian", "Gaussian noise, ρ = 0.5",
           "Gaussian noise with the zCDP budget ρ = ε²/2 = 0.5 (σ = 1): no firm ceiling on what one release can "
           "reveal, and at this budget a stronger attack than Laplace noise at ε = 1 allows. The best attack on one "
           "person's record, wrong 5% of the time when it has the other value, detects it 26% of the time (14% under "
           "Laplace); in 31% of releases someone "
           "who knew the other 99 answers ends more than 73% sure of the last one, the most Laplace ever allows. "
           "Large moves are rare but possible: past 95% in 0.7% of releases.",
           Scenario(mechanism="gaussian", budget_form="rho", rho=0.5, **_SURVEY)),
    Preset("eps1_randomized_response", "Randomized response, ε = 1",
           "Each person flips their own answer with probability 1/(1+e) = 27% before anything is counted: local "
           "1-DP. The best attack sits exactly on the guarantee's curve.",
           Scenario(mechanism="randomized_response", budget_form="epsilon", epsilon=1.0, **_SURVEY)),
)
