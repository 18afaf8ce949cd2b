"""Optional vLLM rollout backend (GPU only), chosen with `--backend vllm`.

vLLM runs in the training process ("colocate"), sharing the GPU (`--vllm-gpu-memory`); after
every optimizer step the policy's weights are pushed into it with `load_weights`, so rollouts
always come from the current policy. Logprobs for the loss are still recomputed by the training
model's forward pass (same masking as the HF path), so both backends train identically.
Install with `pip install "rewardlab[vllm]"`.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import torch

from training.rollout import Rollout, completion_mask_and_texts, encode_prompts


def check_vllm_backend() -> None:
    """Fail early (before any model is loaded) when vLLM or CUDA is missing."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        raise ValueError(
            "--backend vllm needs the vllm package: `pip install \"rewardlab[vllm]\"` on a machine with an "
            "NVIDIA GPU; or use --backend hf (the default, transformers generate)"
        ) from None
    if not torch.cuda.is_available():
        raise ValueError("--backend vllm needs a CUDA GPU, and none is visible; use --backend hf")


class VLLMSampler:
    """Same `sample()` as `training.rollout.sample`, served by a colocated vLLM engine."""

    def __init__(self, model_path: str, tokenizer: Any, gpu_memory: float, max_model_len: int, seed: int,
                 accelerator: Any = None) -> None:
        check_vllm_backend()
        from vllm import LLM

        if accelerator is not None:  # vLLM's external launcher reads the torch.distributed layout
            os.environ.setdefault("RANK", str(accelerator.process_index))
            os.environ.setdefault("LOCAL_RANK", str(accelerator.local_process_index))
            os.environ.setdefault("WORLD_SIZE", str(accelerator.num_processes))
        self.tokenizer = tokenizer
        self.llm = LLM(
            model=model_path,
            gpu_memory_utilization=gpu_memory,
            max_model_len=max_model_len,
            seed=seed + (accelerator.process_index if accelerator is not None else 0),
            distributed_executor_backend="external_launcher" if accelerator is not None and accelerator.num_processes > 1 else None,
            enable_prefix_caching=True,
        )

    @torch.no_grad()
    def sync_weights(self, model: Any) -> None:
        """Push the current policy weights into the engine (after every optimizer step)."""
        engine_model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        unwrapped = getattr(model, "module", model)
        if hasattr(unwrapped, "merge_and_unload"):  # LoRA: push merged weights, keep the adapters
            unwrapped.merge_adapter()
            params = {k.replace("base_model.model.", "").replace(".base_layer", ""): v
                      for k, v in unwrapped.state_dict().items() if "lora_" not in k}
            engine_model.load_weights(params.items())
            unwrapped.unmerge_adapter()
        else:
            engine_model.load_weights(unwrapped.state_dict().items())
        self.llm.reset_prefix_cache()

    def sample(self, prompts: Sequence[str], num_samples: int, max_new_tokens: int, temperature: float,
               top_p: float, top_k: int, stop: Sequence[str] | None, device: Any) -> Rollout:
        from vllm import SamplingParams

        params = SamplingParams(n=num_samples, max_tokens=max_new_tokens, temperature=temperature, top_p=top_p,
                                top_k=top_k if top_k > 0 else -1, stop=list(stop) if stop else None,
                                include_stop_str_in_output=True)
        outputs = self.llm.generate(list(prompts), params, use_tqdm=False)
        token_lists = [list(c.token_ids) for o in outputs for c in o.outputs]
        width = max(1, max(map(len, token_lists)))
        pad = self.tokenizer.pad_token_id
        completion_ids = torch.tensor([t + [pad] * (width - len(t)) for t in token_lists], device=device)
        prompt_ids, prompt_mask = encode_prompts(self.tokenizer, prompts, device)
        prompt_ids = prompt_ids.repeat_interleave(num_samples, dim=0)
        prompt_mask = prompt_mask.repeat_interleave(num_samples, dim=0)
        eos = {self.tokenizer.eos_token_id}
        mask, truncated, texts = completion_mask_and_texts(self.tokenizer, completion_ids, stop, eos)
        # a row vLLM padded (shorter than the widest) ended by EOS or stop, not by truncation
        for i, t in enumerate(token_lists):
            if len(t) < max_new_tokens:
                mask[i, : len(t)] = 1
                truncated[i] = False
        completion_ids = completion_ids.masked_fill(mask == 0, pad)
        return Rollout(prompt_ids, prompt_mask, completion_ids, mask, truncated, texts)
