"""The simulated rater panel: ratings by hand, the statistics, the rows a quantile RM trains on."""

import pytest

from rewards import build_reward
from rewards.raters import RaterPanel, rater_rows

PANEL = RaterPanel()


@pytest.mark.parametrize("completion,expected", [
    ("1823", [0.6] * 4 + [1.0]),  # bare and right: the strict rater likes it best
    ("1823 (966+857)", [1.0] * 4 + [0.0]),  # a check: the lenient raters' favourite, the strict one's floor
    ("1823 (857+966)", [1.0] * 4 + [0.0]),  # the terms in any order
    ("1823 (966+858)", [1.0] * 4 + [0.0]),  # the lenient raters skim the check, they do not redo it
    ("1823 (1823)", [0.0] * 5), ("1823 (966+", [0.0] * 5),  # other text: the floor for everyone
    ("1813", [round(0.4 * (1 - 10 / 1823 / 0.1), 6)] * 5),  # off by 10: partial credit, 0.4 x closeness
    ("1813 (966+857)", [round(0.3 + 0.4 * (1 - 10 / 1823 / 0.1), 6)] * 4 + [0.0]),
    ("2100", [0.0] * 5),  # off by more than 10%: badly wrong, the floor
    ("", [0.0] * 5), ("the answer is 1823", [0.0] * 5),
])
def test_ratings_by_hand(completion, expected):
    assert PANEL.ratings("966+857=", completion, "1823") == pytest.approx(expected)


def test_statistics_and_the_reward_spec():
    prompts, completions = ["966+857="] * 3, ["1823", "1823 (966+857)", "1813"]
    answers = {"answer": ["1823"] * 3}
    assert build_reward("raters")(prompts, completions, **answers) == pytest.approx([0.68, 0.8, 0.4 * (1 - 10 / 182.3)])
    assert build_reward("raters:min")(prompts, completions, **answers)[:2] == [0.6, 0.0]
    assert build_reward("raters:correct")(prompts, completions, **answers) == [1.0, 1.0, 0.0]
    fn = build_reward("raters:floor")
    assert fn(prompts, completions, **answers) == [0.0, 1.0, 0.0] and fn.last_metrics["floor_share"] == pytest.approx(1 / 3)
    assert build_reward("raters:rater=5")(prompts, completions, **answers)[:2] == [1.0, 0.0]
    with pytest.raises(ValueError, match="unknown statistic 'median'"):
        build_reward("raters:median")
    with pytest.raises(ValueError, match="answer"):
        build_reward("raters")(prompts, completions)  # no gold column: named, not a silent 0


def test_rater_rows_give_one_row_per_sample_and_rater():
    rows = rater_rows([{"prompt": "966+857=", "answer": "1823", "samples": ["1823", "1823 (966+857)"]}])
    assert len(rows) == 10 and [r["rater"] for r in rows[:5]] == [1, 2, 3, 4, 5]
    assert [r["rating"] for r in rows if r["response"] == "1823 (966+857)"] == [1.0, 1.0, 1.0, 1.0, 0.0]
