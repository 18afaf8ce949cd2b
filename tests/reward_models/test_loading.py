"""Data loading: the three file formats, hub-name errors, chat templates, held-out split."""

from __future__ import annotations

import pytest

from reward_models.backbones import load_tokenizer
from reward_models.encoding import PairEncoder
from reward_models.loading import DataError, check_rows, detect_format, heldout_split, load_rm_rows, score_columns_of

ROWS = [{"prompt": f"{i}+1=", "response": f"The answer is {i + 1}.", "quality": 0.5 + i / 10} for i in range(4)]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])  # each file type datasets reads
def test_files_of_every_format_load_the_same_rows(tmp_path, suffix):
    from datasets import Dataset

    path = tmp_path / f"scored{suffix}"
    ds = Dataset.from_list(ROWS)
    {".jsonl": ds.to_json, ".csv": lambda p: ds.to_csv(p, index=False), ".parquet": ds.to_parquet}[suffix](str(path))
    rows = load_rm_rows(str(path))
    assert rows == ROWS
    assert detect_format(rows, "quantile", str(path)) == "scored"
    assert score_columns_of(rows, (), str(path)) == ["quality"]  # numeric columns become attributes


def test_unknown_file_type_and_missing_hub_dataset_are_explained(tmp_path):
    bad = tmp_path / "rows.txt"
    bad.write_text("x")
    with pytest.raises(DataError, match="unsupported file type '.txt'"):
        load_rm_rows(str(bad))
    with pytest.raises(DataError, match="cannot be read as a hub dataset"):
        load_rm_rows("no-such-user/no-such-dataset-xyz")


@pytest.mark.parametrize(
    "rows, fmt, cols, message",
    [
        ([{"prompt": "p", "response": "r", "quality": float("nan")}], "scored", ["quality"], "not a finite number"),  # NaN score
        ([{"prompt": "p", "response": "r", "quality": True}], "scored", ["quality"], "not a finite number"),  # bool is not a score
        ([{"prompt": "p", "completions": ["a", ""], "labels": [1, 0]}], "stepwise", [], "has an empty step"),  # empty step
        ([{"prompt": "p", "completions": ["a"], "labels": ["yes"]}], "stepwise", [], "must hold booleans"),  # label type
        ([{"chosen": "a", "rejected": "b", "margin": "big"}], "preference", [], "'margin' is 'big'"),  # margin type
        ([{"chosen": [{"role": "assistant", "content": " "}], "rejected": "b"}], "preference", [], "'chosen' is empty"),  # empty chat
    ],
)
def test_more_bad_rows(rows, fmt, cols, message):
    with pytest.raises(DataError, match=message) as info:
        check_rows(rows, fmt, "f.jsonl", cols)
    assert str(info.value).startswith("f.jsonl: row 1: ")  # rows are numbered from 1 everywhere


def test_heldout_split_never_splits_a_prompt():
    rows = [{"prompt": f"q{i % 50}", "chosen": "a", "rejected": "b"} for i in range(500)]
    train, held = heldout_split(rows, 0.2)
    assert train and held and not {r["prompt"] for r in train} & {r["prompt"] for r in held}


def test_chat_messages_use_the_tokenizers_chat_template(tiny_backbone):
    tok = load_tokenizer(tiny_backbone)
    tok.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    enc = PairEncoder(tok, max_length=64)
    prompt, response = enc.render([{"role": "user", "content": "1+1="}], [{"role": "assistant", "content": "2"}])
    assert (prompt, response) == ("<user>1+1=\n<assistant>", "2\n")  # the response is what the full chat adds
