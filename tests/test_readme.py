"""The README is a guide that stays true: its Python examples run, and what it names exists.

The ```python blocks run in order in one namespace (a later example continues an earlier one),
in a fresh working directory with `PCM_DATA_DIR` in a temporary folder, offline. Each example
asserts what it shows; this test also checks what they print.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 350
#: a path in the repository as the README names it: `pcm/world/retrieval.py`, `evals/fit/`, `pcm/world/records*`
PATH = re.compile(r"(?<![\w./-])((?:pcm|evals|tests|docs|examples|training)/[\w./*-]*)")
#: a bare file name after a folder on the same line: "`pcm/routing/`: `routers.py`"
BARE_FILE = re.compile(r"`([\w-]+\.py)`")
DOTTED = re.compile(r"`(pcm(?:\.\w+)+)(?:\(\))?`")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", readme(), re.DOTALL | re.MULTILINE)


def section(title: str) -> str:
    return readme().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_is_at_most_350_lines():
    lines = readme().count("\n") + (not readme().endswith("\n"))
    assert lines <= MAX_LINES, f"README.md has {lines} lines; a guide has at most {MAX_LINES}"


def test_quick_start_commands_come_first():
    commands = re.findall(r"^(make \S+|pcm \S+)", readme(), re.MULTILINE)
    assert commands[:2] == ["make demo", "make test"]


def test_readme_has_the_where_to_change_what_table():
    table = [line for line in section("Where to change what").splitlines() if line.startswith("|")]
    assert len(table) >= 10, "the table names where each part of PCM lives"
    text = "\n".join(table)
    for place in (
        "pcm/routing/",
        "pcm/perception/surprise.py",
        "pcm/cues.py",
        "pcm/validation.py",
        "pcm/world/",
        "pcm/world/retrieval.py",
        "pcm/evolution/",
        "pcm/prompts.py",
        "pcm/formulas.py",
        "pcm/graph.py",
        "pcm/config.py",
        "evals/fit/",
        "evals/bench/",
        "pcm.routing.decide",
    ):
        assert place in text, place


def named_paths(text: str) -> tuple[set[str], list[str]]:
    """The repository paths a document names, and those of them that do not exist."""
    named, missing = set(), []
    for line in text.splitlines():
        for match in PATH.finditer(line):
            path = match.group(1).rstrip(".")
            named.add(path)
            if not (sorted(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
                missing.append(path)
            folder = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
            rest = line[match.end() :]
            next_path = PATH.search(rest)
            for bare in BARE_FILE.findall(rest[: next_path.start()] if next_path else rest):
                named.add(folder + bare)
                if not (ROOT / folder / bare).exists():
                    missing.append(folder + bare)
    for target in re.findall(r"\]\(((?:\.\./)?(?:docs|examples|pcm|evals|README)[^)#]*)", text):
        if not ((ROOT / target).exists() or (ROOT / "docs" / target).exists()):
            missing.append(target)
    return named, sorted(set(missing))


@pytest.mark.parametrize("document", ["README.md", "docs/design.md"])
def test_every_path_a_document_names_exists(document):
    named, missing = named_paths((ROOT / document).read_text(encoding="utf-8"))
    assert len(named) >= 20
    assert not missing, f"{document} names paths that do not exist: {missing}"


@pytest.mark.parametrize("document", ["README.md", "docs/design.md"])
def test_every_dotted_name_a_document_names_imports(document):
    missing = []
    for dotted in set(DOTTED.findall((ROOT / document).read_text(encoding="utf-8"))):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                value = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attribute in parts[cut:]:
                    value = getattr(value, attribute)
            except AttributeError:
                missing.append(dotted)
            break
        else:
            missing.append(dotted)
    assert not missing, f"{document} names what PCM does not define: {missing}"


def test_every_make_target_the_readme_names_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.MULTILINE))
    named = {
        name
        for name, wildcard in re.findall(r"(?:`|^)make ([\w-]+)(\*?)(?:`| +#)", readme(), re.MULTILINE)
        if not wildcard
    }
    assert {"demo", "test"} <= named
    assert named <= targets, f"README.md names make targets the Makefile lacks: {sorted(named - targets)}"


def test_settings_rule_matches_the_code():
    from pcm.config import CALLER_SETTINGS, setting_groups

    text = section("Settings")
    assert ", ".join(setting_groups()) in text
    for name in CALLER_SETTINGS:
        assert f"`{name}`" in text
    for setting in re.findall(r"^\| \w+ \| (.+?) \|", text, re.MULTILINE):
        for name in re.findall(r"`(\w+)`", setting):
            assert any(name in group for group in setting_groups().values()), name


def test_studio_section_keeps_what_the_security_issue_requires():
    text = " ".join(section("LangGraph Studio").split())
    for statement in (
        "`PCM_DATA_DIR`, taken from the shell that starts it",
        "`make studio` uses `./data/studio`",
        "`Authorization: Bearer <token>`",
        "`PCM_AUTH_TOKENS`",
        "`PCM_STUDIO_USER` and the request comes from loopback",
        "answers every token-less request with 401",
        '`"disable_studio_auth": true`',
        "anyone who can reach the server can read and write any user's memory",
    ):
        assert statement in text, statement


@pytest.fixture
def fresh_place(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("PCM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PCM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_python_examples_run_in_order(fresh_place, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 4, "Python API, subgraph, tools and settings each have an example"
    module = types.ModuleType("readme_examples")  # a real module: LangGraph resolves the state's annotations in it
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    printed = []
    for number, block in enumerate(blocks, 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        printed.append(out.getvalue())
    python_api, subgraph, tools, settings = (printed[number] for number in range(4))
    assert python_api.strip() == "high correction"
    assert subgraph.startswith("low ")
    assert "AI researcher" in tools
    assert settings.startswith("['perception', 'world', 'evolution', 'llm', 'storage', 'serving']")
    assert "the run context may not set data_dir" in settings
    assert (fresh_place / "data" / "memory.sqlite").is_file()
    assert not (fresh_place / "elsewhere").exists(), "a refused run context changed nothing"
