"""`pcm graph draw`: the PCM workflow as mermaid text and as a PNG."""

from __future__ import annotations

from pathlib import Path

import typer

from pcm.cli.common import console, graph_app, user_errors


@graph_app.command("draw")
@user_errors
def graph_draw(out_dir: Path = typer.Option(Path("."), help="folder for workflow.mmd and workflow.png")) -> None:
    """The workflow as mermaid text and as a PNG rendered offline (subgraphs expanded)."""
    from pcm.graph import build_graph
    from pcm.visualize import draw_workflow, workflow_mermaid

    compiled = build_graph()
    out_dir.mkdir(parents=True, exist_ok=True)
    mermaid = workflow_mermaid(compiled)
    (out_dir / "workflow.mmd").write_text(mermaid, encoding="utf-8")
    draw_workflow(compiled, out_dir / "workflow.png")
    typer.echo(mermaid)
    console.print(f"wrote {out_dir / 'workflow.mmd'} and {out_dir / 'workflow.png'}")
