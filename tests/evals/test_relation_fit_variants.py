"""The relation fit's candidate inputs: MiniLM's by default (what ships), other encoder sets on request."""

import pytest

from evals.fit.relation_fit import variants_for


def test_the_relation_fit_compares_the_encoder_sets_it_is_asked_for():
    default = variants_for()
    assert list(default) == [
        "encoder",
        "encoder+cues",
        "encoder+statement+cues",
        "encoder+statement+cues+bilinear16",
        "encoder+statement+cues+bilinear24",
        "encoder+statement+cues+bilinear32",
    ]
    assert {variant.encoders for variant in default.values()} == {("embedder",)}
    wider = variants_for(("minilm", "use", "minilm+use"))
    assert wider["use: encoder+statement+cues"].encoders == ("multilingual",)
    joint = wider["minilm+use: encoder+statement+cues+bilinear32"]
    assert (joint.encoders, joint.rank, joint.blocks[-1]) == (("embedder", "multilingual"), 32, "bilinear")
    with pytest.raises(ValueError, match="unknown encoder set"):
        variants_for(("glove",))
