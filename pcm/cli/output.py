"""How the command line shows a turn (surprise against the thresholds, routing, memory
changes) and a list of memories."""

from __future__ import annotations

from rich.panel import Panel
from rich.table import Table

from pcm.cli.common import console


def format_change(change: dict) -> str:
    """One audit event in a line: memory, old → new weight, reason."""
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
    lines += [f"  {format_change(c)}" for c in out["changes"]]
    if out.get("response"):
        lines.append(f"[green]assistant:[/] {out['response']}")
    console.print(Panel("\n".join(lines), title=f"turn {out['turn']}", expand=False), highlight=False)


def print_memory(nodes: list) -> None:
    table = Table(title="memory")
    for column in ("id", "type", "domain", "weight", "content"):
        table.add_column(column)
    for node in nodes:
        table.add_row(node["id"], node["type"], node.get("domain") or "", f"{node['weight']:.3f}", node["content"][:90])
    console.print(table)
