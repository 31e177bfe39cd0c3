"""`python -m pcm.cli`: the `pcm` command."""

from pcm.cli import app

app()
