"""`pcm demo`, `pcm chat` and `pcm ingest`: conversations into memory, turn by turn."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Optional

import typer

from pcm.cli.common import ConfigFile, DataDir, User, app, console, context_for, errors, open_pcm, user_errors
from pcm.cli.output import format_change, print_memory, print_turn


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
        pcm = open_pcm(config, data_dir or Path(scratch))
        if pcm.services.store.exists(user):
            raise ValueError(f"user {user!r} already has memory in {pcm.ctx.data_dir}; pick another --user")
        result = run_demo(pcm, user, lang)
    if json_output:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for turn in result["turns"]:
        expected = f"   (walkthrough: {turn['expected_level']})" if turn["expected_level"] else ""
        console.print(f"[bold]{turn['input']}[/]{expected}", highlight=False)
        console.print(
            f"  S_raw {turn['s_raw']:.3f}  H(C) {turn['retrieval_entropy']:.3f}  S_eff {turn['s_eff']:.3f}"
            f"  level {turn['level']} ({turn['level_source']})  agent {turn['agent']}",
            highlight=False,
        )
        for change in turn["changes"]:
            console.print(f"    {format_change(change)}", highlight=False)
    print_memory(result["memory"])
    console.print(f"\n[bold]retrieval:[/] {result['query']}")
    for rank, hit in enumerate(result["retrieval"], 1):
        console.print(
            f"  {rank}. {hit['score']:.3f}  ({hit['type']}, w={hit['weight']:.2f}) {hit['content'][:90]}",
            highlight=False,
        )


@app.command()
@user_errors
def chat(
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    thread: str = typer.Option("main", "--thread", help="conversation thread (working memory)"),
    config: Optional[Path] = ConfigFile,
) -> None:
    """Talk to PCM; each turn shows its surprise, routing and memory changes. Ctrl-D ends."""
    pcm = open_pcm(config, data_dir)
    interactive = sys.stdin.isatty()
    if interactive:
        console.print("PCM chat — an empty line or Ctrl-D quits. Replies need an LLM (see README).")
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        except UnicodeDecodeError as error:
            errors.print(
                f"[bold red]error:[/] that line is not valid UTF-8 (byte {error.start}); skipped", highlight=False
            )
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
def ingest(
    file: Path = typer.Argument(
        ..., help="JSON list of {role, content} messages, or a LoCoMo conversation (at most 20 MB)"
    ),
    data_dir: Optional[Path] = DataDir,
    user: str = User,
    thread: str = typer.Option("main", "--thread"),
    conversation: Optional[str] = typer.Option(None, help="sample id, for a file with several conversations"),
    consolidate: bool = typer.Option(True, help="consolidate working memory at the end"),
    config: Optional[Path] = ConfigFile,
) -> None:
    """Replay a conversation into memory, turn by turn (with an LLM: no replies are generated)."""
    from rich.progress import Progress

    from pcm.ingest import ingest_turns, read_conversation

    ctx = context_for(config, data_dir, llm_reply=False)
    turns = read_conversation(file, ctx, conversation)
    pcm = open_pcm(config, data_dir, llm_reply=False)
    with Progress(console=errors) as progress:
        task = progress.add_task(f"ingesting {len(turns)} turns", total=len(turns))
        result = ingest_turns(pcm, turns, user, thread, consolidate, on_turn=lambda *_: progress.advance(task))
    skipped = f", {result['already_stored']} already stored" if result["already_stored"] else ""
    if result["reused_ids"]:
        ids = ", ".join(result["reused_ids"][:10]) + (", ..." if len(result["reused_ids"]) > 10 else "")
        errors.print(
            f"note: {len(result['reused_ids'])} messages reuse ids stored before with other text ({ids}); "
            "each was stored as a new message",
            highlight=False,
        )
    console.print(
        f"ingested {len(turns)} turns for user {user!r}: {result['agents']}{skipped}; "
        f"{pcm.memory(user).retrievable_count()} memories in {pcm.ctx.data_dir}"
    )
