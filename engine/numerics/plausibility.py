"""Is a release something the mechanism could have produced from n records at all?

A release ``s_dp = s + noise`` lies, with overwhelming probability, within a few noise standard
deviations of the statistic's range (``[0, n]`` for a count of n records, the simplex scaled by n
for cell counts, the clamped range for clamped sums). The distance from ``s_dp`` to the nearest
statistic the model can produce (``model.project``, the same projection the naive method uses),
in units of the noise sd, says how far out it is, coordinate by coordinate (the noise is independent
per coordinate), the largest coordinate counting:

    z = max_j |s_dp[j] − proj(s_dp)[j]| / sd_noise,

with proj rounded to whole numbers for a count (a count of 200.3 is not a statistic any records produce: under
noise far narrower than 1 such a release is as implausible as one beyond n).

Beyond ``IMPLAUSIBLE_SDS = 6`` the release is called implausible: noise that large has probability
below exp(−6·√2) ≈ 2·10⁻⁴ for Laplace noise (P(|X| > z·sd) = exp(−z√2)), about the same for
discrete Laplace and far less (2·10⁻⁹) for Gaussian noise. Such a release is almost surely a typo
(s_dp = 1e9) or a wrong n (s_dp = −500 with n = 30); the exact posterior still exists (it is
pushed to the edge of the prior's support) and the exact methods compute it, but ABC rejection's
acceptance probability is far below anything it can reach, so it is not run on such a release.
Randomized response (counts checked exactly at the boundary), an unknown n and the regression (whose
projection is onto its raw moments, not the released entries) are not judged.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.results import expect_problem

__all__ = ["IMPLAUSIBLE_SDS", "release_distance", "implausible_release"]

IMPLAUSIBLE_SDS = 6.0


def release_distance(problem) -> dict[str, Any] | None:
    """``{"noise_sds": z, "nearest": [...], "noise_sd": sd}`` for an additive mechanism with a known n,
    else None (randomized response, an unknown n, a model without a projection)."""
    expect_problem(problem)
    model, mech = problem.model, problem.mechanism
    noise_sd = getattr(mech, "noise_sd", None)
    if problem.unknown_n is not None or noise_sd is None or not hasattr(model, "project"):
        return None
    if getattr(mech, "release_law", False) and getattr(mech, "side", 0) != 0:
        return None  # a release on its clip bound is a point mass there, not noise that far from s
    sd = float(noise_sd() if callable(noise_sd) else noise_sd)
    if not (sd > 0 and math.isfinite(sd)):
        return None
    s = np.asarray(problem.s_dp, float)
    nearest = np.asarray(model.project(s), float)
    if nearest.size != s.size:  # a projection onto another representation (the regression's raw moments)
        return None
    nearest = nearest.reshape(s.shape)
    if getattr(model, "integer_statistic", False):  # a count is a whole number: 200.3 lies 0.3 from 200, which
        nearest = np.round(nearest)                  # under noise of sd 0.0014 is 212 sds (it said 0)
    z = float(np.max(np.abs(s - nearest))) / sd
    return {"noise_sds": z, "nearest": nearest.tolist(), "noise_sd": sd}


def implausible_release(problem) -> str | None:
    """A sentence saying how far the release lies outside what the mechanism could produce from n
    records, or None when it is within ``IMPLAUSIBLE_SDS`` noise sds (or not judged)."""
    d = release_distance(problem)  # which checks ``problem`` first
    if d is None or d["noise_sds"] <= IMPLAUSIBLE_SDS:
        return None
    s = ", ".join(f"{v:.6g}" for v in np.asarray(problem.s_dp, float))
    near = ", ".join(f"{v:.6g}" for v in d["nearest"])
    return (f"data.s_dp = [{s}] is implausible: it lies {d['noise_sds']:.3g} noise sds (noise sd {d['noise_sd']:.3g}) "
            f"from the nearest statistic that {problem.model.n:,} records can produce ([{near}]); noise that large "
            f"has probability below 2e-4. Check the release and n: exact methods still answer, ABC rejection "
            "would almost never accept")
