"""The naive-Bayes log-linear model (Ju et al. 2022, Sec. 4) and its DA-MCMC sampler.

Tier (a): the compiled sweep :func:`engine.kernels.da_mcmc.loglinear_chain` next to a plain-Python
transcription of Algorithm 1 for this model written here, both consuming the same
``numpy.random.Generator`` stream: identical records, tables, draws and sampler statistics, with
both Metropolis paths taken; every single Metropolis ratio is >= exp(-epsilon) (Prop. 3.1) at the
release's sensitivity 2K, which is checked by brute force over all record pairs.
Tier (c): simulation-based calibration (Talts et al. 2018) of pi and a few p entries at n = 30,
K = 2, I = 2, J = (2, 3), epsilon = 1, with the naive posterior as the negative control.
Plus the naive projection, the spec/CSV/CLI round trip and reproducibility.
"""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import engine
from engine.api import prepare
from engine.cli import main
from engine.core.results import Problem
from engine.kernels import da_mcmc as kernels
from engine.mechanisms import Laplace
from engine.methods.da_mcmc import da_mcmc
from engine.methods.naive import naive
from engine.models import NaiveBayesLoglinear, make_model

ABS, SQUARE = 0, 1
P_TRUE = [[[0.2, 0.8], [0.6, 0.4]], [[0.1, 0.3, 0.6], [0.5, 0.25, 0.25]]]
SPEC = {"seed": 3, "model": {"name": "naive_bayes_loglinear", "n": 30, "class_levels": 2, "feature_levels": [2, 3]},
        "mechanism": {"name": "laplace", "epsilon": 1.0},
        "data": {"simulate": {"pi": [0.3, 0.7], "p": P_TRUE}},
        "method": {"name": "da_mcmc", "chains": 2, "draws": 300, "warmup": 100}}


def _log_noise(kernel, scale, r):
    return -abs(r) / scale if kernel == ABS else -0.5 * (r / scale) ** 2


def _categorical(rng, probs):
    """Inverse-cdf draw as in Algorithm 1's proposal: one uniform, cumulative sums, first cell above."""
    cdf = np.cumsum(probs)
    u = rng.random() * cdf[-1]
    j = 0
    while j < len(probs) - 1 and u >= cdf[j]:
        j += 1
    return j


def ref_loglinear(rng, rec, counts, class_counts, levels, alpha, s_dp, kernel, scale, n_iter, stats_out):
    """Algorithm 1 for the naive-Bayes model, written from the paper with explicit tables."""
    big_i, big_k = class_counts.size, len(levels)
    tables = [counts[o:o + big_i * jk].reshape(big_i, jk) for o, jk in
              zip(np.concatenate([[0], np.cumsum(big_i * np.asarray(levels))[:-1]]), levels)]  # views
    thetas, accs, fracs, alphas = [], [], [], []
    for _ in range(n_iter):
        g = np.array([rng.gamma(alpha + c, 1.0) for c in class_counts])
        pi = g / g.sum()
        p = []
        for tab in tables:
            rows = []
            for row in tab:
                g = np.array([rng.gamma(alpha + c, 1.0) for c in row])
                rows.append(g / g.sum())
            p.append(rows)
        thetas.append(np.concatenate([pi] + [np.concatenate(rows) for rows in p]))
        asum, nacc = 0.0, 0
        for r in range(rec.shape[0]):
            y_new = _categorical(rng, pi)
            x_new = [_categorical(rng, p[k][y_new]) for k in range(big_k)]
            y = rec[r, 0]
            if y_new == y and all(x_new[k] == rec[r, k + 1] for k in range(big_k)):
                asum += 1.0
                nacc += 1
                continue
            lr = 0.0
            for k, tab in enumerate(tables):
                m = s_dp_tables(s_dp, levels, big_i)[k]
                old, new = (y, rec[r, k + 1]), (y_new, x_new[k])
                if old == new:
                    continue
                lr += (_log_noise(kernel, scale, m[new] - tab[new] - 1) - _log_noise(kernel, scale, m[new] - tab[new])
                       + _log_noise(kernel, scale, m[old] - tab[old] + 1) - _log_noise(kernel, scale, m[old] - tab[old]))
            al = min(1.0, math.exp(lr))
            alphas.append(al)
            asum += al
            if al >= 1.0:
                accept = True
            else:
                accept = rng.random() < al
                stats_out["accepted" if accept else "rejected"] += 1
            if accept:
                for k, tab in enumerate(tables):
                    tab[y, rec[r, k + 1]] -= 1
                    tab[y_new, x_new[k]] += 1
                    rec[r, k + 1] = x_new[k]
                class_counts[y] -= 1
                class_counts[y_new] += 1
                rec[r, 0] = y_new
                nacc += 1
        accs.append(asum / rec.shape[0])
        fracs.append(nacc / rec.shape[0])
    stats_out["min_alpha"] = min(alphas)
    return np.array(thetas), np.array(accs), np.array(fracs)


def s_dp_tables(s_dp, levels, big_i):
    out, o = [], 0
    for jk in levels:
        out.append(np.asarray(s_dp[o:o + big_i * jk]).reshape(big_i, jk))
        o += big_i * jk
    return out


# --------------------------------------------------------------------------- compiled == reference
@pytest.mark.parametrize("kernel", [ABS, SQUARE])
def test_loglinear_chain_matches_reference(kernel):
    model = NaiveBayesLoglinear(n=25, class_levels=3, feature_levels=(2, 3, 2), alpha=2.0)
    n_iter, epsilon = 30, 1.5
    scale = model.default_sensitivity() / epsilon
    rng0 = np.random.default_rng(11 + kernel)
    rec0 = model.sample_records(rng0, model.sample_prior(rng0, 1)[0])
    s_dp = model.statistic(model.sample_records(rng0, model.sample_prior(rng0, 1)[0])) + rng0.laplace(0, scale, model.stat_dim)
    rec_c, rec_p = rec0.copy(), rec0.copy()
    cnt_c, cnt_p = model.statistic(rec0), model.statistic(rec0)
    cls_c = np.bincount(rec0[:, 0], minlength=3).astype(float)
    cls_p = cls_c.copy()
    out = (np.zeros((n_iter, len(model.param_names))), np.zeros(n_iter), np.zeros(n_iter))
    rng_c, rng_p = np.random.default_rng(5), np.random.default_rng(5)
    kernels.loglinear_chain(rng_c, rec_c, cnt_c, cls_c, np.asarray(model.feature_levels, np.int64), model.offsets,
                            2.0, s_dp, kernel, scale, n_iter, *out)
    tally = {"accepted": 0, "rejected": 0}
    ref = ref_loglinear(rng_p, rec_p, cnt_p, cls_p, model.feature_levels, 2.0, s_dp, kernel, scale, n_iter, tally)
    np.testing.assert_array_equal(rec_c, rec_p)
    np.testing.assert_array_equal(cnt_c, cnt_p)
    np.testing.assert_array_equal(cnt_c, model.statistic(rec_c))
    np.testing.assert_array_equal(cls_c, np.bincount(rec_c[:, 0], minlength=3))
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)
    assert rng_c.random() == rng_p.random()  # same number of draws consumed
    assert tally["accepted"] > 0 and tally["rejected"] > 0, tally
    if kernel == ABS:  # Prop. 3.1 for every single proposal: Laplace(2K/eps) is eps-DP
        assert tally["min_alpha"] >= math.exp(-epsilon) - 1e-12


# --------------------------------------------------------------------------- sensitivity and projection
def test_sensitivity_is_2k_by_brute_force():
    """Every pair of records (y, x), (y', x') moves the stacked tables by at most 2K in L1 and
    sqrt(2K) in L2, with equality when y changes: the default sensitivities are tight."""
    model = NaiveBayesLoglinear(n=1, class_levels=2, feature_levels=(2, 3, 2))
    space = list(itertools.product(range(2), range(2), range(3), range(2)))
    stat = {r: model.statistic(np.array([r])) for r in space}
    l1 = max(np.abs(stat[a] - stat[b]).sum() for a in space for b in space)
    l2 = max(np.linalg.norm(stat[a] - stat[b]) for a in space for b in space)
    assert l1 == model.default_sensitivity() == 6.0
    assert l2 == pytest.approx(model.default_sensitivity(l2=True)) and l2 == pytest.approx(math.sqrt(6.0))
    mech = prepare(SPEC).mechanism
    assert isinstance(mech, Laplace) and mech.scale == pytest.approx(4.0)  # 2K / epsilon with K = 2, epsilon = 1


def test_projection_gives_valid_consistent_tables():
    model = NaiveBayesLoglinear(n=30, class_levels=3, feature_levels=(2, 4))
    rng = np.random.default_rng(0)
    for _ in range(50):
        s_dp = model.statistic(model.sample_records(rng, model.sample_prior(rng, 1)[0])) + rng.laplace(0, 8, model.stat_dim)
        t0, t1 = model._tables(model.project(s_dp))
        assert (t0 >= 0).all() and (t1 >= 0).all()
        np.testing.assert_allclose(t0.sum(axis=1), t1.sum(axis=1), atol=1e-9)
        assert t0.sum() == pytest.approx(30.0) and t1.sum() == pytest.approx(30.0)
    exact = model.statistic(model.sample_records(rng, model.sample_prior(rng, 1)[0]))
    np.testing.assert_allclose(model.project(exact), exact, atol=1e-9)  # valid tables are kept


def test_naive_is_the_conjugate_posterior_of_the_projection():
    problem = prepare(SPEC)
    res = naive(problem, np.random.default_rng(1), draws=20000)
    a_pi = 2.0 + problem.model._tables(problem.model.project(problem.s_dp))[0].sum(axis=1)
    mean = res.flat("pi[0]").mean()
    sd = math.sqrt(a_pi[0] * a_pi[1] / (a_pi.sum() ** 2 * (a_pi.sum() + 1)))
    assert abs(mean - a_pi[0] / a_pi.sum()) < 4 * sd / math.sqrt(20000)
    assert res.info["note"].endswith("projection onto the statistic's support")


# --------------------------------------------------------------------------- Prop. 3.1 through da_mcmc
def test_acceptance_never_below_exp_minus_epsilon():
    problem = prepare(SPEC)
    res = da_mcmc(problem, np.random.default_rng(2), chains=2, draws=200, warmup=20)
    bound = res.info["epsilon_bound"]
    assert bound == pytest.approx(math.exp(-1.0))
    assert (np.asarray(res.sample_stats["acceptance_rate"]) >= bound).all()
    assert min(res.info["min_acceptance_per_chain"]) >= bound
    gauss = prepare({**SPEC, "mechanism": {"name": "gaussian", "sigma": 2.0}})
    assert gauss.mechanism.sensitivity == pytest.approx(2.0)  # sqrt(2K)
    assert da_mcmc(gauss, np.random.default_rng(2), chains=1, draws=20, warmup=5).info["epsilon_bound"] is None


# --------------------------------------------------------------------------- SBC
SBC_PARAMS = ("pi[0]", "p[0][0][0]", "p[0][1][1]", "p[1][0][2]", "p[1][1][0]")


def _sbc_ranks(method, reps=300, thin=4, n_rank=19, seed=2022):
    """Ranks of the true parameter among ``n_rank`` thinned posterior draws, per SBC replicate."""
    model = make_model("naive_bayes_loglinear", {"n": 30, "class_levels": 2, "feature_levels": [2, 3]})
    mech = Laplace(scale=model.default_sensitivity() / 1.0, sensitivity=model.default_sensitivity())
    idx = [model.param_names.index(p) for p in SBC_PARAMS]
    rng = np.random.default_rng(seed)
    ranks = np.empty((reps, len(idx)), dtype=int)
    for r in range(reps):
        theta = model.sample_prior(rng, 1)[0]
        s_dp = mech.sample(rng, model.statistic(model.sample_records(rng, theta)))
        problem = Problem(model=model, mechanism=mech, s_dp=s_dp)
        if method == "da_mcmc":
            res = da_mcmc(problem, rng, chains=1, draws=n_rank * thin, warmup=60, parallel=False)
            draws = res.draws[0, thin - 1::thin][:, idx]
        else:
            draws = naive(problem, rng, draws=n_rank).draws[0][:, idx]
        ranks[r] = (draws < theta[idx]).sum(axis=0)
    return ranks


def _uniformity_p(ranks, n_rank=19, bins=10):
    """Chi-square p-value of the ranks 0..n_rank against the discrete uniform, in ``bins`` bins of 2."""
    counts = np.bincount(ranks // ((n_rank + 1) // bins), minlength=bins)
    return stats.chisquare(counts).pvalue


def test_sbc_da_mcmc_is_calibrated_and_naive_is_not():
    """DA-MCMC targets p(theta | s_dp): ranks of the truth are uniform for every checked parameter
    (Bonferroni over 5 parameters at family level 0.005). The naive posterior, which ignores the
    Laplace(4) noise on counts of about 5, is overconfident: its ranks pile up at the ends."""
    ranks = _sbc_ranks("da_mcmc")
    pvals = [_uniformity_p(ranks[:, j]) for j in range(len(SBC_PARAMS))]
    assert min(pvals) > 0.001, dict(zip(SBC_PARAMS, pvals))
    naive_ranks = _sbc_ranks("naive", reps=150)
    naive_p = [_uniformity_p(naive_ranks[:, j]) for j in range(len(SBC_PARAMS))]
    assert min(naive_p) < 1e-6, dict(zip(SBC_PARAMS, naive_p))


# --------------------------------------------------------------------------- spec, CSV, CLI, reproducibility
def test_spec_round_trip_and_from_prior(tmp_path):
    spec = engine.spec_from_dict(SPEC)
    path = tmp_path / "s.toml"
    path.write_text(engine.spec_to_toml(spec))
    assert engine.spec_to_dict(engine.load_spec(str(path))) == engine.spec_to_dict(spec)
    prior = {**SPEC, "data": {"simulate": {"from_prior": True}}}
    flat = {**SPEC, "data": {"simulate": {"pi": [0.3, 0.7], "p": [v for tab in P_TRUE for row in tab for v in row]}}}
    assert prepare(flat).true_params == prepare(SPEC).true_params  # p flattened in the order of the names
    p1, p2 = prepare(prior), prepare(prior)
    assert p1.true_params == p2.true_params and set(p1.true_params) == set(p1.model.param_names)
    assert p1.records.shape == (30, 3)


def test_cli_writes_flattened_names_and_is_reproducible(tmp_path):
    rng = np.random.default_rng(4)
    model = make_model("naive_bayes_loglinear", {"n": 40, "class_levels": 2, "feature_levels": [2, 3]})
    rec = model.sample_records(rng, model.sample_prior(rng, 1)[0])
    pd.DataFrame(rec, columns=["y", "x1", "x2"]).to_csv(tmp_path / "records.csv", index=False)
    (tmp_path / "spec.toml").write_text(
        'seed = 5\n[model]\nname = "naive_bayes_loglinear"\nclass_levels = 2\nfeature_levels = [2, 3]\n'
        '[mechanism]\nname = "laplace"\nepsilon = 2.0\n[data]\ncsv = "records.csv"\n'
        '[method]\nname = "da_mcmc"\nchains = 2\ndraws = 100\nwarmup = 20\n')
    for out in ("a", "b"):
        assert main(["run", str(tmp_path / "spec.toml"), "--out", str(tmp_path / out), "--quiet"]) == 0
    draws = pd.read_csv(tmp_path / "a" / "draws.csv")
    assert [c for c in draws.columns if c not in ("chain", "draw")] == list(model.param_names)
    assert "p[1][1][2]" in draws.columns and len(draws) == 200
    assert (tmp_path / "a" / "draws.csv").read_bytes() == (tmp_path / "b" / "draws.csv").read_bytes()
    idata = engine.numerics.diagnostics.to_inference_data(engine.run(engine.load_spec(str(tmp_path / "spec.toml"))))
    assert idata.posterior["pi"].shape == (2, 100, 2) and idata.posterior["p"].shape == (2, 100, 10)  # p flattened
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert set(summary["parameters"]) == set(model.param_names) and "convergence" in summary
    problem = prepare(engine.load_spec(str(tmp_path / "spec.toml")))
    np.testing.assert_array_equal(problem.records, rec)
    assert main(["run", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "c"), "--quiet", "--method", "ops"]) == 2


def test_same_seed_same_draws():
    a, b = engine.run(SPEC), engine.run(SPEC)
    np.testing.assert_array_equal(a.draws, b.draws)
    c = engine.run({**SPEC, "seed": 4})
    assert not np.array_equal(a.draws, c.draws)


@pytest.mark.parametrize("body, column, field", [
    ("y,x1,x2\n0,1,2\n1,0,3\n", None, "data.csv column x2"),
    ("y,x1,x2\n0,1,2\n2,0,1\n", None, "data.csv column y"),
    ("y,x1,x2\n0,1,2\n1,0,1.5\n", None, "data.csv column x2"),
    ("y,x1\n0,1\n1,0\n", None, "data.csv header"),
    ("y,x1,x2\n0,1,2\n1,0,1\n", "y", "data.column"),
])
def test_bad_csv_records_name_the_field(tmp_path, body, column, field):
    (tmp_path / "r.csv").write_text(body)
    data = {"csv": "r.csv"} if column is None else {"csv": "r.csv", "column": column}
    spec = {**SPEC, "model": {k: v for k, v in SPEC["model"].items() if k != "n"}, "data": data}
    with pytest.raises(ValueError) as info:
        engine.spec_from_dict(spec, base_dir=str(tmp_path))  # refused by the spec check, before any run
    assert str(info.value).startswith(field), str(info.value)
