"""PCM as a node of a larger agent graph: the README's embedding example, executed as written."""

import re
from pathlib import Path

from langchain_core.messages import HumanMessage

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_embedding_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Embedding PCM in your agent", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_readme_example_runs_pcm_as_a_subgraph_of_an_agent(ctx, monkeypatch, capsys):
    monkeypatch.setenv("PCM_DATA_DIR", ctx.data_dir)
    namespace: dict = {}
    exec(compile(readme_embedding_example(), "README.md", "exec"), namespace)
    assert capsys.readouterr().out.startswith("low ")
    app, config = namespace["app"], namespace["config"]
    out = app.invoke(
        {"messages": [HumanMessage("Night shift again at the children's hospital.")], "user_id": "nina"}, config
    )
    assert out["surprisal"]["level"] in ("low", "medium", "high")
    assert any("nurse" in m["content"] for m in out["retrieved"])
    assert all({"weight", "score", "type"} <= set(m) for m in out["retrieved"])
    assert out["changes"] and all({"node_id", "old_weight", "new_weight", "reason"} <= set(c) for c in out["changes"])
    assert [m.content for m in out["messages"]][-1] == "Night shift again at the children's hospital."
    assert (Path(ctx.data_dir) / "memory.sqlite").is_file()
