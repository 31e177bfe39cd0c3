"""What every `pcm` command shares: the Typer apps, the consoles, the common options, one-line
errors for what a user can act on, and opening the configured PCM."""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    help="PCM: a surprise-driven, self-evolving long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
memory_app = typer.Typer(help="Inspect a user's long-term memory.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
graph_app = typer.Typer(help="The PCM workflow itself.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)

DataDir = typer.Option(None, "--data-dir", help="where memory is stored (default: ./data or $PCM_DATA_DIR)")
User = typer.Option("default", "--user", help="whose memory (each user's memory is separate)")
ConfigFile = typer.Option(None, "--config", help="YAML settings file")

USER_ERRORS = (ValueError, LookupError, OSError, json.JSONDecodeError, sqlite3.Error)


def error_line(error: BaseException, data_dir: Optional[Path] = None) -> str | None:
    """The one line to show for an error the user can act on, or None for a bug (a traceback).

    PCM raises a full disk, an unwritable folder or a damaged file as `StorageError` with its
    own line; a raw OSError or sqlite3 error that reaches here anyway is named the same way."""
    from pcm.world.storage_errors import StorageError, is_damaged, storage_error

    if isinstance(error, (sqlite3.Error, OSError)) and not isinstance(error, StorageError):
        where = Path(data_dir or os.environ.get("PCM_DATA_DIR") or "data")
        named = getattr(error, "filename", None)
        translated = storage_error(error, named or where, folder=None if named else where)
        if translated is not None:
            return translated.args[0]
        if isinstance(error, sqlite3.Error):
            if is_damaged(error):
                return f"a database in {where} is damaged ({error}); run `pcm repair --data-dir {where}` to check it"
            return None
        if error.strerror:  # an OSError's first argument is its number
            return f"{error.strerror}: {named}" if named else error.strerror
    return str(error.args[0]) if error.args else str(error)


def user_errors(command):
    """Report user mistakes and storage problems as one line on stderr (exit code 2), not a traceback."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except USER_ERRORS as error:
            message = error_line(error, kwargs.get("data_dir"))
            if message is None:
                raise
            errors.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)
            raise typer.Exit(2) from None

    return wrapper


def quiet_logs() -> None:
    """Log warnings only, and only errors of the chattiest libraries."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in ("bm25s", "transformers", "sentence_transformers", "chromadb", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)


def context_for(config: Optional[Path], data_dir: Optional[Path], **overrides):
    """The settings (`pcm.config.load_context`) of this config file, data directory and overrides."""
    from pcm.config import load_context

    return load_context(config, data_dir=str(data_dir) if data_dir else None, **overrides)


def open_pcm(config: Optional[Path], data_dir: Optional[Path], **overrides):
    """PCM with those settings, its library logs kept to warnings."""
    quiet_logs()
    from pcm.api import PCM

    return PCM(context_for(config, data_dir, **overrides))


def open_memory(config, data_dir, user):
    """(PCM, the memory of `user`)."""
    pcm = open_pcm(config, data_dir)
    return pcm, pcm.memory(user)
