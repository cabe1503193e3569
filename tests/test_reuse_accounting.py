"""The reuse benchmark's accounting (bench/reuse.py) on synthetic loss curves with known answers: where a grown run
first reaches its seed's scratch loss, the reuse and full-cost savings, runs that never reach it, seeds paired, the
settings chosen from finished sweeps. Nothing is trained."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import reuse  # noqa: E402
import training  # noqa: E402

BUDGET = 100.0
SCALE = training.SCALES["reuse"]


def curve(*losses: float, span: float = BUDGET) -> list[list]:
    """Evenly spaced evaluations over ``span`` FLOPs (the first at 0)."""
    step = span / (len(losses) - 1)
    return [[i * step, loss, None, 1.0] for i, loss in enumerate(losses)]


def grown(kind: str, seed: int, losses: tuple[float, ...], lr: float = 2e-3, frac: float = 0.25, small_flops: float = 40.0,
          symmetry: str = "split") -> dict:
    run = reuse.ReuseRun(kind, lr=lr, small_lr=4e-3, frac=frac, symmetry=symmetry, seed=seed)
    return {"name": run.name, "kind": kind, "seed": seed, "lr": lr, "frac": frac, "symmetry": symmetry, "small": run.small_name,
            "curve": curve(*losses, span=frac * BUDGET), "small_flops": small_flops, "grown_from_loss": losses[0]}


def alone(kind: str, lr: float, seed: int, losses: tuple[float, ...], flops: float = BUDGET) -> dict:
    run = reuse.ReuseRun(kind, lr=lr, seed=seed)
    return {"name": run.name, "kind": kind, "seed": seed, "lr": lr, "curve": curve(*losses, span=flops), "flops": flops}


def by_name(*runs: dict) -> dict:
    return {r["name"]: r for r in runs}


def test_crossing_between_evaluations_gives_both_savings():
    # 2.0 at 0, 1.5 at 10, 1.0 at 20: the target 1.25 is crossed half-way, at 15 FLOPs of a budget of 100
    f = reuse.seed_figures(curve(2.0, 1.5, 1.0, span=20), 1.25, small_flops=30, budget=BUDGET)
    assert f["reached_at"] == pytest.approx(0.15)
    assert f["reuse_saving"] == pytest.approx(0.85)
    assert f["full_cost_saving"] == pytest.approx(1 - (30 + 15) / BUDGET)
    assert f["gap_nats"] is None


def test_never_reached_has_a_gap_and_no_saving():
    f = reuse.seed_figures(curve(2.0, 1.6, 1.4, span=25), 1.25, small_flops=30, budget=BUDGET)
    assert f["reuse_saving"] is None and f["full_cost_saving"] is None and f["reached_at"] is None
    assert f["gap_nats"] == pytest.approx(0.15)


def test_a_small_model_already_below_the_target_saves_everything_it_reuses():
    f = reuse.seed_figures(curve(1.2, 1.1, span=25), 1.25, small_flops=30, budget=BUDGET)
    assert f["reuse_saving"] == pytest.approx(1.0)
    assert f["full_cost_saving"] == pytest.approx(0.7)


def test_seeds_are_paired_with_their_own_scratch_run():
    # seed 0's target 1.3 is crossed at 5 FLOPs (0.05 of the budget), seed 1's 1.1 at 15 (0.15): the mean is 0.90; against
    # the other seed's target each would read differently
    rs = [grown("stackid", 0, (1.5, 1.3, 1.2, 1.0, 0.9, 0.9)), grown("stackid", 1, (1.5, 1.4, 1.3, 1.1, 1.0, 1.0))]
    row = reuse.grown_row(rs, {0: 1.3, 1: 1.1}, BUDGET)
    assert row["per_seed"][0]["reuse_saving"] == pytest.approx(0.95)
    assert row["per_seed"][1]["reuse_saving"] == pytest.approx(0.85)
    assert row["reuse_saving"] == pytest.approx(0.90)
    assert row["full_cost_saving"] == pytest.approx(0.90 - 0.40)
    assert row["never_reached_seeds"] == [] and row["gap_nats"] is None and row["paired_seeds"] == [0, 1]


def test_one_seed_never_reaching_leaves_no_mean_saving():
    rs = [grown("width", 0, (1.5, 1.3, 1.2, 1.0)), grown("width", 1, (1.5, 1.4, 1.3, 1.2))]
    row = reuse.grown_row(rs, {0: 1.3, 1: 1.1}, BUDGET)
    assert row["reuse_saving"] is None and row["full_cost_saving"] is None
    assert row["never_reached_seeds"] == [1]
    assert row["gap_nats"] == pytest.approx(0.1)


def test_a_seed_without_a_scratch_run_is_not_paired():
    rs = [grown("width", 0, (1.5, 1.3, 1.2, 1.0)), grown("width", 2, (1.5, 1.5, 1.5, 1.5))]
    row = reuse.grown_row(rs, {0: 1.3}, BUDGET)
    assert row["paired_seeds"] == [0] and row["reuse_saving"] is not None and row["seeds"] == 2


def synthetic_results() -> dict:
    return by_name(
        alone("scratch", 1e-3, 0, (3.0, 1.5, 1.35)), alone("scratch", 2e-3, 0, (3.0, 1.4, 1.3)),
        alone("scratch", 4e-3, 0, (3.0, 1.45, 1.32)), alone("scratch", 2e-3, 1, (3.0, 1.45, 1.25)),
        alone("small", 4e-3, 0, (3.0, 1.5, 1.4), flops=50),
        grown("stackid", 0, (1.4, 1.35, 1.3, 1.28, 1.27, 1.26)), grown("stackid", 1, (1.4, 1.3, 1.28, 1.26, 1.25, 1.24)),
        grown("depth", 0, (1.4, 1.38, 1.36, 1.34, 1.33, 1.32)),
        grown("width", 0, (1.45, 1.3, 1.29, 1.28), small_flops=30, symmetry="none"),
        grown("width", 0, (1.45, 1.4, 1.35, 1.31), small_flops=30),
        grown("gstack", 0, (1.6, 1.33, 1.29, 1.2)))


def test_summary_targets_best_scratch_and_bests():
    s = reuse.summarise(synthetic_results())
    assert s["best_scratch"] == "scratch/lr=0.002/cos"  # the most seeds, then the lowest loss
    assert s["best_scratch_lr_inside_sweep"] is True
    assert s["targets"] == {0: 1.3, 1: 1.25}
    assert s["budget_flops"] == BUDGET
    assert s["best_exact_depth"]["config"].startswith("stackid+0.25")  # depth (interleaved) never reached 1.3
    assert s["best_exact_depth"]["reuse_saving"] == pytest.approx((0.9 + 0.8) / 2)  # 1.3 at 10 FLOPs (seed 0), 1.25 at 20 (seed 1)
    assert s["best_exact_width"]["config"].endswith("/none")  # split never reached 1.3
    assert s["best_exact_width"]["reuse_saving"] == pytest.approx(1 - 25 / 3 / BUDGET)
    assert s["best_lossy"]["config"].startswith("gstack")
    assert s["configs"]["depth+0.25/lr=0.002/small=0.004/split"]["never_reached_seeds"] == [0]
    assert s["configs"]["small/lr=0.004/own"]["scratch_reaches_it_at"][0] == pytest.approx(0.5)


def test_best_scratch_at_the_edge_of_its_sweep_is_flagged():
    results = synthetic_results()
    results["scratch/lr=0.008/cos/s0"] = alone("scratch", 8e-3, 0, (3.0, 1.3, 1.2))
    results["scratch/lr=0.008/cos/s1"] = alone("scratch", 8e-3, 1, (3.0, 1.3, 1.2))
    s = reuse.summarise(results)
    assert s["best_scratch"] == "scratch/lr=0.008/cos" and s["best_scratch_lr_inside_sweep"] is False


def test_settings_are_chosen_only_once_their_sweep_has_finished():
    results = {"docs": {}}
    small_sweep = [alone("small", lr, 0, (3.0, 2.0, loss)) for lr, loss in zip(reuse.sweep("small", SCALE), (1.5, 1.4, 1.45))]
    seed1 = reuse.ReuseRun("small", seed=1)
    results["docs"].update(by_name(*small_sweep[:2]))
    assert reuse.resolve(seed1, results, SCALE) is None
    results["docs"].update(by_name(small_sweep[2]))
    assert reuse.resolve(seed1, results, SCALE).lr == reuse.sweep("small", SCALE)[1]
    # a grown run of seed 1 needs the continuation sweep of seed 0 and its own seed's small model
    planned = reuse.ReuseRun("stackid", frac=0.25, seed=1)
    assert reuse.resolve(planned, results, SCALE) is None
    for lr, loss in zip(reuse.sweep("stackid", SCALE), (1.3, 1.2, 1.25, 1.28)):
        run = reuse.ReuseRun("stackid", lr=lr, small_lr=reuse.sweep("small", SCALE)[1], frac=0.25)
        results["docs"][run.name] = {"name": run.name, "curve": curve(1.4, loss)}
    assert reuse.resolve(planned, results, SCALE) is None  # seed 1's small model not trained yet
    results["docs"].update(by_name(alone("small", reuse.sweep("small", SCALE)[1], 1, (3.0, 1.4))))
    done = reuse.resolve(planned, results, SCALE)
    assert (done.lr, done.small_lr, done.seed) == (reuse.sweep("stackid", SCALE)[1], reuse.sweep("small", SCALE)[1], 1)


def test_names_parse_back():
    for run in (reuse.ReuseRun("scratch", lr=2e-3, seed=1, corpus="code"), reuse.ReuseRun("smallw", lr=8e-3),
                reuse.ReuseRun("width", lr=1e-3, small_lr=4e-3, frac=0.5, symmetry="noise", seed=1, corpus="code"),
                reuse.ReuseRun("stackid", lr=1e-3, small_lr=4e-3, frac=1.0, seed=1, optim="rec")):
        assert reuse.parse(run.name, run.corpus) == run


def test_table_says_never_and_the_gap():
    data = {"corpora": {"docs": {"results": synthetic_results(), "summary": reuse.summarise(synthetic_results())}}}
    text = reuse.table(data)
    row = next(line for line in text.splitlines() if "depth+0.25" in line)
    assert "never" in row and "+0.0200 (seeds 0)" in row


def test_best_scratch_is_one_run_on_every_seed():
    results = synthetic_results()
    results["scratch/lr=0.004/cos/s0"] = alone("scratch", 4e-3, 0, (3.0, 1.3, 1.1))  # lower, but on one seed only
    assert reuse.summarise(results)["best_scratch"] == "scratch/lr=0.002/cos"
