"""The hub's reward-model data shapes, each from its shipped sample in data/samples/: preference
pairs as text, with an implicit prompt, as chat messages, UltraFeedback-binarized (the prompt
repeated inside `chosen` / `rejected`); stepwise PRM data in TRL's format and Math-Shepherd's.
Each loads into the trainer's formats and trains; chat templates render the same text in
training and in scoring."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reward_models.encoding import PairEncoder
from reward_models.loading import check_rows, detect_format, load_rm_rows

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
sys.path.insert(0, str(ROOT / "tests"))
from hub_fixtures import char_tokenizer  # noqa: E402


# (sample, kind, what row 1 becomes: prompt, chosen / completions, rejected / labels)
SHAPES = [
    ("preference_text.jsonl", "bt", ("What is 23+19?", "23+19 = 42. The answer is 42.", "23+19 = 32. The answer is 32.")),
    # TRL's implicit prompt: the shared words move to the prompt
    ("preference_implicit.jsonl", "bt", ("Q: What is 23+19?\nA: 23+19 =", " 42.", " 32.")),
    ("preference_chat.jsonl", "bt", ([{"role": "user", "content": "What is 23+19?"}], [{"role": "assistant", "content": "42"}],
                                      [{"role": "assistant", "content": "32"}])),
    # UltraFeedback-binarized: the user turn inside chosen/rejected becomes the prompt, once
    ("ultrafeedback.jsonl", "bt", ([{"role": "user", "content": "What is 23+19?"}],
                                   [{"role": "assistant", "content": "23+19 = 42, so the answer is 42."}],
                                   [{"role": "assistant", "content": "23+19 = 32, so the answer is 32."}])),
    ("stepwise.jsonl", "prm", None),
    ("math_shepherd.jsonl", "prm", ("Janet has 3 apples and buys 5 more. She eats 2. How many apples are left?",
                                    ["Step 1: Janet starts with 3 apples and buys 5, so she has 3 + 5 = 8 apples.",
                                     "Step 2: She eats 2, so 8 - 2 = 6 apples are left.", "Step 3: The answer is: 6"],
                                    [True, True, True])),
]


@pytest.mark.parametrize("sample, kind, expected", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_rm_data_shape_loads_into_the_trainers_format(sample, kind, expected):
    rows = load_rm_rows(str(SAMPLES / sample))
    fmt = detect_format(rows, kind, sample)
    check_rows(rows, fmt, sample)
    assert fmt == {"bt": "preference", "prm": "stepwise"}[kind]
    if expected is not None:
        keys = ("prompt", "chosen", "rejected") if kind == "bt" else ("prompt", "completions", "labels")
        assert tuple(rows[0][k] for k in keys) == expected
    if sample == "math_shepherd.jsonl":
        assert rows[1]["labels"] == [True, False, False]  # "-" marks the second step and the last


@pytest.mark.parametrize("sample, kind", [(s[0], s[1]) for s in SHAPES])
def test_train_rm_trains_on_each_shape(tiny_backbone, tmp_path, sample, kind):
    from reward_models.train import TrainRMConfig, train

    cfg = TrainRMConfig(kind=kind, data=str(SAMPLES / sample), eval_data=str(SAMPLES / sample), backbone=tiny_backbone,
                        output=str(tmp_path / "rm"), steps=2, batch_size=2, warmup_steps=1, max_seq_length=64, eval_every=2,
                        save_every=2)
    result = train(cfg, progress=False)
    assert Path(result["final"], "config.json").exists() and result["eval"]


def test_ultrafeedback_rows_do_not_repeat_the_prompt():
    """Before: prompt (a string) + chosen ([user, assistant]) gave "user: Q\\nuser: Q\\nassistant: A"."""
    row = json.loads((SAMPLES / "ultrafeedback.jsonl").read_text().splitlines()[0])
    enc = PairEncoder(char_tokenizer(), max_length=256)
    loaded = load_rm_rows(str(SAMPLES / "ultrafeedback.jsonl"))[0]
    text = enc.tokenizer.decode(enc.encode_pair(loaded["prompt"], loaded["chosen"])["input_ids"])
    assert text.count(row["prompt"]) == 1


def test_chat_templates_render_the_same_text_in_training_and_in_rl_scoring(tmp_path):
    """A reward model on a backbone with a chat template is trained on chat pairs; in RL the loop
    hands the reward the data's prompt string and the completion string. Both must be the same
    tokens (before, training used the template and scoring did not, or the reverse)."""
    from reward_models.scoring import LoadedRewardModel
    from reward_models.batches import encode_rows
    from rewards.learned import ScalarRMReward
    from transformers import LlamaConfig, LlamaModel

    from reward_models import RewardModel

    tok = char_tokenizer()
    backbone = tmp_path / "backbone"
    LlamaModel(LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           num_key_value_heads=2, max_position_embeddings=256, pad_token_id=0)).save_pretrained(backbone)
    tok.save_pretrained(backbone)
    model = RewardModel.from_backbone(str(backbone), "bt", max_seq_length=256, use_chat_template=True)
    rows = load_rm_rows(str(SAMPLES / "ultrafeedback.jsonl"))
    enc = PairEncoder(tok, max_length=256, append_eos=model.config.append_eos, chat_template=model.config.use_chat_template)
    trained = encode_rows(enc, rows[:1], "preference", [], "\n")[0]["chosen"]["input_ids"]
    rm = LoadedRewardModel(model, tok)
    seen = {}
    original = rm._run

    def spy(items, batch_size, reuse=False):
        seen["ids"] = items[0]["input_ids"]
        return original(items, batch_size, reuse)

    rm._run = spy
    raw = json.loads((SAMPLES / "ultrafeedback.jsonl").read_text().splitlines()[0])
    answer = raw["chosen"][1]["content"]
    ScalarRMReward(rm)(["<policy template>" + raw["prompt"]], [answer], raw_prompt=[raw["prompt"]])
    assert seen["ids"] == trained
    assert tok.decode(trained).startswith("<|user|>What is 23+19?\n<|assistant|>23+19 = 42")
