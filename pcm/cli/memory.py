"""`pcm memory`: list, show, export and plot a user's long-term memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from pcm.cli.common import ConfigFile, DataDir, User, console, memory_app, open_memory, user_errors
from pcm.cli.output import format_change, print_memory


@memory_app.command("list")
@user_errors
def memory_list(
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    config: Optional[Path] = ConfigFile,
    type: Optional[str] = typer.Option(None, help="only this node type"),
    include_dormant: bool = typer.Option(True, help="show dormant memories too"),
) -> None:
    """Every memory of a user, strongest first (day nodes only with `--type day`)."""
    from pcm.models import SHOWN_TYPES, NodeType

    _, graph = open_memory(config, data_dir, user)
    types = [NodeType(type)] if type else SHOWN_TYPES
    nodes = sorted(graph.nodes(types=types, include_dormant=include_dormant), key=lambda n: -n.weight)
    print_memory([n.model_dump(mode="json") for n in nodes])


@memory_app.command("show")
@user_errors
def memory_show(
    node_id: str,
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    config: Optional[Path] = ConfigFile,
    as_of: Optional[str] = typer.Option(
        None, "--as-of", help="ISO date or time: show the memory, its weight and links as they stood then"
    ),
) -> None:
    """One memory: content, links and its audit history."""
    _, graph = open_memory(config, data_dir, user)
    if as_of:
        from pcm.models import as_utc

        try:
            graph = graph.as_of(as_utc(as_of))
        except ValueError:
            raise ValueError(f"--as-of {as_of!r} is not an ISO date or time (e.g. 2024-05-01)") from None
    node = graph.node(node_id)
    console.print_json(node.model_dump_json())
    for _, edge in graph.neighbours(node_id):
        console.print(f"  {edge.source} --{edge.relation} ({edge.weight:.2f})--> {edge.target}", highlight=False)
    for event in graph.history(node_id):
        console.print(f"  turn {event.turn}: {format_change(event.model_dump())} [{event.agent}]", highlight=False)


@memory_app.command("export")
@user_errors
def memory_export(
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    config: Optional[Path] = ConfigFile,
    out: Optional[Path] = typer.Option(None, help="write here instead of stdout"),
    html: bool = typer.Option(False, "--html", help="an interactive knowledge-graph page instead"),
) -> None:
    """The whole memory as JSON (node-link graph and audit log), or as an offline HTML page."""
    from pcm.world.persistence import atomic_write_text

    _, graph = open_memory(config, data_dir, user)
    if html:
        from pcm.visualize import memory_html

        out = out or Path(f"memory-{user}.html")
        atomic_write_text(out, memory_html(graph))
        console.print(f"wrote {out} (open it in a browser; it needs no network)")
        return
    text = json.dumps(graph.export(), ensure_ascii=False, indent=2)
    if out:
        atomic_write_text(out, text)
        console.print(f"wrote {out}")
    else:
        typer.echo(text)


@memory_app.command("timeline")
@user_errors
def memory_timeline(
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    config: Optional[Path] = ConfigFile,
    ids: Optional[list[str]] = typer.Option(
        None, "--id", help="memory id (repeatable); default: the most often changed"
    ),
    out: Path = typer.Option(Path("timeline.png"), help="PNG to write"),
) -> None:
    """Plot how the weights of chosen memories moved over the turns."""
    from pcm.visualize import weight_timeline

    _, graph = open_memory(config, data_dir, user)
    console.print(f"wrote {weight_timeline(graph, out, ids or None)}")
