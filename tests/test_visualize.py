"""The pictures a user sees, rendered as they would see them (headless Chromium, matplotlib)."""

import shutil
import subprocess

import pytest
from PIL import Image
from typer.testing import CliRunner

from pcm.cli import app

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
    assert dom.count('class="node"') == len(json.loads(exported.stdout)["graph"]["nodes"])
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
