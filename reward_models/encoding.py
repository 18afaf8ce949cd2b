"""Turning (prompt, response) and (prompt, steps) into token ids, with a documented truncation.

Text: a prompt or response is a string or a list of chat messages ({"role", "content"}). With
chat messages, the backbone tokenizer's chat template is applied when it has one (the prompt is
rendered with the generation prompt, the response is what the full conversation adds after it);
without a template, messages are rendered as "role: content" lines. With `chat_template=True`
(what `train-rm` records for a backbone that has a template, `RewardModelConfig.use_chat_template`)
plain strings go through the template too, as the user turn and the assistant turn: a reward model
then reads the same text whether its data (or the RL loop) holds strings or messages, in training
and in scoring alike.

Layout: the tokenizer's own pair template (`[CLS] prompt [SEP] response [SEP]` for BERT-like
encoders; decoders usually just concatenate, with BOS if their template adds one).

Truncation (`max_length` tokens in total, special tokens included): the END of the response is
kept - the response is cut from the left - because the final answer, which decides correctness,
sits at the end. The prompt keeps at most what the response leaves, but never less than half of
the budget; a prompt longer than that is also cut from the left (its question sits at the end).
For PRM inputs, steps whose last token was cut away get no score (NaN, excluded from the
aggregations and counted in `StepScores.n_truncated`).

`append_eos` (reward models on a causal LM): the tokenizer's EOS token ends every input, as it ends
the policy's completions; it counts in `max_length`. A PRM then reads its LAST step at that EOS: a
causal model cannot see, at a step's last token, whether the solution ends there, and a solution
that stops early (a right first step, then EOS) must not score as a right last step. Every encoding also gives `response_start`,
the index of its first response token (where a next-token loss on the response begins).

>>> from reward_models.backbones import default_backbone_path, load_tokenizer
>>> enc = PairEncoder(load_tokenizer(default_backbone_path()), max_length=8)
>>> ids = enc.encode_pair("1+1=", "the answer is 2")["input_ids"]
>>> enc.tokenizer.decode(ids)
'[CLS] 1 = [SEP] answer is 2 [SEP]'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
from tokenizers import Encoding, Tokenizer

Message = dict[str, Any]


def is_messages(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(m, dict) and "content" in m for m in value)


def _plain_messages(messages: Sequence[Message]) -> str:
    return "\n".join(f"{m.get('role', 'user')}: {m['content']}" for m in messages)


@dataclass
class PairEncoder:
    """Encodes prompts, responses and steps for one tokenizer (see the module docstring)."""

    tokenizer: Any
    max_length: int = 512
    append_eos: bool = False
    chat_template: bool | None = None  # True: strings are chat turns too; False: never the template; None: messages only

    def __post_init__(self) -> None:
        if self.max_length < 8:
            raise ValueError(f"max_length must be >= 8 tokens, got {self.max_length}")
        if self.append_eos and self.tokenizer.eos_token_id is None:
            raise ValueError("append_eos needs a tokenizer with an EOS token")
        # a private copy of the Rust tokenizer without the padding/truncation a tokenizer.json may carry
        self._backend: Tokenizer = Tokenizer.from_str(self.tokenizer.backend_tokenizer.to_str())
        self._backend.no_padding()
        self._backend.no_truncation()
        self._n_special = self._count_special()

    def _count_special(self) -> int:
        empty = self._backend.encode("", add_special_tokens=False)
        return len(self._join(empty, self._backend.encode("", add_special_tokens=False)).ids)

    def _join(self, prompt: Encoding, response: Encoding) -> Encoding:
        post = self._backend.post_processor
        if post is None:  # plain concatenation (many decoders); mark which side each token came from
            prompt.set_sequence_id(0)
            response.set_sequence_id(1)
            return Encoding.merge([prompt, response], growing_offsets=False)
        return post.process(prompt, response, add_special_tokens=True)

    # ----- text rendering --------------------------------------------------------------------
    def render(self, prompt: Any, response: Any) -> tuple[str, str]:
        """(prompt text, response text) for plain strings or chat messages."""
        template = getattr(self.tokenizer, "chat_template", None) and self.chat_template is not False
        if not is_messages(prompt) and not is_messages(response) and not (template and self.chat_template):
            return str(prompt), str(response)
        p_msgs = list(prompt) if is_messages(prompt) else ([{"role": "user", "content": str(prompt)}] if str(prompt) else [])
        r_msgs = list(response) if is_messages(response) else [{"role": "assistant", "content": str(response)}]
        if template:
            head = self.tokenizer.apply_chat_template(p_msgs, tokenize=False, add_generation_prompt=True)
            full = self.tokenizer.apply_chat_template(p_msgs + r_msgs, tokenize=False)
            if full.startswith(head):
                return head, full[len(head):]
            return head, _plain_messages(r_msgs)
        return _plain_messages(p_msgs), _plain_messages(r_msgs)

    # ----- encoding --------------------------------------------------------------------------
    def _budgets(self, n_prompt: int, n_response: int) -> tuple[int, int]:
        budget = self.max_length - self._n_special - int(self.append_eos)
        keep_prompt = min(n_prompt, max(budget - n_response, budget // 2))
        return keep_prompt, budget - keep_prompt

    def _encode(self, prompt_text: str, response_text: str) -> tuple[Encoding, int]:
        p = self._backend.encode(prompt_text, add_special_tokens=False)
        r = self._backend.encode(response_text, add_special_tokens=False)
        keep_p, keep_r = self._budgets(len(p.ids), len(r.ids))
        if len(p.ids) > keep_p:
            p.truncate(keep_p, direction="left")
        if len(r.ids) > keep_r:
            r.truncate(keep_r, direction="left")
        return self._join(p, r), len(r.ids)

    def _finish(self, enc: Encoding) -> dict[str, Any]:
        """ids, type ids and `response_start` of a joined encoding, with EOS appended if asked."""
        ids, types = list(enc.ids), list(enc.type_ids)
        start = next((i for i, sid in enumerate(enc.sequence_ids) if sid == 1), len(ids))
        if self.append_eos:
            ids.append(self.tokenizer.eos_token_id)
            types.append(types[-1] if types else 0)
        return {"input_ids": ids, "token_type_ids": types, "response_start": start}

    def encode_pair(self, prompt: Any, response: Any) -> dict[str, Any]:
        """{"input_ids", "token_type_ids", "response_start"} for one (prompt, response)."""
        p_text, r_text = self.render(prompt, response)
        enc, _ = self._encode(p_text, r_text)
        return self._finish(enc)

    def encode_steps(self, prompt: Any, steps: Sequence[str], separator: str) -> dict[str, Any]:
        """Ids for prompt + steps joined by `separator` (each step followed by it), plus
        `step_positions`: for step k the index of its last token, or -1 when truncated away."""
        p_text = self.render(prompt, "")[0] if is_messages(prompt) or self.chat_template else str(prompt)
        r_text, ends = "", []
        for step in steps:
            r_text += str(step)
            ends.append(len(r_text))  # char offset just after the step's text
            r_text += separator
        enc, _ = self._encode(p_text, r_text)
        positions = []
        seq_ids, offsets = enc.sequence_ids, enc.offsets
        for end in ends:
            pos = -1
            for i, (sid, (a, b)) in enumerate(zip(seq_ids, offsets)):
                if sid == 1 and b > a and b <= end:
                    pos = i  # last response token that ends inside this step
            positions.append(pos)
        # a step whose first characters were truncated may still end in the kept text: keep it only
        # if its last token is strictly after the previous step's last token
        for k in range(1, len(positions)):
            if positions[k] != -1 and positions[k] <= positions[k - 1]:
                positions[k] = -1
        first_kept = next((i for i, s in enumerate(seq_ids) if s == 1), None)
        if first_kept is not None:
            start_char = offsets[first_kept][0]
            positions = [p if p != -1 and ends[k] > start_char else -1 for k, p in enumerate(positions)]
        out = self._finish(enc)
        if self.append_eos and positions and positions[-1] != -1:
            positions[-1] = len(out["input_ids"]) - 1  # the last step is judged at the EOS that ends the solution
        return {**out, "step_positions": positions}


def collate(items: Sequence[dict[str, Any]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a list of encodings into tensors input_ids/attention_mask/token_type_ids [N, T];
    PRM items also give `step_labels` [N, T] (-100 where no label) when they carry `labels`."""
    width = max(len(it["input_ids"]) for it in items)
    n = len(items)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    types = torch.zeros((n, width), dtype=torch.long)
    for i, it in enumerate(items):
        t = len(it["input_ids"])
        ids[i, :t] = torch.tensor(it["input_ids"])
        mask[i, :t] = 1
        types[i, :t] = torch.tensor(it["token_type_ids"])
    out = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    if items and "labels" in items[0]:
        labels = torch.full((n, width), -100.0)
        for i, it in enumerate(items):
            for pos, lab in zip(it["step_positions"], it["labels"]):
                if pos >= 0:
                    labels[i, pos] = float(lab)
        out["step_labels"] = labels
    return out
