"""`pcm serve-llm`: the shipped SmolLM2-135M as a local OpenAI-compatible LLM server."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

import typer

from pcm.cli.common import ConfigFile, DataDir, app, context_for, errors, quiet_logs, user_errors


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@app.command("serve-llm")
@user_errors
def serve_llm(
    data_dir: Optional[Path] = DataDir,
    port: int = typer.Option(0, help="loopback port (default: a free one)"),
    config: Optional[Path] = ConfigFile,
) -> None:
    """Serve the shipped SmolLM2-135M on loopback as an OpenAI-compatible LLM (Ctrl-C stops it).

    The first use converts the model into a Hugging Face folder under the model cache
    (`model_cache`, default ~/.cache/pcm/models).
    """
    from pcm.llm_server import LocalLLMServer
    from pcm.model_files import model_cache, prepare_model

    quiet_logs()
    ctx = context_for(config, data_dir)
    errors.print(f"preparing the model under {model_cache(ctx.model_cache)} (converted once) ...")
    folder = prepare_model(model_cache(ctx.model_cache))
    server = LocalLLMServer(folder, port=port, log_path=model_cache(ctx.model_cache) / "serve.log")
    errors.print(f"starting transformers serve on 127.0.0.1:{server.port} (log: {server.log_path}) ...")
    # the server runs in its own session (Ctrl-C in a terminal must not reach it twice), so a
    # SIGTERM to this command (a service manager, `timeout`) has to stop it the way Ctrl-C does
    signal.signal(signal.SIGTERM, _interrupt)
    with server:
        typer.echo(f"export PCM_LLM_BASE_URL={server.base_url}")
        typer.echo(f"export PCM_LLM_MODEL={server.model}")
        errors.print("serving; Ctrl-C stops the server")
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass
    if server.process.returncode not in (0, -15, None):
        raise ValueError(f"transformers serve exited with code {server.process.returncode}; see {server.log_path}")
