"""The `pcm` command line: demo, chat, ingest, memory inspection, repair.

One Typer `app` (`pcm.cli.common`) with its commands by concern: `conversation` (demo, chat,
ingest), `memory` (the `pcm memory` group), `repair`, `serve_llm` and `workflow` (the `pcm
graph` group). Importing a module registers its commands, in the order `pcm --help` lists them.
"""

from pcm.cli import conversation, memory, repair, serve_llm, workflow  # noqa: F401 (they register the commands)
from pcm.cli.common import app

__all__ = ["app"]
