"""The terms the pages use, defined once in words a newcomer understands: every page that shows a term
takes its definition from here (a widget's ``help=``, a column's tooltip, the glossary expander).
Pure; nothing here imports streamlit."""
from __future__ import annotations

__all__ = ["GLOSSARY", "TERMS", "COLUMN_HELP", "METHOD_HELP", "glossary_markdown"]

GLOSSARY = {
    "epsilon": "ε (epsilon), the privacy-loss budget: how much the release may depend on any one person's "
               "record. Smaller ε means more noise and more privacy; must be > 0.",
    "delta": "δ (delta): the slack of (ε, δ)-DP: any set of outcomes may be at most e^ε times as likely with one "
             "person's record as with the other, plus δ. Informally, a small chance that the ε bound does not "
             "hold; not the chance that the privacy loss exceeds ε, which can be larger (Gaussian noise at "
             "(ε, δ) = (1, 10⁻⁵): 1.6·10⁻⁴). Strictly between 0 and 1, usually far below 1/n.",
    "rho": "ρ (rho): the budget of zero-concentrated DP (zCDP), the natural budget of Gaussian noise; must be > 0. "
           "Every ε-DP release is also ε²/2-zCDP, so ρ = ε²/2 is the lab's Gaussian counterpart of ε; but a "
           "Gaussian at that ρ is not ε-DP and allows stronger attacks (ρ = 0.5 is about (4.4, 10⁻⁵)-DP).",
    "zcdp": "zCDP (zero-concentrated differential privacy): a guarantee stated by a budget ρ; Gaussian noise of "
            "variance Δ²/(2ρ), with Δ the L2 sensitivity, is ρ-zCDP.",
    "gdp": "μ-GDP (Gaussian differential privacy): a guarantee stated by μ: telling from the release whether one "
           "person's record is one value or another is no easier than telling apart two normal distributions of sd 1 "
           "whose means are μ apart. Gaussian noise of sd σ on a statistic of sensitivity Δ is exactly μ-GDP with "
           "μ = Δ/σ, and so ρ-zCDP with ρ = μ²/2 (ρ = 0.5 is μ = 1). μ-GDP implies μ²/2-zCDP, not the reverse: "
           "another ρ-zCDP mechanism may allow stronger attacks than this curve.",
    "sensitivity": "Sensitivity Δ: the most the released statistic can change when one person's record is "
                   "replaced (added or removed, for OpenDP's releases and an unknown n), measured as the sum of "
                   "the changes (L1) for Laplace-type noise and as their Euclidean length (L2) for Gaussian-type "
                   "noise. The noise is scaled to it: b = Δ/ε for Laplace noise, σ = Δ/√(2ρ) for Gaussian noise.",
    "rhat": "R-hat: compares the chains of a sampler with each other; near 1 (at most 1.01) means they agree "
            "and explore the same distribution.",
    "ess": "ESS (effective sample size): how many independent draws the correlated draws of a chain are worth; "
           "at least 400 are needed for a trustworthy mean and 90% interval.",
    "ops": "OPS (one-posterior sampling): releases k draws from the posterior as the private output itself; "
           "valid but wider than the exact posterior by design, because the draws carry the privacy noise: each "
           "of the k draws spends ε/k of the budget, so with many draws (k = 100 by default) each is pulled towards "
           "the prior unless ε or n is large.",
    "independent": "Independent draws: draws from the posterior that do not depend on each other (closed form, "
                   "ABC rejection, naive, OPS); they need no R-hat, only enough of them (at least 400).",
    "naive": "Naive: treats the noisy release as if it were the exact statistic, so it ignores the privacy "
             "noise; too narrow and often off-centre.",
    "exact": "Exact: a posterior that accounts for the privacy noise exactly (closed form, DA-MCMC, ABC "
             "rejection, pseudo-marginal).",
    "q5_q95": "q5 and q95: the 5% and 95% posterior quantiles; together the 90% central interval.",
    "s_dp": "s_dp: the released (privatized) statistic, the confidential statistic plus noise.",
}

#: What each method is, for its switch in the sidebar (a newcomer meets "OPS" or "Pseudo-marginal" there first).
#: ``exact``'s says it is a closed form or a numerical grid: the switch is named before the run, the run's label says
#: which it turned out to be ("Exact (numerical)" for the clamped models and wide noise).
METHOD_HELP = {
    "naive": GLOSSARY["naive"] + " The baseline that fails.",
    "da_mcmc": "DA-MCMC (Ju et al. 2022): exact; a Markov chain over the parameters and the unseen confidential "
               "records together. Slow to mix where ε is small.",
    "abc_rejection": "ABC rejection (Gong 2020): exact; proposes parameters and data from the model and keeps each "
                     "with the noise's probability of the release. Slow where the noise is narrow.",
    "ops": GLOSSARY["ops"] + " It needs the confidential records (simulated or uploaded data).",
    "exact": "The exact posterior computed directly: a finite mixture of conjugate posteriors (closed form) where "
             "the noise allows, else a numerical grid with a bound on its error, which the tables and legends then "
             "name Exact (numerical); independent draws from it. For the one-parameter models and the histogram.",
    "pseudo_marginal": "Pseudo-marginal MCMC (Andrieu & Roberts 2009): exact; a chain over the parameters alone, the "
                       "release's likelihood estimated without bias by simulating the statistic. Fast where the "
                       "noise is wide.",
    "auto": "Exact (best method): runs the exact method estimated to give effective draws fastest for this model, "
            "release and ε (the closed form or grid where one exists) and says which it ran and why.",
    "bernstein_sheldon": "Bernstein & Sheldon (2018): approximate, not exact; Gibbs on the statistic with a normal "
                         "approximation of its law, as fast at any n; trust it only where n is large.",
    "rjmcmc": "Reversible-jump MCMC: exact where n itself is private; adds and deletes records, so n is a parameter.",
    "mcem": "Monte Carlo EM: the maximum-likelihood estimate from the release, with a 90% Wald interval; an "
            "estimator, not a posterior.",
}

#: Terms in the order the glossary lists them, with their display names.
TERMS = (("epsilon", "ε (epsilon)"), ("delta", "δ (delta)"), ("rho", "ρ (rho)"), ("zcdp", "zCDP"),
         ("gdp", "μ-GDP"), ("sensitivity", "Sensitivity Δ"), ("s_dp", "s_dp"), ("naive", "Naive"), ("exact", "Exact"),
         ("ops", "OPS"), ("independent", "Independent draws"), ("rhat", "R-hat"), ("ess", "ESS"),
         ("q5_q95", "q5 and q95"))


def glossary_markdown(terms=None) -> str:
    """The glossary (or the named ``terms`` of it) as a Markdown list, each term named once: a definition opens with
    its term (it stands alone as a tooltip), so the list sets that opening in bold, "- **ε (epsilon)**, the
    privacy-loss budget…" (it read "- **ε (epsilon)**: ε (epsilon), the privacy-loss budget…")."""
    wanted = [t for t in TERMS if terms is None or t[0] in terms]
    return "\n".join(_entry(name, GLOSSARY[key]) for key, name in wanted)


def _entry(name: str, definition: str) -> str:
    if definition.startswith(name):
        return f"- **{name}**{definition[len(name):]}"
    return f"- **{name}**: {definition}"


#: The comparison table's columns and what each means (the column's tooltip).
COLUMN_HELP = {
    # the MLE's row (an estimator, no posterior) fills the same columns: say so where the reader hovers
    "sd": "Posterior standard deviation; for the MLE (Monte Carlo EM) row: its standard error.",
    "q5": GLOSSARY["q5_q95"] + " For the MLE row: its 90% Wald interval.",
    "q95": GLOSSARY["q5_q95"] + " For the MLE row: its 90% Wald interval.",
    "parameter": "The model's parameter the row is about (the figure shows the one picked above it).",
    "MCSE": "Monte Carlo standard error of the mean: how far the draws' mean may be from the posterior mean "
            "because the draws are finite (sd / √ESS, the ESS of the mean itself; sd / √N for independent draws).",
    "MCSE q5": "Monte Carlo standard error of q5: how far the draws' 5% quantile may be from the posterior's, from "
               "the draws around it and that quantile's own ESS (ArviZ's mcse, method \"quantile\").",
    "MCSE q95": "Monte Carlo standard error of q95: how far the draws' 95% quantile may be from the posterior's, "
                "from the draws around it and that quantile's own ESS (ArviZ's mcse, method \"quantile\").",
    "R-hat": GLOSSARY["rhat"],
    "ESS bulk": GLOSSARY["ess"] + " Bulk: for the mean and centre.",
    "ESS tail": GLOSSARY["ess"] + " Tail: for the 5% and 95% quantiles.",
    "ESS bulk / tail": GLOSSARY["ess"] + " Bulk: for the mean and centre; tail: for the 5% and 95% quantiles. "
                       "Rounded down, k = thousand (Diagnostics shows them in full).",
    "converged": "The verdict, one per run: a sampler needs R-hat ≤ 1.01 and both ESS ≥ 400 for every parameter (the "
                 "worst are shown); independent draws need at least 400 draws (OPS's k draws are its private release, "
                 "whatever their number).",
    "acceptance": "DA-MCMC: mean acceptance probability of a record update (never below exp(−ε) for pure ε-DP); "
                  "pseudo-marginal: share of accepted moves of θ; ABC: share of proposals accepted.",
    "draws": "Number of draws behind the row's numbers.",
}
