"""Generative reward models: any causal LM as a judge.

(a) Verifier mode (GenRM / RL^V style): `p_yes(questions, solutions)` asks "Is this solution
    correct? Answer Yes or No" and reads P("Yes") from the next-token distribution: one forward
    pass, no sampling. The probability is the softmax over the whole vocabulary at the position
    after the prompt (`normalize=True` renormalises over {Yes, No} instead).
(b) Pointwise mode (DeepSeek-GRM style): `pointwise(prompt, responses, k, seed)` samples k
    judgments; each shows the responses in a fresh random order and asks for principles, a
    critique and an integer score 1-10 per response; the scores are mapped back to the original
    responses and summed over judgments (voting). A judgment that does not give exactly one
    integer in 1..10 for every response is unparseable: it is counted (`n_unparseable`) and
    kept (`unparseable`), never turned into a score.

Prompt templates are fields of `JudgeTemplates` (edit them or pass your own). The "Yes"/"No"
tokens are the first token of `yes_word` / `no_word`; with a chat model the prompt is wrapped in
its chat template (`use_chat_template`).

>>> templates = JudgeTemplates()
>>> "{question}" in templates.verifier and "{solution}" in templates.verifier
True
>>> parse_scores("Score for Response 1: 7\\nScore for Response 2: 3", 2)
[7, 3]
>>> parse_scores("Score for Response 1: 11", 1) is None   # out of range: unparseable
True
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

VERIFIER_TEMPLATE = (
    "Question: {question}\n"
    "Solution: {solution}\n"
    "Is this solution correct? Answer Yes or No.\n"
    "Answer:"
)
POINTWISE_TEMPLATE = (
    "You are an expert judge. Read the question and the responses below.\n"
    "First write the principles a good response to this question must satisfy, then critique each "
    "response against them, then score each response with an integer from 1 (worst) to 10 (best).\n"
    "End with one line per response, exactly: Score for Response <number>: <score>\n\n"
    "Question:\n{prompt}\n\n{responses}\n\nPrinciples:"
)
REFERENCE_TEMPLATE = (
    "Question: {question}\n"
    "Reference answer: {answer}\n"
    "Response: {response}\n"
    "Does the response's final answer match the reference answer? Answer Yes or No.\n"
    "Answer:"
)
RESPONSE_BLOCK = "[Response {index}]\n{response}\n[End of Response {index}]"
SCORE_PATTERN = r"Score for Response\s*(\d+)\s*:\s*\**\s*(-?\d+)"


@dataclass(frozen=True)
class JudgeTemplates:
    """Editable prompts of the judge (str.format templates)."""

    verifier: str = VERIFIER_TEMPLATE  # uses {question} and {solution}
    reference: str = REFERENCE_TEMPLATE  # uses {question}, {answer} (the gold) and {response}
    pointwise: str = POINTWISE_TEMPLATE  # uses {prompt} and {responses}
    response_block: str = RESPONSE_BLOCK  # one response: {index} (1-based) and {response}
    score_pattern: str = SCORE_PATTERN  # regex with groups (response number, score)
    yes_word: str = "Yes"
    no_word: str = "No"
    use_chat_template: bool = True  # wrap prompts in the tokenizer's chat template when it has one


def parse_scores(text: str, n: int, pattern: str = SCORE_PATTERN, low: int = 1, high: int = 10) -> list[int] | None:
    """Scores for responses 1..n, or None unless each has exactly one integer in [low, high]."""
    found: dict[int, list[int]] = {}
    for idx, score in re.findall(pattern, text):
        found.setdefault(int(idx), []).append(int(score))
    scores = []
    for i in range(1, n + 1):
        values = found.get(i, [])
        if len(values) != 1 or not low <= values[0] <= high:
            return None
        scores.append(values[0])
    return scores


def pointwise_prompt(templates: JudgeTemplates, prompt: str, responses: Sequence[str], order: Sequence[int]) -> str:
    """The pointwise judging prompt with `responses` shown in `order` (numbered from 1)."""
    blocks = [templates.response_block.format(index=i + 1, response=responses[j]) for i, j in enumerate(order)]
    return templates.pointwise.format(prompt=prompt, responses="\n\n".join(blocks))


@dataclass
class PointwiseResult:
    """Summed (voted) scores per response, in the caller's order."""

    scores: list[int]  # sum over parseable judgments
    votes: list[list[int]]  # each parseable judgment's score, per response
    n_judgments: int
    n_unparseable: int
    judgments: list[str] = field(default_factory=list)  # every judgment's text, in sampling order
    unparseable: list[str] = field(default_factory=list)  # the texts that gave no usable scores

    @property
    def n_parsed(self) -> int:
        return self.n_judgments - self.n_unparseable


class GenerativeJudge:
    """A causal LM as judge (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, templates: JudgeTemplates | None = None, batch_size: int = 8) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.templates = templates or JudgeTemplates()
        self.batch_size = batch_size
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        self.yes_id = self._first_token(self.templates.yes_word, "yes_word")
        self.no_id = self._first_token(self.templates.no_word, "no_word")
        if self.yes_id == self.no_id:
            raise ValueError(f"yes_word {self.templates.yes_word!r} and no_word {self.templates.no_word!r} start with the same token")

    @classmethod
    def from_pretrained(cls, path_or_name: str, templates: JudgeTemplates | None = None, **kwargs: Any) -> "GenerativeJudge":
        """Load any `AutoModelForCausalLM` (local path or hub name) and its tokenizer."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(path_or_name, **kwargs)
        return cls(model, AutoTokenizer.from_pretrained(path_or_name), templates)

    def _first_token(self, word: str, name: str) -> int:
        ids = self.tokenizer.encode(word, add_special_tokens=False)
        if not ids:
            raise ValueError(f"templates.{name} {word!r} encodes to no token with this tokenizer")
        return ids[0]

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _wrap(self, text: str) -> str:
        if self.templates.use_chat_template and getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)
        return text

    def _left_padded(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        ids = [self.tokenizer.encode(t, add_special_tokens=True) for t in texts]
        width = max(len(x) for x in ids)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in ids], device=self.device)
        mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids], device=self.device)
        return {"input_ids": input_ids, "attention_mask": mask}

    @torch.no_grad()
    def next_token_probs(self, texts: Sequence[str]) -> torch.Tensor:
        """Softmax over the vocabulary at the position after each text: [N, V] (float32, CPU)."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = self._left_padded([self._wrap(t) for t in texts[start : start + self.batch_size]])
            logits = self.model(**batch).logits[:, -1].float()  # [B, V] last position (left padding)
            out.append(torch.softmax(logits, dim=-1).cpu())
        return torch.cat(out) if out else torch.zeros(0, 0)

    def p_yes(self, questions: Sequence[str], solutions: Sequence[str], normalize: bool = False) -> list[float]:
        """P("Yes") for each (question, solution) from the next-token distribution (no sampling)."""
        if len(questions) != len(solutions):
            raise ValueError(f"got {len(questions)} questions but {len(solutions)} solutions; pass one per question")
        texts = [self.templates.verifier.format(question=q, solution=s) for q, s in zip(questions, solutions)]
        probs = self.next_token_probs(texts)
        if not len(texts):
            return []
        yes, no = probs[:, self.yes_id], probs[:, self.no_id]
        return (yes / (yes + no) if normalize else yes).tolist()

    @torch.no_grad()
    def generate(self, prompts: Sequence[str], max_new_tokens: int = 256, temperature: float = 1.0, top_p: float = 1.0, seed: int | None = None) -> list[str]:
        """One completion per prompt (greedy when temperature == 0); returns only the new text."""
        if seed is not None:
            torch.manual_seed(seed)
        out = []
        for start in range(0, len(prompts), self.batch_size):
            batch = self._left_padded([self._wrap(p) for p in prompts[start : start + self.batch_size]])
            sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p} if temperature > 0 else {"do_sample": False}
            ids = self.model.generate(**batch, max_new_tokens=max_new_tokens, pad_token_id=self.tokenizer.pad_token_id, **sampling)
            out += self.tokenizer.batch_decode(ids[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
        return out

    def pointwise_prompt(self, prompt: str, responses: Sequence[str], order: Sequence[int]) -> str:
        return pointwise_prompt(self.templates, prompt, responses, order)

    def judge_reference(self, questions: Sequence[str], references: Sequence[str], responses: Sequence[str]) -> list[bool | None]:
        """Whether each response's final answer matches the reference: P("Yes") > P("No") at the
        next token of the reference template (no sampling)."""
        texts = [self.templates.reference.format(question=q, answer=a, response=r) for q, a, r in zip(questions, references, responses)]
        if not texts:
            return []
        probs = self.next_token_probs(texts)
        return (probs[:, self.yes_id] > probs[:, self.no_id]).tolist()

    def pointwise(self, prompt: str, responses: Sequence[str], k: int = 4, seed: int = 0, max_new_tokens: int = 512, temperature: float = 1.0) -> PointwiseResult:
        """k sampled judgments, responses shuffled in each, scores summed per response."""
        if k < 1 or not responses:
            raise ValueError(f"pointwise needs k >= 1 and at least one response, got k={k}, {len(responses)} responses")
        rng = random.Random(seed)
        orders = [rng.sample(range(len(responses)), len(responses)) for _ in range(k)]
        texts = self.generate([self.pointwise_prompt(prompt, responses, o) for o in orders], max_new_tokens, temperature, seed=seed)
        totals, votes, bad = [0] * len(responses), [[] for _ in responses], []
        for order, text in zip(orders, texts):
            scores = parse_scores(text, len(responses), self.templates.score_pattern)
            if scores is None:
                bad.append(text)
                continue
            for shown, original in enumerate(order):
                totals[original] += scores[shown]
                votes[original].append(scores[shown])
        return PointwiseResult(totals, votes, k, len(bad), list(texts), bad)
