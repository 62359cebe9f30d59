"""The figure recipe highdim_sgd (online SGD at step c/d) in quick mode: the data it draws is
consistent with its parameters and with the routes it calls."""

import types

import numpy as np
import pytest

from figures.recipes import highdim_sgd

EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def quick(quick_figures):
    outcome = quick_figures.outcomes["highdim_sgd"]
    assert outcome.status in quick_figures.COMPUTED_THIS_RUN, outcome.reason
    return highdim_sgd.params(True), quick_figures.data("highdim_sgd")


def test_paths_start_at_the_start_and_end_at_t_end(quick):
    p, data = quick
    for i in range(len(p["path_d"])):
        t = data[f"path_t_{i}"]
        assert t[0] == 0 and abs(t[-1] - p["path_t"]) <= 8 * EPS * p["path_t"]
        assert np.array_equal(data[f"path_mean_{i}"][:, 0], p["path_start"][:2])
        for key in ("path_effective", "path_population"):
            # the solvers' interpolant at t = 0: the start up to a few roundings
            np.testing.assert_allclose(data[f"{key}_{i}"][:, 0], p["path_start"][:2], rtol=8 * EPS, err_msg=key)
        # every run starts at the same point: no spread at t = 0, some afterwards
        assert np.all(data[f"path_se_{i}"][:, 0] == 0) and np.all(data[f"path_se_{i}"][:, 1:] > 0)


def test_escape_quantiles_are_those_of_the_aligned_runs(quick):
    p, data = quick
    times = data["escape_times"]
    assert times.shape == (len(p["escape_d"]), p["escape_runs"])
    for row, measured, late in zip(times, data["escape_measured"], data["escape_late"]):
        finite = np.sort(row[np.isfinite(row)])
        assert np.all(finite > 0) and np.all(finite <= p["t_max"])
        # inverted-CDF quantile q of the n aligned runs: the ceil(q n)-th smallest
        for q, value in zip(data["escape_quantiles"], measured):
            assert value == finite[int(np.ceil(q * finite.size)) - 1]
        assert late[2] == 1.0 - finite.size / row.size
        # the predicted share not aligned by t_max holds every draw that left off M (it never aligns)
        assert late[1] <= late[0] <= 1.0 and late[1] > 0.0
    # quartiles in order; both unstable rates positive and nearly equal (docs/math/highdim.md#escape-from-the-saddle)
    assert np.all(np.diff(data["escape_predicted"], axis=1) > 0)
    rates = data["escape_rate"]
    assert np.all(rates > 0) and np.allclose(rates[:, 1], rates[:, 0], rtol=1e-2)


def test_aligned_summary_counts_late_and_infinite_times_alike():
    quantiles, late = highdim_sgd.aligned_summary([3.0, np.inf, 1.0, 2.0, 5.0, 4.0], 4.0, [0.25, 0.5, 1.0])
    assert quantiles.tolist() == [1.0, 2.0, 4.0] and late == 2 / 6
    quantiles, late = highdim_sgd.aligned_summary([np.inf, 9.0], 4.0, [0.5])
    assert np.isnan(quantiles).all() and late == 1.0


def test_first_alignment_is_the_first_logged_time_past_one_minus_delta():
    run = types.SimpleNamespace(time=np.array([0.0, 1.0, 2.0, 3.0]),
                                kappa=np.array([[0.1, 0.1, 0.1], [0.9, -0.96, 0.1], [0.96, 0.97, 0.2], [0.99, 0.99, 0.3]]),
                                nu=np.array([[0.1, 0.1, 0.1], [0.97, -0.97, 0.99], [0.96, 0.9, 0.99], [0.99, 0.99, 0.99]]))
    assert highdim_sgd.first_alignment(run, 0.05).tolist() == [2.0, 1.0, np.inf]


def test_fixed_point_branch_and_the_critical_bracket(quick):
    p, data = quick
    c, stable = data["branch_c"], data["branch_stable"]
    assert np.all(np.diff(c) > 0) and np.array_equal(stable, data["branch_instability"] < 0)
    assert np.all((data["branch_kappa"] > 0) & (data["branch_kappa"] < 1) & (data["branch_nu"] < 1))
    lo, hi = data["c_crit_bracket"]
    assert lo == c[stable][-1] and lo < hi
    final, runs = data["step_final"], data["step_runs_final"]
    n_rows = 1 + len(p["step_sides"])
    assert final.shape == (n_rows, 2, 2) and np.all(final[:, 1] > 0)
    assert runs.shape == (n_rows, 3, p["step_runs"]) and np.array_equal(final[:, 0], runs[:, :2].mean(axis=2))
    # the runs: c = step_c_fixed, then step_sides x c_crit; c_crit to crit_tol past the last stable grid point
    c_crit = float(data["c_crit"])
    assert np.allclose(data["step_c"], [p["step_c_fixed"]] + [f * c_crit for f in p["step_sides"]], rtol=4 * EPS)
    assert str(data["c_crit_kind"]) in ("slow mode", "fast mode", "fold") and c_crit > lo


def test_full_mode_sizes():
    p, q = highdim_sgd.params(False), highdim_sgd.params(True)
    assert p["path_d"] == [100, 1000, 10_000] and p != q
    assert min(p["escape_d"]) == 1000 and max(p["escape_d"]) == 10_000
    # SGD on both sides of c_crit (7.6 at d = 10^3, docs/math/highdim.md#the-largest-step), the grid past it
    assert min(p["step_sides"]) < 1 < max(p["step_sides"]) and max(p["branch_c"]) > 7.6


def test_paper_sgd_pooling_equals_the_statistics_of_the_union():
    # figure highdim_paper_sgd pools further runs with the first ones from each sample's mean and standard
    # error: the result must be the mean and the standard error (sample sd with n - 1) of the union
    from figures.recipes.highdim_paper_sgd import pooled_mean_stderr

    rng = np.random.default_rng(3)
    a, b = rng.normal(0.3, 1.0, (5, 7, 15)), rng.normal(0.5, 2.0, (5, 7, 25))
    stats = [(x.mean(axis=2), x.std(axis=2, ddof=1) / np.sqrt(x.shape[2])) for x in (a, b)]
    mean, se = pooled_mean_stderr(*stats[0], 15, *stats[1], 25)
    union = np.concatenate([a, b], axis=2)
    # both sides are sums of 40 terms: they agree to ~40 eps relative (1e-13 leaves a factor 10)
    np.testing.assert_allclose(mean, union.mean(axis=2), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(se, union.std(axis=2, ddof=1) / np.sqrt(40), rtol=1e-13)


def test_paper_sgd_figure_pools_its_runs_up_to_the_early_time(quick_figures):
    from figures.recipes import highdim_paper_sgd

    outcome = quick_figures.outcomes["highdim_paper_sgd"]
    assert outcome.status in quick_figures.COMPUTED_THIS_RUN, outcome.reason
    data, p = quick_figures.data("highdim_paper_sgd"), highdim_paper_sgd.params(True)
    assert np.all(data["counts"] == p["n_runs"] + p["early_runs"] * (data["t"] <= p["early_t"]))
    # both predictions start at the start; the runs are mapped into kappa + nu >= 0
    for name in ("population", "effective"):
        np.testing.assert_allclose(data[name][:, 0], p["start"], atol=8 * EPS)
    assert np.all(data["sgd_mean"][0] + data["sgd_mean"][1] >= 0)
    assert np.all(data["sgd_stderr"][:, 1:] > 0) and np.all(data["sgd_stderr"][:, 0] == 0)
