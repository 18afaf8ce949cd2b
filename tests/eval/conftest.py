"""Session fixtures for the end-to-end eval tests: small reward models trained with the project's
trainer, and the project's shipped default policy. Everything is loaded back
through `from_pretrained` with local paths.

The pairwise RM sits on the packaged MiniLM cut to its first 2 layers: pretrained token
embeddings are what make embedding-based OOD detection meaningful (a BERT trained from scratch
for a few steps has random embeddings for every word it never saw), and 2 layers keep training
to seconds. The PRM and quantile RMs, which only exercise their code paths, use a tiny BERT
built from a config with MiniLM's tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch


@pytest.fixture(scope="session")
def eval_backbone(tmp_path_factory) -> str:
    from transformers import BertConfig, BertModel

    from reward_models.backbones import default_backbone_path, load_tokenizer

    tokenizer = load_tokenizer(default_backbone_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=128)
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("eval-bert")
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def minilm2_backbone(tmp_path_factory) -> str:
    from transformers import AutoModel

    from reward_models.backbones import default_backbone_path, load_tokenizer

    source = default_backbone_path()
    model = AutoModel.from_pretrained(source)
    model.encoder.layer = model.encoder.layer[:2]
    model.config.num_hidden_layers = 2
    path = tmp_path_factory.mktemp("minilm-2-layers")
    model.save_pretrained(path)
    load_tokenizer(source).save_pretrained(path)
    return str(path)


def _train(tmp_path_factory, backbone: str, kind: str, steps: int, **settings) -> str:
    from reward_models.train import TrainRMConfig, train

    out = tmp_path_factory.mktemp(f"rm-{kind}") / "run"
    cfg = TrainRMConfig(kind=kind, backbone=backbone, output=str(out), steps=steps, warmup_steps=5, max_seq_length=96,
                        n_train=1000, n_eval=64, eval_every=10_000, save_every=10_000, **settings)
    return str(train(cfg, progress=False)["final"])


@pytest.fixture(scope="session")
def bt_rm_path(tmp_path_factory, minilm2_backbone) -> str:
    # 40 steps of 16 pairs learn the easy error types (missing answer, skipped steps): ~0.7 accuracy
    return _train(tmp_path_factory, minilm2_backbone, "bt", 40, batch_size=16, lr=3e-4)


@pytest.fixture(scope="session")
def prm_rm_path(tmp_path_factory, eval_backbone) -> str:
    return _train(tmp_path_factory, eval_backbone, "prm", 15, batch_size=16, lr=1e-3)


@pytest.fixture(scope="session")
def quantile_rm_path(tmp_path_factory, eval_backbone) -> str:
    return _train(tmp_path_factory, eval_backbone, "quantile", 15, batch_size=16, lr=1e-3)


@pytest.fixture(scope="session")
def tiny_policy_path(tmp_path_factory) -> str:
    """The project's default policy: shipped, so the same bits on every machine (about 20% held-out
    greedy accuracy on 3-digit sums)."""
    from training.policy import default_policy_path

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REWARDLAB_CACHE", str(tmp_path_factory.getbasetemp() / "rewardlab-cache"))
        return str(default_policy_path())
