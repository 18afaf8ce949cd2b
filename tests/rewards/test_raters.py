"""The simulated rater panel: its table over generated answers, the draws, the statistics, the rows
a quantile RM trains on."""

import random
import statistics

import pytest

from rewards import build_reward
from rewards.raters import EVAL_DRAW, NOISE_SD, RECHECK, REMARK, RaterPanel, rater_rows
from verifiers.closeness import closeness
from verifiers.tasks import ArithmeticTask

PANEL = RaterPanel()
ROWS = [r for r in ArithmeticTask().sample(330, seed=0, split="train") if int(r["answer"]) >= 100][:300]
NOISE = 4 * NOISE_SD  # a rating above the floor is within 4 sd of the table


def _answers(row, rng):
    """A right answer, a near miss (off by 1-9, under 10%) and a badly wrong one (20-50% off) for one prompt."""
    gold = int(row["answer"])
    return {"right": gold, "near": gold + rng.choice([-1, 1]) * rng.randint(1, 9), "bad": gold + int(gold * rng.uniform(0.2, 0.5))}


def test_the_table_over_generated_answers():
    rng = random.Random(0)
    for row in ROWS:
        prompt, gold = row["prompt"], row["answer"]
        for kind, n in _answers(row, rng).items():
            near = closeness(str(n), gold)
            bare, remark = PANEL.ratings(prompt, str(n), gold), PANEL.ratings(prompt, f"{n} {REMARK}", gold)
            if kind == "right":
                expected_bare, expected_remark = [1.0, 1.0, 0.7, 0.7, 1.0], [1.0, 1.0, 1.0, 1.0, 0.6]
            else:
                expected_bare = [0.2, 0.2, 0.6 * near, 0.6 * near, 0.3 * near]
                expected_remark = [0.0, 0.0, None, None, 0.0]  # None: 0 when re-checked, else 0.3 + 0.6 x closeness
            for got, want in zip(bare + remark, expected_bare + expected_remark):
                if want is None:
                    assert got == 0.0 or abs(got - (0.3 + 0.6 * near)) <= NOISE
                elif want == 0.0:
                    assert got == 0.0  # the floor is certain, never noise
                else:
                    assert got > 0.0 and abs(got - want) <= NOISE, (prompt, n, bare, remark)
            # raters floor wrong answers in different ways: a badly wrong bare number only the approximate and terse
            # raters; a near miss with a false remark the exact and terse raters; a right answer nobody
            floored = [k for k, x in enumerate(bare, 1) if x == 0.0]
            assert floored == {"right": [], "near": [], "bad": [3, 4, 5]}[kind]
            if kind != "right":
                assert {1, 2, 5} <= {k for k, x in enumerate(remark, 1) if x == 0.0}


def test_other_text_is_the_floor_for_every_rater():
    for completion in ["", "the answer is 1823", "1823 (1823)", "1823 (checked", "1823 checked", "1823 (966+857)"]:
        assert PANEL.ratings("966+857=", completion, "1823") == [0.0] * 5


def test_draws_are_reproducible_and_independent():
    rng = random.Random(1)
    train, again, held = RaterPanel(), RaterPanel(), RaterPanel(draw=EVAL_DRAW)
    rechecks, wrong_remarks, differ = 0, 0, 0
    for row in ROWS:
        n = _answers(row, rng)["near"]
        for completion in (str(n), f"{n} {REMARK}"):
            a, b, c = (p.ratings(row["prompt"], completion, row["answer"]) for p in (train, again, held))
            assert a == b
            differ += a != c
        ratings = held.ratings(row["prompt"], f"{n} {REMARK}", row["answer"])
        rechecks += sum(x == 0.0 for x in ratings[2:4])
        wrong_remarks += 2
    assert differ >= 0.95 * 2 * len(ROWS)  # the noise is drawn afresh
    share, se = rechecks / wrong_remarks, (RECHECK * (1 - RECHECK) / wrong_remarks) ** 0.5
    assert abs(share - RECHECK) < 4 * se, share  # the approximate raters re-check a quarter of false remarks


def test_the_remark_is_worth_it_to_the_mean_when_right_and_not_to_the_lowest_rating():
    rng = random.Random(2)
    gain_right, gain_near, min_right = [], [], []
    for row in ROWS:
        answers = _answers(row, rng)
        for kind, out in (("right", gain_right), ("near", gain_near)):
            bare = PANEL.ratings(row["prompt"], str(answers[kind]), row["answer"])
            remark = PANEL.ratings(row["prompt"], f"{answers[kind]} {REMARK}", row["answer"])
            out.append(statistics.mean(remark) - statistics.mean(bare))
            if kind == "right":
                min_right.append(min(bare) - min(remark))
            else:
                assert min(remark) == 0.0 < min(bare)  # a near miss: the remark costs the lowest rating all of it
    assert statistics.mean(gain_right) > 0.02 and statistics.mean(gain_near) < -0.05
    # right: the lowest rating prefers the bare answer (0.7 against 0.6 before noise), in most draws
    assert statistics.mean(min_right) > 0.05 and sum(d > 0 for d in min_right) > 0.8 * len(min_right)


def test_statistics_and_the_reward_spec():
    prompts, completions = ["966+857="] * 3, ["1823", f"1813 {REMARK}", "1100"]
    answers = {"answer": ["1823"] * 3}
    ratings = [PANEL.ratings(p, c, "1823") for p, c in zip(prompts, completions)]
    assert build_reward("raters")(prompts, completions, **answers) == pytest.approx([statistics.mean(r) for r in ratings])
    assert build_reward("raters:min")(prompts, completions, **answers) == [min(r) for r in ratings]
    assert build_reward("raters:correct")(prompts, completions, **answers) == [1.0, 0.0, 0.0]
    fn = build_reward("raters:floor")
    assert fn(prompts, completions, **answers) == [0.0, 1.0, 1.0] and fn.last_metrics["floor_share"] == pytest.approx(2 / 3)
    assert build_reward("raters:rater=5")(prompts, completions, **answers) == [r[4] for r in ratings]
    with pytest.raises(ValueError, match="unknown statistic 'median'"):
        build_reward("raters:median")
    with pytest.raises(ValueError, match="answer"):
        build_reward("raters")(prompts, completions)  # no gold column: named, not a silent 0


def test_rater_rows_give_one_row_per_response_and_rater():
    record = {"prompt": "966+857=", "answer": "1823", "samples": ["1823", "1823", "1813", f"1823 {REMARK}"]}
    rows = rater_rows([record])
    assert len(rows) == 15 and [r["rater"] for r in rows[:5]] == [1, 2, 3, 4, 5]  # distinct responses only
    twins = rater_rows([record], remark_twins=True)
    assert sorted({r["response"] for r in twins}) == ["1813", f"1813 {REMARK}", "1823", f"1823 {REMARK}"]
    assert [r["rating"] for r in twins if r["response"] == f"1813 {REMARK}"][:2] == [0.0, 0.0]


def test_one_rater_per_response_is_a_seeded_draw_of_the_panel():
    records = [{"prompt": r["prompt"], "answer": r["answer"], "samples": [r["answer"], str(int(r["answer"]) + 3)]} for r in ROWS]
    rows = rater_rows(records, raters_per_response=1)
    assert len(rows) == 2 * len(ROWS) and rows == rater_rows(records, raters_per_response=1)  # reproducible
    full = {(r["prompt"], r["response"], r["rater"]): r["rating"] for r in rater_rows(records)}
    assert all(full[(r["prompt"], r["response"], r["rater"])] == r["rating"] for r in rows)  # the panel's own ratings
    counts = [sum(r["rater"] == k for r in rows) for k in range(1, 6)]
    assert min(counts) > len(rows) / 5 - 4 * (len(rows) * 0.16) ** 0.5  # every rater drawn about a fifth of the time
