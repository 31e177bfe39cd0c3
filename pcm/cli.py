"""The `pcm` command line: demo, chat, ingest, memory inspection, repair."""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

app = typer.Typer(help="PCM: a surprise-driven, self-evolving long-term memory for LLM agents.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
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
    from pcm.world.records import StorageError, is_damaged, storage_error

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
        if error.strerror:   # an OSError's first argument is its number
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


def _quiet_logs() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in ("bm25s", "transformers", "sentence_transformers", "chromadb", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _context(config: Optional[Path], data_dir: Optional[Path], **overrides):
    from pcm.config import load_context

    return load_context(config, data_dir=str(data_dir) if data_dir else None, **overrides)


def _pcm(config: Optional[Path], data_dir: Optional[Path], **overrides):
    _quiet_logs()
    from pcm.api import PCM

    return PCM(_context(config, data_dir, **overrides))


def _format_change(change: dict) -> str:
    old = "new" if change["old_weight"] is None else f"{change['old_weight']:.3f}"
    return f"{change['node_id']}  {old} → {change['new_weight']:.3f}  {change['reason'][:70]}"


def surprise_gauge(s_eff: float, low: float, high: float, width: int = 42) -> str:
    """A one-line gauge of S_eff against the bands: [green low | yellow medium | red high], ● = S_eff."""
    span = max(high - low, 1e-9)
    start, end = low - span, high + span
    def column(value: float) -> int:
        return int(round((min(max(value, start), end) - start) / (end - start) * (width - 1)))
    cells = []
    for i in range(width):
        colour = "green" if i <= column(low) else "yellow" if i <= column(high) else "red"
        cells.append(f"[{colour}]{'●' if i == column(s_eff) else '━'}[/]")
    return "".join(cells)


def print_turn(text: str, out: dict) -> None:
    """One turn's trace: surprise against the thresholds, the agent that ran, the memory changes."""
    packet = out["surprisal"]
    low, high = packet["theta_low"], packet["theta_high"]
    source = packet["level_source"]
    probabilities = packet.get("level_probabilities") or {}
    lines = [
        f"[bold]{text}[/]",
        f"intent {out['intent']['label']} ({out['intent']['confidence']:.2f})   scorer {packet['scorer']}",
        f"S_raw {packet['s_raw']:.3f}   H(C) {packet['retrieval_entropy']:.3f}   S_eff {packet['s_eff']:.3f}"
        f"   θ_low {low:.3f}  θ_high {high:.3f}",
        f"low {surprise_gauge(packet['s_eff'], low, high)} high",
        f"level [bold]{packet['level']}[/] (by {source}"
        + (", p=" + " ".join(f"{k}:{v:.2f}" for k, v in probabilities.items()) if probabilities else "")
        + f")  →  agent [bold]{out['agent']}[/]",
    ]
    lines += [f"  {_format_change(c)}" for c in out["changes"]]
    if out.get("response"):
        lines.append(f"[green]assistant:[/] {out['response']}")
    console.print(Panel("\n".join(lines), title=f"turn {out['turn']}", expand=False), highlight=False)


def print_memory(nodes: list) -> None:
    table = Table(title="memory")
    for column in ("id", "type", "domain", "weight", "content"):
        table.add_column(column)
    for node in nodes:
        table.add_row(node["id"], node["type"], node.get("domain") or "", f"{node['weight']:.3f}",
                      node["content"][:90])
    console.print(table)


@app.command()
@user_errors
def demo(
    json_output: bool = typer.Option(False, "--json", help="print the run as JSON"),
    lang: str = typer.Option("en", help="en, or zh for the specification's Chinese wording"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="keep the demo memory here (default: a temp dir)"),
    user: str = typer.Option("demo-user", "--user"),
    config: Optional[Path] = ConfigFile,
) -> None:
    """Run the specification's walkthrough offline and show how memory evolves."""
    from pcm.demo import run_demo

    with tempfile.TemporaryDirectory(prefix="pcm-demo-") as scratch:
        pcm = _pcm(config, data_dir or Path(scratch))
        if pcm.services.store.exists(user):
            raise ValueError(f"user {user!r} already has memory in {pcm.ctx.data_dir}; pick another --user")
        result = run_demo(pcm, user, lang)
    if json_output:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for turn in result["turns"]:
        expected = f"   (walkthrough: {turn['expected_level']})" if turn["expected_level"] else ""
        console.print(f"[bold]{turn['input']}[/]{expected}", highlight=False)
        console.print(f"  S_raw {turn['s_raw']:.3f}  H(C) {turn['retrieval_entropy']:.3f}  S_eff {turn['s_eff']:.3f}"
                      f"  level {turn['level']} ({turn['level_source']})  agent {turn['agent']}", highlight=False)
        for change in turn["changes"]:
            console.print(f"    {_format_change(change)}", highlight=False)
    print_memory(result["memory"])
    console.print(f"\n[bold]retrieval:[/] {result['query']}")
    for rank, hit in enumerate(result["retrieval"], 1):
        console.print(f"  {rank}. {hit['score']:.3f}  ({hit['type']}, w={hit['weight']:.2f}) {hit['content'][:90]}",
                      highlight=False)


@app.command()
@user_errors
def chat(data_dir: Optional[Path] = DataDir, user: str = User,
         thread: str = typer.Option("main", "--thread", help="conversation thread (working memory)"),
         config: Optional[Path] = ConfigFile) -> None:
    """Talk to PCM; each turn shows its surprise, routing and memory changes. Ctrl-D ends."""
    pcm = _pcm(config, data_dir)
    interactive = sys.stdin.isatty()
    if interactive:
        console.print("PCM chat — an empty line or Ctrl-D quits. Replies need an LLM (see README).")
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        except UnicodeDecodeError as error:
            errors.print(f"[bold red]error:[/] that line is not valid UTF-8 (byte {error.start}); skipped",
                         highlight=False)
            continue
        if not line.strip():
            if interactive:
                break
            continue
        try:
            print_turn(line, pcm.process(line, user_id=user, thread_id=thread))
        except ValueError as error:
            errors.print(f"[bold red]error:[/] {error}", highlight=False)


@app.command()
@user_errors
def ingest(file: Path = typer.Argument(..., help="JSON list of {role, content} messages, or a LoCoMo conversation "
                                             "(at most 20 MB)"),
           data_dir: Optional[Path] = DataDir, user: str = User,
           thread: str = typer.Option("main", "--thread"),
           conversation: Optional[str] = typer.Option(None, help="sample id, for a file with several conversations"),
           consolidate: bool = typer.Option(True, help="consolidate working memory at the end"),
           config: Optional[Path] = ConfigFile) -> None:
    """Replay a conversation into memory, turn by turn (with an LLM: no replies are generated)."""
    from rich.progress import Progress

    from pcm.ingest import ingest_turns, read_conversation

    ctx = _context(config, data_dir, llm_reply=False)
    turns = read_conversation(file, ctx, conversation)
    pcm = _pcm(config, data_dir, llm_reply=False)
    with Progress(console=errors) as progress:
        task = progress.add_task(f"ingesting {len(turns)} turns", total=len(turns))
        result = ingest_turns(pcm, turns, user, thread, consolidate, on_turn=lambda *_: progress.advance(task))
    skipped = f", {result['already_stored']} already stored" if result["already_stored"] else ""
    if result["reused_ids"]:
        ids = ", ".join(result["reused_ids"][:10]) + (", ..." if len(result["reused_ids"]) > 10 else "")
        errors.print(f"note: {len(result['reused_ids'])} messages reuse ids stored before with other text ({ids}); "
                     "each was stored as a new message", highlight=False)
    console.print(f"ingested {len(turns)} turns for user {user!r}: {result['agents']}{skipped}; "
                  f"{len(pcm.memory(user))} memories in {pcm.ctx.data_dir}")


def _open_memory(config, data_dir, user):
    pcm = _pcm(config, data_dir)
    return pcm, pcm.memory(user)


@memory_app.command("list")
@user_errors
def memory_list(data_dir: Optional[Path] = DataDir, user: str = User, config: Optional[Path] = ConfigFile,
                type: Optional[str] = typer.Option(None, help="only this node type"),
                include_dormant: bool = typer.Option(True, help="show dormant memories too")) -> None:
    """Every memory of a user, strongest first."""
    from pcm.models import NodeType

    _, graph = _open_memory(config, data_dir, user)
    types = [NodeType(type)] if type else None
    nodes = sorted(graph.nodes(types=types, include_dormant=include_dormant), key=lambda n: -n.weight)
    print_memory([n.model_dump(mode="json") for n in nodes])


@memory_app.command("show")
@user_errors
def memory_show(node_id: str, data_dir: Optional[Path] = DataDir, user: str = User,
                config: Optional[Path] = ConfigFile,
                as_of: Optional[str] = typer.Option(None, "--as-of", help="ISO date or time: show the memory, its "
                                                    "weight and links as they stood then")) -> None:
    """One memory: content, links and its audit history."""
    _, graph = _open_memory(config, data_dir, user)
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
        console.print(f"  turn {event.turn}: {_format_change(event.model_dump())} [{event.agent}]", highlight=False)


@memory_app.command("export")
@user_errors
def memory_export(data_dir: Optional[Path] = DataDir, user: str = User, config: Optional[Path] = ConfigFile,
                  out: Optional[Path] = typer.Option(None, help="write here instead of stdout"),
                  html: bool = typer.Option(False, "--html", help="an interactive knowledge-graph page instead")
                  ) -> None:
    """The whole memory as JSON (node-link graph and audit log), or as an offline HTML page."""
    from pcm.world.knowledge_graph import atomic_write_text

    _, graph = _open_memory(config, data_dir, user)
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
def memory_timeline(data_dir: Optional[Path] = DataDir, user: str = User, config: Optional[Path] = ConfigFile,
                    ids: Optional[list[str]] = typer.Option(None, "--id", help="memory id (repeatable); "
                                                            "default: the most often changed"),
                    out: Path = typer.Option(Path("timeline.png"), help="PNG to write")) -> None:
    """Plot how the weights of chosen memories moved over the turns."""
    from pcm.visualize import weight_timeline

    _, graph = _open_memory(config, data_dir, user)
    console.print(f"wrote {weight_timeline(graph, out, ids or None)}")


@app.command()
@user_errors
def repair(data_dir: Optional[Path] = DataDir,
           user: Optional[str] = typer.Option(None, "--user", help="only this user (default: every user)"),
           config: Optional[Path] = ConfigFile) -> None:
    """Check the stored memory and rebuild the vector index (and a damaged working memory) from it.

    memory.sqlite is checked page by page; each user's vector index is compared with their
    memories and rebuilt where it lacks any; an index or working memory that cannot be read is
    moved aside (*.damaged-<time>) and started anew. Exit code 2 if anything could not be repaired.
    """
    from pcm.api import open_checkpoints
    from pcm.repair import repair_store
    from pcm.services import Services
    from pcm.world.records import StorageError

    _quiet_logs()
    ctx = _context(config, data_dir)
    store = Services(ctx).store
    report = repair_store(store, [user] if user else None)
    if report.store_problems:
        raise StorageError(f"{store.records.path or 'the graph store'} is damaged ({report.store_problems[0]}); it "
                           "holds the long-term memory, which nothing else can rebuild: restore it from a backup")
    if ctx.checkpointer == "sqlite":
        saver, moved = open_checkpoints(ctx.data_dir, thorough=True)
        saver.conn.close()
        console.print(f"working memory: damaged, moved to {moved}; it starts empty" if moved else "working memory: ok",
                      highlight=False)
    for moved, reason in report.index_set_aside:
        others = "; other users' vectors are rebuilt when they are next opened" if user else ""
        console.print(f"vector index: damaged ({reason}), moved to {moved}; a new one was built{others}",
                      highlight=False)
    for found in report.users:
        console.print(found.line(), highlight=False)
    console.print(f"{store.records.path or 'graph store'}: ok; {report.total()}", highlight=False)
    if not report.repaired:
        failed = ", ".join(repr(u.user_id) for u in report.users if u.error)
        raise StorageError(f"the vector index of {failed} could not be repaired (see above); the stored memories are "
                           "intact, but search may miss some of them until `pcm repair` succeeds")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@app.command("serve-llm")
@user_errors
def serve_llm(data_dir: Optional[Path] = DataDir,
              port: int = typer.Option(0, help="loopback port (default: a free one)"),
              config: Optional[Path] = ConfigFile) -> None:
    """Serve the shipped SmolLM2-135M on loopback as an OpenAI-compatible LLM (Ctrl-C stops it).

    The first use converts the model into a Hugging Face folder under the model cache
    (`model_cache`, default ~/.cache/pcm/models).
    """
    from pcm.llm_server import LocalLLMServer
    from pcm.model_files import model_cache, prepare_model

    _quiet_logs()
    ctx = _context(config, data_dir)
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


if __name__ == "__main__":
    app()
