"""How training rows become the tensors of a `train-rm` step: token ids once per row
(`encode_rows`), the batch order of every step (`BatchSampler`, prompts kept together by
`rows_by_prompt`), the padded batch (`make_batch`) and a forward pass that skips padding compute
(`forward_by_length`)."""

from __future__ import annotations

import random
from typing import Any

import torch

from reward_models.encoding import PairEncoder, collate

PER_TOKEN = ("step_logits", "hidden")  # model outputs with one entry per token


def encode_rows(enc: PairEncoder, rows: list[dict], fmt: str, cols: list[str], separator: str) -> list[dict]:
    """Token ids per row, once, before training. Each encoding carries `preferred`: whether the
    next-token regulariser trains on it (chosen responses; step lists whose every label is true;
    scored rows at the maximum of the first score column)."""
    if fmt == "preference":
        return [
            {"chosen": {**enc.encode_pair(r.get("prompt", ""), r["chosen"]), "preferred": True},
             "rejected": {**enc.encode_pair(r.get("prompt", ""), r["rejected"]), "preferred": False},
             "margin": float(r.get("margin") or 0.0)}
            for r in rows
        ]
    if fmt == "scored":
        best = max(float(r[cols[0]]) for r in rows)
        return [{**enc.encode_pair(r["prompt"], r["response"]), "targets": [float(r[c]) for c in cols],
                 "preferred": float(r[cols[0]]) >= best, "prompt_key": str(r["prompt"])} for r in rows]
    return [{**enc.encode_steps(r["prompt"], r["completions"], separator), "labels": [bool(x) for x in r["labels"]],
             "prompt_key": str(r["prompt"]),
             "preferred": all(r["labels"])} for r in rows]


def lm_labels(items: list[dict], width: int) -> torch.Tensor:
    """[N, T] next-token targets for the regulariser: at position t the token t + 1, over the
    response (and its EOS) of preferred items; -100 elsewhere."""
    labels = torch.full((len(items), width), -100, dtype=torch.long)
    for i, it in enumerate(items):
        if it.get("preferred"):
            ids = it["input_ids"]
            start = max(it["response_start"], 1)
            labels[i, start - 1 : len(ids) - 1] = torch.tensor(ids[start:], dtype=torch.long)
    return labels


def same_prompt_pairs(items: list[dict]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(better [M], worse [M], gap [M]): what the ranking term of quantile training compares. Rows
    of one response (the same prompt and response tokens: one row per rater of it) are one response,
    its target the mean of its rows' first scores in the batch, represented by its first row; every
    two responses of one prompt with different means form a pair, weighted by how far apart the
    means are (`gap`). Pairs of single rows would rank one rater's draw against another's (a
    response against itself, when two raters of it disagree) and count a near miss's 0.001 edge
    over another near miss as much as a right answer's edge over a wrong one.

    >>> rows = [{"prompt_key": "q", "input_ids": [1, r], "targets": [t]} for r, t in [(5, 1.0), (5, 0.0), (6, 0.2), (7, 0.2)]]
    >>> [x.tolist() for x in same_prompt_pairs(rows)]
    [[0, 0], [2, 3], [0.30000001192092896, 0.30000001192092896]]
    """
    responses: dict[tuple, list[int]] = {}
    for i, it in enumerate(items):
        responses.setdefault((it["prompt_key"], tuple(it["input_ids"])), []).append(i)
    by_prompt: dict[str, list[tuple[int, float]]] = {}
    for (key, _), idx in responses.items():
        by_prompt.setdefault(key, []).append((idx[0], sum(items[i]["targets"][0] for i in idx) / len(idx)))
    pairs = [(a, b, ya - yb) for group in by_prompt.values() for a, ya in group for b, yb in group if ya > yb]
    return (torch.tensor([a for a, _, _ in pairs], dtype=torch.long), torch.tensor([b for _, b, _ in pairs], dtype=torch.long),
            torch.tensor([g for _, _, g in pairs], dtype=torch.float32))


def same_prompt_step_pairs(items: list[dict]) -> tuple[torch.Tensor, torch.Tensor]:
    """(good [M, 2], bad [M, 2]) (row, token position) of the k-th steps of two solutions of one
    prompt where one is labelled correct and the other not: what the PRM's ranking term compares."""
    by_prompt: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_prompt.setdefault(it["prompt_key"], []).append(i)
    good, bad = [], []
    for idx in by_prompt.values():
        for a in idx:
            for b in idx:
                for k, (pa, pb) in enumerate(zip(items[a]["step_positions"], items[b]["step_positions"])):
                    if pa >= 0 and pb >= 0 and items[a]["labels"][k] and not items[b]["labels"][k]:
                        good.append((a, pa)), bad.append((b, pb))
    return torch.tensor(good, dtype=torch.long).view(-1, 2), torch.tensor(bad, dtype=torch.long).view(-1, 2)


def make_batch(items: list[dict], fmt: str, pad_id: int) -> dict[str, Any]:
    """Preference: every distinct response of the batch once ([U, T]; pairs of one prompt share
    their responses), with `chosen` / `rejected` indices [B] into it; others: one row each.
    `lm_labels` [N, T] are the regulariser's targets."""
    if fmt == "preference":
        unique: dict[tuple[int, ...], int] = {}
        seqs: list[dict] = []
        index = {"chosen": [], "rejected": []}
        for it in items:
            for side in ("chosen", "rejected"):
                key = tuple(it[side]["input_ids"])
                if key not in unique:
                    unique[key] = len(seqs)
                    seqs.append(dict(it[side]))
                seqs[unique[key]]["preferred"] = seqs[unique[key]]["preferred"] or it[side]["preferred"]
                index[side].append(unique[key])
        inputs = collate(seqs, pad_id)
        return {"inputs": inputs, "margin": torch.tensor([it["margin"] for it in items]), "chosen": torch.tensor(index["chosen"]),
                "rejected": torch.tensor(index["rejected"]), "lm_labels": lm_labels(seqs, inputs["input_ids"].shape[1])}
    batch = collate(items, pad_id)
    step_labels = batch.pop("step_labels", None)
    out: dict[str, Any] = {"inputs": batch, "lm_labels": lm_labels(items, batch["input_ids"].shape[1])}
    if fmt == "scored":
        out["targets"] = torch.tensor([it["targets"] for it in items])
        out["better"], out["worse"], out["gap"] = same_prompt_pairs(items)
    if step_labels is not None:
        out["step_labels"] = step_labels
        out["good_steps"], out["bad_steps"] = same_prompt_step_pairs(items)
    return out


def forward_by_length(model, inputs: dict[str, torch.Tensor], chunks: int, padding_free: bool = False,
                      **kwargs: Any) -> dict[str, torch.Tensor]:
    """The model's outputs for a right-padded batch, skipping padding compute: padding costs
    compute although it is masked, and a random batch of short and long rows is ~30% padding.
    `padding_free`: one forward over the rows' real tokens only (`backbones.packed_hidden_states`,
    for backbones where `padding_free_mismatch` found nothing); else `chunks` length-sorted pieces,
    each cut to its own longest row. Outputs equal one padded forward's (padding is masked) up to
    float rounding and come back in the batch's order; per-token outputs are re-padded."""
    n, width = inputs["input_ids"].shape
    if padding_free:
        return model(**inputs, padding_free=True, **kwargs)
    if chunks <= 1 or n < 2 * chunks:
        return model(**inputs, **kwargs)
    lengths = inputs["attention_mask"].sum(1)  # [N]
    pieces = torch.argsort(lengths).chunk(chunks)
    outs = []
    for idx in pieces:
        w = int(lengths[idx].max())
        outs.append(model(**{k: v[idx, :w] for k, v in inputs.items()}, **kwargs))
    inverse = torch.argsort(torch.cat(pieces))
    merged = {}
    for key in outs[0]:
        parts = outs[0][key], *[o[key] for o in outs[1:]]
        if key in PER_TOKEN:  # [n_i, w_i, ...] -> [n_i, width, ...]
            parts = [torch.nn.functional.pad(p, (0, 0) * (p.dim() - 2) + (0, width - p.shape[1])) for p in parts]
        merged[key] = torch.cat(parts)[inverse]
    return merged


class BatchSampler:
    """The batch of row indices for each step: epochs are seeded permutations, so a resumed run
    sees the exact batches an uninterrupted run would have seen. With `groups` (rows that share a
    prompt) the permutation shuffles whole groups, so a batch holds a prompt's rows together (its
    pairs then share their responses in one forward).

    >>> BatchSampler(n=4, size=3, seed=0).indices(1) == BatchSampler(n=4, size=3, seed=0).indices(1)
    True
    """

    def __init__(self, n: int, size: int, seed: int, groups: list[list[int]] | None = None) -> None:
        self.n, self.size, self.seed, self.groups = n, size, seed, groups
        self._epoch, self._perm = -1, []

    def _permutation(self, epoch: int) -> list[int]:
        if epoch != self._epoch:
            rng = random.Random(f"{self.seed}-epoch-{epoch}")
            if self.groups is None:
                perm = list(range(self.n))
                rng.shuffle(perm)
            else:
                order = list(range(len(self.groups)))
                rng.shuffle(order)
                perm = [i for g in order for i in self.groups[g]]
            self._epoch, self._perm = epoch, perm
        return self._perm

    def indices(self, step: int) -> list[int]:
        start, out = step * self.size, []
        while len(out) < self.size:
            epoch, offset = divmod(start + len(out), self.n)
            out.extend(self._permutation(epoch)[offset : offset + self.size - len(out)])
        return out


def rows_by_prompt(rows: list[dict]) -> list[list[int]] | None:
    """Row indices grouped by prompt (first appearance order), or None when no prompt repeats."""
    by_prompt: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_prompt.setdefault(str(r.get("prompt", "")), []).append(i)
    return list(by_prompt.values()) if len(by_prompt) < len(rows) else None
