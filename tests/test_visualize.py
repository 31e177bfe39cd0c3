"""The pictures a user sees, rendered as they would see them (headless Chromium, matplotlib)."""

import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from functools import partial
from urllib.parse import quote

import numpy as np
import pytest
from PIL import Image
from test_world_model import fact
from typer.testing import CliRunner

from pcm.cli import app
from pcm.models import MemoryEdge, NodeType
from pcm.visualize import memory_html
from pcm.world.store import MemoryStore

runner = CliRunner()
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium(tmp_path, *args) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "Debian's chromium is needed (make install installs it)"
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def colourful_fraction(path) -> float:
    """Share of pixels that are not (near) white: a blank page scores ~0."""
    image = Image.open(path).convert("RGB").resize((200, 150))
    pixels = list(image.getdata())
    return sum(1 for r, g, b in pixels if min(r, g, b) < 235) / len(pixels)


@pytest.fixture(scope="module")
def demo_memory(tmp_path_factory):
    data = tmp_path_factory.mktemp("vis") / "data"
    result = runner.invoke(app, ["demo", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    return data


def test_knowledge_graph_page_renders_and_shows_history(demo_memory, tmp_path):
    page = tmp_path / "memory.html"
    result = runner.invoke(
        app, ["memory", "export", "--html", "--data-dir", str(demo_memory), "--user", "demo-user", "--out", str(page)]
    )
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    shot = tmp_path / "page.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,820", page.as_uri())
    assert colourful_fraction(shot) > 0.02
    exported = runner.invoke(app, ["memory", "export", "--data-dir", str(demo_memory), "--user", "demo-user"])
    import json

    corrected = next(n for n in json.loads(exported.stdout)["graph"]["nodes"] if "Python backend" in n["content"])
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", f"{page.as_uri()}#{corrected['id']}").stdout
    drawn = [n for n in json.loads(exported.stdout)["graph"]["nodes"] if n["type"] != "day"]  # days: the x axis
    assert dom.count('class="node"') == len(drawn)
    assert "History" in dom and "observation consistent with memory" in dom


def test_workflow_drawing_and_timeline(demo_memory, tmp_path):
    result = runner.invoke(app, ["graph", "draw", "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    mermaid = (tmp_path / "workflow.mmd").read_text()
    assert all(name in mermaid for name in ("subgraph correction", "subgraph profiling", "subgraph maintenance"))
    assert colourful_fraction(tmp_path / "workflow.png") > 0.02
    timeline = tmp_path / "timeline.png"
    result = runner.invoke(
        app, ["memory", "timeline", "--data-dir", str(demo_memory), "--user", "demo-user", "--out", str(timeline)]
    )
    assert result.exit_code == 0, result.output
    assert colourful_fraction(timeline) > 0.02
    bad = runner.invoke(
        app,
        [
            "memory",
            "timeline",
            "--data-dir",
            str(demo_memory),
            "--user",
            "demo-user",
            "--id",
            "m-nope",
            "--out",
            str(timeline),
        ],
    )
    assert bad.exit_code == 2 and "no memory with id" in bad.stderr


# ---------------------------------------------------------------------- a memory of a few hundred memories
ENTITY_NAMES = [
    "Alice", "Bob", "Berlin", "Kiel", "Python", "Django", "Marathon", "Guitar", "Tokyo", "Lisbon",
    "Mira", "Jonas", "Chess", "Sailing", "Piano", "Rust", "Biology", "Coffee", "Yoga", "Paris",
]  # fmt: skip
TOPICS = ["a new recipe", "the weekend", "a book", "work stress", "a trip", "a film", "running", "a concert"]
DOMAINS = ["Personal", "Professional", "Coding", "Casual"]
CHAINS = [
    ("The user lives in Berlin", "The user moved to Kiel", "The user moved on to Lisbon"),
    ("The user works at Acme", "The user switched to Globex", "The user now works at Initech"),
    ("The user plays guitar weekly", "The user plays guitar daily", "The user stopped playing guitar"),
    ("The user drinks coffee", "The user switched to tea", "The user drinks only water"),
]
SEARCHED = "kayaking trip to Lofoten"
START = datetime(2024, 3, 1, 8, tzinfo=timezone.utc)


def memory_node(content, node_type, moment, weight=0.7, domain="Personal", node_id=None):
    return fact(content, weight, domain, node_type, moment=moment, **({"id": node_id} if node_id else {}))


def chain_step(index: int) -> tuple[int, int] | None:
    """(chain, step) of the facts that make the supersession chains: days 1-3, 11-13 and 21-23."""
    return next(((c, s) for c in range(len(CHAINS)) for s in range(3) if index == 5 + 7 * c + 100 * s), None)


def fact_content(index: int) -> str:
    if chain_step(index):
        chain, step = chain_step(index)
        return f"{CHAINS[chain][step]} (day {index // 10 + 1})"
    if index == 150:
        return f"Day 16: the user planned a {SEARCHED} with Jonas"
    mentioned = " and ".join(ENTITY_NAMES[e] for e in mentioned_entities(index))
    return f"Day {index // 10 + 1}, note {index}: the user talked about {TOPICS[index % len(TOPICS)]} with {mentioned}"


def mentioned_entities(index: int) -> list[int]:
    return sorted({index % 20, (index // 3) % 20} if index % 3 == 0 else {index % 20})


def build_big_memory(data_dir) -> tuple:
    """300 facts over 30 days, 20 entities with `mentions`, 4 supersession chains of 3, 10 hypotheses;
    written straight into a store (no language model, no embedder). Returns the graph and what was built."""
    graph = MemoryStore(data_dir, embedder=None).open("big")
    add = partial(graph.add_node, reason="built for the test", agent="test")
    built = {"nodes": [], "mentions": {name: [] for name in ENTITY_NAMES}, "chains": [[] for _ in CHAINS]}
    entity_ids: dict[int, str] = {}
    for index in range(300):
        moment = START + timedelta(days=index // 10, hours=index % 10)
        step = chain_step(index)
        weight = (0.03, 0.35, 0.9)[step[1]] if step else 0.3 + 0.7 * ((index * 37) % 100) / 100
        node = memory_node(fact_content(index), NodeType.FACT, moment, weight, DOMAINS[index % 4], f"m-f{index:03d}")
        add(node)
        built["nodes"].append(node)
        if step:
            chain = built["chains"][step[0]]
            if chain:
                graph.add_edge(MemoryEdge(source=node.id, target=chain[-1], relation="supersedes", weight=0.9))
            chain.append(node.id)
        for entity in mentioned_entities(index):
            if entity not in entity_ids:
                name = ENTITY_NAMES[entity]
                entity_node = memory_node(name, NodeType.ENTITY, moment, 0.6, "Personal", graph.entity_id(name))
                add(entity_node)
                built["nodes"].append(entity_node)
                entity_ids[entity] = entity_node.id
            graph.add_edge(MemoryEdge(source=node.id, target=entity_ids[entity], relation="mentions", weight=0.6))
            built["mentions"][ENTITY_NAMES[entity]].append(node.id)
        if index % 25 == 24:
            graph.add_edge(MemoryEdge(source=node.id, target=f"m-f{index - 1:03d}", relation="supports", weight=0.5))
    for number in range(10):
        moment = START + timedelta(days=3 * number + 2, hours=11)
        hypothesis = memory_node(
            f"Hypothesis {number}: the user may care about {TOPICS[number % len(TOPICS)]}",
            NodeType.HYPOTHESIS,
            moment,
            0.4,
            DOMAINS[number % 4],
        )
        add(hypothesis)
        built["nodes"].append(hypothesis)
        for source in (f"m-f{30 * number:03d}", f"m-f{30 * number + 1:03d}"):
            graph.add_edge(MemoryEdge(source=hypothesis.id, target=source, relation="derived_from", weight=0.5))
    return graph, built


def expected_count(built, types=None, start=None, end=None, entity=None) -> int:
    """What the page's filters should leave, computed from how the memory was built."""
    entity_id = next((n.id for n in built["nodes"] if n.type == NodeType.ENTITY and n.content == entity), None)
    members = set(built["mentions"].get(entity, []))

    def shown(node) -> bool:
        day = node.created_at.date().isoformat()
        if node.id == entity_id:
            return True
        return (
            (types is None or node.type.value in types)
            and (start is None or day >= start)
            and (end is None or day <= end)
            and (entity is None or node.id in members)
        )

    return sum(1 for n in built["nodes"] if shown(n))


@pytest.fixture(scope="module")
def big_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    graph, built = build_big_memory(folder / "data")
    page = folder / "memory.html"
    page.write_text(memory_html(graph), encoding="utf-8")
    return page, built


def tag_attributes(dom: str, element_id: str) -> dict[str, str]:
    tag = re.search(rf'<[a-z]+ [^>]*id="{element_id}"[^>]*>', dom).group(0)
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def open_page(tmp_path, page, query: str = "") -> str:
    """The DOM after the page's script ran, opened at `page.html#<query>`."""
    url = page.as_uri() + (f"#{query}" if query else "")
    return chromium(tmp_path, "--window-size=1400,900", "--virtual-time-budget=3000", "--dump-dom", url).stdout


def test_big_memory_page_is_drawn_without_overlaps(big_page, tmp_path):
    page, built = big_page
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    circles = re.findall(r'<g class="node" data-id="[^"]+"[^>]*><circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"', text)
    assert len(circles) == len(built["nodes"]) == 330
    xy = np.array([[float(x), float(y)] for x, y, _ in circles])
    radius = np.array([float(r) for _, _, r in circles])
    gap = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1)) - radius[:, None] - radius[None, :]
    np.fill_diagonal(gap, np.inf)
    assert gap.min() >= 0, "two circles overlap"
    shot = tmp_path / "big.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,900", page.as_uri())
    assert colourful_fraction(shot) > 0.02
    dom = open_page(tmp_path, page)
    drawing = tag_attributes(dom, "drawing")
    assert drawing["data-label-overlaps"] == "0"
    assert int(drawing["data-labels-shown"]) >= 10
    assert tag_attributes(dom, "count")["data-visible-count"] == "330" and dom.count('class="node"') == 330
    zoomed = tag_attributes(open_page(tmp_path, page, "zoom=3"), "drawing")
    assert zoomed["data-label-overlaps"] == "0" and int(zoomed["data-labels-shown"]) > int(drawing["data-labels-shown"])


@pytest.mark.parametrize(
    "query, filters",
    [
        ("type=fact", {"types": {"fact"}}),
        ("type=fact&entity=Alice", {"types": {"fact"}, "entity": "Alice"}),
        ("from=2024-03-11&to=2024-03-20", {"start": "2024-03-11", "end": "2024-03-20"}),
        (
            "type=fact,hypothesis&entity=Berlin&from=2024-03-06&to=2024-03-25",
            {"types": {"fact", "hypothesis"}, "entity": "Berlin", "start": "2024-03-06", "end": "2024-03-25"},
        ),
    ],
)
def test_big_memory_page_filters_by_the_url(big_page, tmp_path, query, filters):
    page, built = big_page
    expected = expected_count(built, **filters)
    assert 0 < expected < 330
    dom = open_page(tmp_path, page, query)
    assert tag_attributes(dom, "count")["data-visible-count"] == str(expected)
    assert dom.count('class="node"') == expected
    assert tag_attributes(dom, "drawing")["data-label-overlaps"] == "0"


def test_big_memory_page_search_finds_a_memory(big_page, tmp_path):
    page, _ = big_page
    dom = open_page(tmp_path, page, "q=" + quote(SEARCHED))
    count = tag_attributes(dom, "count")
    assert count["data-visible-count"] == "330" and count["data-match-count"] == "1"
    assert re.search(r'<g class="node" data-id="m-f150"[^>]*data-match=', dom)
    assert re.search(r'<text class="label shown" data-id="m-f150"', dom)
    assert tag_attributes(dom, "drawing")["data-label-overlaps"] == "0"


def test_big_memory_page_shows_a_supersession_chain(big_page, tmp_path):
    page, built = big_page
    chain = built["chains"][1]
    dom = open_page(tmp_path, page, chain[1])
    panel = dom[dom.index('id="panel"') :]
    assert "History" in panel and f'<p class="content">{CHAINS[1][1]} (day' in panel
    listed = re.search(r'Supersession chain</b> \(older → newer\)<ol class="chain">(.*?)</ol>', panel).group(1)
    places = [listed.index(f"{text} (day") for text in CHAINS[1]]
    assert places == sorted(places) and listed.count("<li") == 3 and 'class="current"' in listed
    for node_id in chain:
        assert re.search(rf'<g class="node" data-id="{node_id}"[^>]*data-chain=', dom)


def test_memory_content_cannot_break_out_of_the_page(tmp_path):
    graph = MemoryStore(tmp_path / "data", embedder=None).open("evil")
    evil = '</script><script>document.title="pwned"</script><img src=x onerror="document.body.dataset.pwned=1">'
    node = memory_node(evil, NodeType.FACT, START, node_id="m-evil")
    graph.add_node(node, reason="test </script>", agent="<b>test</b>")
    graph.add_node(memory_node("<!-- & -->", NodeType.ENTITY, START, node_id="e-evil"), reason="t", agent="t")
    graph.add_edge(MemoryEdge(source="m-evil", target="e-evil", relation="mentions", weight=0.5))
    text = memory_html(graph, title="<i>title</i>")
    assert evil not in text and "</script><script>" not in text and "<!-- &" not in text
    assert text.count("<script") == 2 and "<img" not in text and "<i>title" not in text
    page = tmp_path / "evil.html"
    page.write_text(text, encoding="utf-8")
    dom = open_page(tmp_path, page, "m-evil")
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "data-pwned" not in dom and "<img" not in dom
    assert "&lt;/script&gt;&lt;script&gt;" in dom[dom.index('id="panel"') :]
    assert tag_attributes(dom, "count")["data-visible-count"] == "2"
