"""Static settings: one dataclass passed to the graph as its `context_schema`.

Precedence, lowest first: the dataclass defaults (the spec's values), a YAML file (`--config FILE`,
`$PCM_CONFIG`, or `./pcm.yaml`), environment variables `PCM_<FIELD>` (upper case), then explicit keyword
overrides. API keys are never read from here: only from the environment or `.env` (see `pcm.llm`).

Inside a graph run, `resolve_context` applies the same precedence to the runtime context: a context from
`load_context` is complete and used as it is; one the LangGraph server builds from a request (Studio sends
every field, most at their defaults) only overrides the settings of the environment in the fields whose
values it changes, and only in `CALLER_SETTINGS`: paths, URLs, models, limits and the algorithm's
parameters belong to the deployment, and a run context that changes one of them is refused.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_DOMAINS = ("Coding", "Academic", "Personal", "Casual", "Professional")
SCORERS = ("nll", "nll_delta", "hybrid")
ROUTERS = ("pair", "calibrated", "threshold", "off")
GRAPH_STORES = ("sqlite", "postgres")
VECTOR_STORES = ("chroma", "chroma-server")
CHECKPOINTERS = ("sqlite", "postgres")
#: the settings that name one of a few choices
CHOICES = {
    "scorer": SCORERS,
    "router": ROUTERS,
    "graph_store": GRAPH_STORES,
    "vector_store": VECTOR_STORES,
    "checkpointer": CHECKPOINTERS,
    "embedding_runtime": ("onnx", "torch"),
}
PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_CALIBRATION = PACKAGE_DIR / "calibration" / "default.json"
DEFAULT_RELATION_MODEL = PACKAGE_DIR / "calibration" / "relation.json"

#: Band edges per scorer, on that scorer's scale, before any calibration file: nll from the README's config
#: (1.0 / 3.0 nats per token), hybrid from the processing-flow table (0.3 / 0.7); nll_delta is symmetric
#: around "context neither helps nor hurts".
SPEC_THRESHOLDS: dict[str, tuple[float, float]] = {
    "nll": (1.0, 3.0),
    "nll_delta": (-0.25, 0.25),
    "hybrid": (0.3, 0.7),
}


#: the first setting of each group, in the order `PCMContext` declares them (`setting_groups`)
GROUP_STARTS = {
    "domains": "perception",
    "top_k": "world",
    "eta": "evolution",
    "llm_model": "llm",
    "data_dir": "storage",
    "max_input_chars": "serving",
}
#: what a caller may choose per run on a served graph: how many memories it gets back and whether an
#: LLM reply is written. Everything else (paths, URLs, models, limits, how memory evolves) is the
#: deployment's: a caller who could set `llm_base_url` would receive the deployment's LLM key.
CALLER_SETTINGS = frozenset({"top_k", "min_score", "expansion_limit", "llm_reply"})
MAX_TOP_K = 1000
#: the settings that are shares or weights in [0, 1]
SHARES = tuple(
    "eta surprise_lambda hybrid_alpha dormant_floor correction_weight intent_smoothing llm_intent_confidence "
    "context_weight speaker_weight lexical_weight time_weight day_weight entity_weight nearby_weight "
    "observation_weight request_weight answer_type_weight".split()
)


@dataclass(kw_only=True)
class PCMContext:
    """Settings of one PCM deployment (the spec's defaults unless overridden), grouped by layer
    (`SETTING_GROUPS`). Only `CALLER_SETTINGS` may differ per run on a server (`resolve_context`)."""

    # ---- perception (layer 1): working memory, intent, surprise and the router
    domains: list[str] = field(default_factory=lambda: list(DEFAULT_DOMAINS))
    token_budget: int = 2000
    eviction_size: int = 2
    intent_temperature: float = 0.05
    intent_smoothing: float = 0.5
    confidence_smoothing: bool = True
    agreement_smoothing: bool = True
    # ι₀: domain agreement up to this counts as none when the intent mask is weighed
    # (`pcm.formulas.agreement_beyond`; 0.2 closes Landis and Koch's "slight" band of κ)
    agreement_floor: float = 0.2
    scorer: str = "hybrid"
    router: str = "calibrated"
    theta_low: float | None = None
    theta_high: float | None = None
    surprise_lambda: float = 0.3
    hybrid_alpha: float = 0.6
    surprise_context_tokens: int = 96
    cascade_confidence: float = 0.6
    relation_top_k: int = 2  # the router reads verdict maxima; over 3 same-domain facts they inflate (long histories)
    uncued_correction_memories: int = 8  # from this many memories an uncued "high" is unsure (docs/design.md)
    life_states: bool = True  # a turn whose life state excludes a stored one is a correction (`pcm.life_states`)
    level_prior: list[float] = field(default_factory=lambda: [1.0, 1.0, 1.0])
    # n₀: each user's share of levels, from their stored facts, shrunk to `level_prior` by n₀ pseudo-turns (0: off)
    level_prior_turns: float = 30.0
    level_prior_iterations: int = 100  # EM steps of it (1: the mean re-weighted posterior; more: MAP; dev LoCoMo)
    surprise_model: str = ""
    surprise_model_file: str = ""
    # the converted bundled GGUF's folder (loads in ~1 s, not ~10 s); "": $XDG_CACHE_HOME or ~/.cache, /pcm/models
    model_cache: str = ""
    calibration_file: str = ""
    relation_model_file: str = ""

    # ---- world model (layer 2): retrieval and weights
    top_k: int = 10
    min_score: float = 0.005
    lexical_weight: float = 0.6
    context_turns: int = 2
    context_gap_minutes: float = 60.0
    context_weight: float = 0.5
    speaker_weight: float = 0.3
    # κ_t: a query that names a day or month (`pcm.world.dates`) raises the memories from then, sim' =
    # sim + κ_t·e^(−d/τ)·(1 − sim), d days outside it, τ = `time_tolerance_days` (dev LoCoMo; 0: off)
    time_weight: float = 0.5
    time_tolerance_days: float = 7.0
    # β: a memory said on the day of a strong match rises, Score' = Score·(1 + β·s_day/s_max) (dev LoCoMo; 0: off)
    day_weight: float = 0.5
    # β_e: pull toward a stronger match naming the same entity (`shared_entity_score`); 0: off (adds nothing with stems)
    entity_weight: float = 0.0
    # β_n, n: a memory said up to n turns from a stronger match in its thread is pulled toward it by β_n/Δ
    # (`nearby_turn_score`: a reply, the next part of a story; dev LoCoMo; 0: off)
    nearby_weight: float = 0.25
    nearby_turns: int = 3
    # κ_a: asked for places or titles, memories naming one rise, sim + κ_a·(1 − sim) (`pcm.world.answer_types`; dev)
    answer_type_weight: float = 0.4
    answer_type_candidates: int = 10
    expansion_min_weight: float = 0.3
    expansion_limit: int = 3
    dormant_floor: float = 0.05
    # A stated fact starts at the same weight whichever branch stores it (an observation, or a correction's fact): what
    # the user says is as likely true either way; a correction acts on what it supersedes (docs/design.md).
    observation_weight: float = 0.8
    # A question or request to the assistant (`is_request`) claims nothing about the user, yet its question form
    # makes any question-shaped query find it: stored at the weight of the surest hypothesis (dev files only).
    request_weight: float = 0.5
    # π(n) = min(1, n / n_sat)^γ scales a stated fact's first weight by its n content words (`informativeness`; dev)
    informativeness_saturation: int = 30
    informativeness_exponent: float = 0.05
    embedding_model: str = ""
    embedding_runtime: str = "onnx"  # "onnx": the same model exported once to ONNX (3× faster a query); "torch"
    # the encoder compares texts across scripts (MiniLM does not: search ranks the other script's by P(d|I)·w)
    encoder_multilingual: bool = False
    # search compares a query with memories in the other script by `multilingual_model` (off: sim unknown)
    cross_script_multilingual: bool = False
    multilingual_model: str = ""  # USE v3 folder (sp.model, weights.npz) for the relation model; "": the package's

    # ---- evolution (layer 3)
    eta: float = 0.05
    beta: float = 0.3
    gamma: float = 0.02
    correction_weight: float = 0.8
    hypothesis_min_weight: float = 0.3
    hypothesis_max_weight: float = 0.5
    promotion_threshold: float = 0.7
    related_min_similarity: float = 0.2
    max_related: int = 3
    # A profiling turn whose verdict for a judged fact has P(contradiction) at least this and at least
    # P(consistent) records a `contests` link: search shows the newer statement right above that fact until
    # it is confirmed again. None (default since 2026-12-01): no contests; on the independent files they
    # cost more still-true facts their first place than they gave revisions
    contest_threshold: float | None = None
    # A maintenance turn the relation model judges to confirm a superseded memory with P(consistent) at least
    # this overturns the supersession: the memory gets back its weight from before the correction and search
    # no longer puts the successor above it (`pcm.world.supersession`; None: never overturned)
    reaffirm_threshold: float | None = 0.7

    # ---- LLM (optional; the key comes only from the environment: `pcm.llm.build_chat_model`)
    llm_model: str = ""
    llm_base_url: str = ""
    llm_timeout: float = 30.0
    llm_max_retries: int = 1
    # the most LLM time one turn may spend (every call gets what is left of it)
    llm_turn_deadline: float = 3.0
    llm_breaker_failures: int = 3
    llm_cooldown: float = 30.0
    llm_max_tokens: int = 0
    llm_intent_confidence: float = 0.5
    llm_topics: int = 2
    llm_fact_batch: int = 8
    llm_reply: bool = True

    # ---- storage
    data_dir: str = "./data"
    graph_store: str = "sqlite"
    vector_store: str = "chroma"
    checkpointer: str = "sqlite"
    postgres_url: str = ""
    chroma_url: str = ""
    open_users: int = 64
    lock_timeout: float = 60.0
    turn_timeout: float = 600.0

    # ---- serving: limits on what a caller may send
    max_input_chars: int = 20000
    # hours a turn's time may run ahead of this clock (one dated years ahead would decay every hypothesis at once)
    clock_skew_hours: float = 24.0

    def __post_init__(self) -> None:
        self._check_storage()
        self._check_perception_and_world()
        self._check_evolution_and_llm()

    def _check_storage(self) -> None:
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if "postgres" in (self.graph_store, self.checkpointer) and not self.postgres_url:
            raise ValueError("graph_store or checkpointer 'postgres' needs postgres_url")
        if self.vector_store == "chroma-server" and not self.chroma_url:
            raise ValueError("vector_store 'chroma-server' needs chroma_url")
        if self.open_users < 1 or self.lock_timeout <= 0 or self.turn_timeout <= 0:
            raise ValueError("open_users >= 1, lock_timeout > 0 and turn_timeout > 0 are required")
        if self.max_input_chars < 1 or self.clock_skew_hours < 0:
            raise ValueError("max_input_chars must be at least 1 and clock_skew_hours not negative")

    def _check_perception_and_world(self) -> None:
        if not self.domains:
            raise ValueError("domains must not be empty")
        if len(self.level_prior) != 3 or min(self.level_prior) <= 0:
            raise ValueError("level_prior needs three positive numbers (low, medium, high)")
        if self.level_prior_turns < 0 or self.uncued_correction_memories < 0 or self.level_prior_iterations < 1:
            raise ValueError("need level_prior_turns, uncued_correction_memories >= 0, level_prior_iterations >= 1")
        if self.token_budget < 16 or self.eviction_size < 1 or self.relation_top_k < 1:
            raise ValueError("token_budget >= 16, eviction_size >= 1 and relation_top_k >= 1 are required")
        if not 1 <= self.top_k <= MAX_TOP_K or not 0 <= self.expansion_limit <= MAX_TOP_K:
            raise ValueError(f"top_k must lie in [1, {MAX_TOP_K}] and expansion_limit in [0, {MAX_TOP_K}]")
        if min(self.context_turns, self.context_gap_minutes, self.nearby_turns, self.answer_type_candidates) < 0:
            raise ValueError("context_turns, context_gap_minutes, nearby_turns and answer_type_candidates must be >= 0")
        if self.time_tolerance_days <= 0:
            raise ValueError("time_tolerance_days must be positive")
        if self.informativeness_saturation < 1 or not 0.0 <= self.informativeness_exponent <= 1.0:
            raise ValueError("informativeness_saturation must be at least 1, informativeness_exponent in [0, 1]")
        if not 0.0 <= self.agreement_floor < 1.0:
            raise ValueError("agreement_floor must lie in [0, 1)")
        for name in SHARES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1]")

    def _check_evolution_and_llm(self) -> None:
        if self.beta < 0 or self.gamma < 0:
            raise ValueError("beta and gamma must not be negative")
        if self.contest_threshold is not None and not 0.0 < self.contest_threshold <= 1.0:
            raise ValueError("contest_threshold must lie in (0, 1], or be None for no contests")
        if self.reaffirm_threshold is not None and not 0.0 < self.reaffirm_threshold <= 1.0:
            raise ValueError("reaffirm_threshold must lie in (0, 1], or be None: supersessions are never overturned")
        if self.llm_timeout <= 0 or self.llm_turn_deadline <= 0 or self.llm_cooldown < 0:
            raise ValueError("llm_timeout and llm_turn_deadline must be positive, llm_cooldown not negative")
        if (
            min(self.llm_max_retries, self.llm_max_tokens, self.llm_topics) < 0
            or self.llm_breaker_failures < 1
            or self.llm_fact_batch < 1
        ):
            raise ValueError(
                "llm_max_retries, llm_max_tokens and llm_topics must not be negative; "
                "llm_breaker_failures and llm_fact_batch must be at least 1"
            )

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_model)

    @property
    def calibration_path(self) -> Path:
        return Path(self.calibration_file) if self.calibration_file else DEFAULT_CALIBRATION

    @property
    def relation_model_path(self) -> Path:
        return Path(self.relation_model_file) if self.relation_model_file else DEFAULT_RELATION_MODEL

    def thresholds(self) -> tuple[float, float]:
        """θ_low, θ_high of the active scorer: explicit settings, else calibration, else spec."""
        low, high = (
            load_calibration(self.calibration_path).get("thresholds", {}).get(self.scorer, SPEC_THRESHOLDS[self.scorer])
        )
        low = self.theta_low if self.theta_low is not None else low
        high = self.theta_high if self.theta_high is not None else high
        if low > high:
            raise ValueError(f"theta_low ({low}) must not exceed theta_high ({high})")
        return float(low), float(high)

    def replace(self, **changes: Any) -> "PCMContext":
        replaced = dataclasses.replace(self, **changes)
        replaced._complete = getattr(self, "_complete", False)
        return replaced


def setting_groups() -> dict[str, list[str]]:
    """The settings by layer (perception, world, evolution, llm, storage, serving), in declaration order."""
    groups: dict[str, list[str]] = {}
    group = None
    for setting in dataclasses.fields(PCMContext):
        group = GROUP_STARTS.get(setting.name, group)
        groups.setdefault(group, []).append(setting.name)
    return groups


_CALIBRATION_CACHE: dict[tuple[str, float], dict] = {}


def load_calibration(path: Path) -> dict:
    """Read a calibration file (thresholds per scorer, optional router model); {} if absent."""
    if not path.exists():
        return {}
    key = (str(path), path.stat().st_mtime)
    if key not in _CALIBRATION_CACHE:
        _CALIBRATION_CACHE[key] = json.loads(path.read_text(encoding="utf-8"))
    return _CALIBRATION_CACHE[key]


def _coerce(value: str, annotation: Any) -> Any:
    """Turn an environment string into the field's type."""
    text = str(annotation)
    if annotation is bool:
        if value.strip().lower() not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise ValueError(f"expected true or false, got {value!r}")
        return value.strip().lower() in ("1", "true", "yes", "on")
    if "list" in text:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        return [float(part) for part in parts] if "float" in text else parts
    if "float" in text:
        return None if value.lower() in ("", "none") and "None" in text else float(value)
    if "int" in text:
        return int(value)
    return value


def load_context(config_file: str | os.PathLike | None = None, **overrides: Any) -> PCMContext:
    """Build a PCMContext from defaults, YAML, `PCM_*` environment variables and overrides."""
    values: dict[str, Any] = {}
    path = config_file or os.environ.get("PCM_CONFIG") or ("pcm.yaml" if Path("pcm.yaml").exists() else None)
    names = {f.name: f for f in dataclasses.fields(PCMContext)}
    hints = typing.get_type_hints(PCMContext)
    if path:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"config file not found: {path}")
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"config file {path} must hold a mapping of settings")
        unknown = sorted(set(loaded) - set(names))
        if unknown:
            raise ValueError(f"unknown settings in {path}: {', '.join(unknown)}")
        values.update(loaded)
    for name in names:
        env = os.environ.get(f"PCM_{name.upper()}")
        if env is not None:
            values[name] = _coerce(env, hints[name])
    values.update({k: v for k, v in overrides.items() if v is not None})
    ctx = PCMContext(**values)
    ctx._complete = True
    return ctx


_DEFAULTS: PCMContext | None = None


def resolve_context(given: PCMContext | dict | None, trusted: bool = False) -> PCMContext:
    """The settings a graph run uses: `load_context()` (environment, `langgraph.json`'s `env`,
    YAML), with the fields that `given` (the runtime context) sets to a non-default value.

    A context made by `load_context` (the API, the CLI) is complete and used as given. The
    LangGraph server builds the context from the request (`PCMContext(**context)`, all
    defaults when the client sends none), so only the fields it changes can override the
    deployment's settings, and only those in `CALLER_SETTINGS`: any other changed field is
    refused (ValueError naming it), since it came from a caller. `trusted` (the application's
    own code, e.g. `PCM(PCMContext(data_dir=...))`) may change every field.
    """
    global _DEFAULTS
    if isinstance(given, dict):
        given = PCMContext(**given)
    if given is not None and getattr(given, "_complete", False):
        return given
    base = load_context()
    if given is None:
        return base
    _DEFAULTS = _DEFAULTS or PCMContext()
    changed = {
        f.name: getattr(given, f.name)
        for f in dataclasses.fields(PCMContext)
        if getattr(given, f.name) != getattr(_DEFAULTS, f.name)
    }
    refused = sorted(set(changed) - CALLER_SETTINGS)
    if refused and not trusted:
        raise ValueError(
            f"the run context may not set {', '.join(refused)}: those are the deployment's settings "
            "(its PCM_* environment or pcm.yaml). A run may set only "
            f"{', '.join(sorted(CALLER_SETTINGS))}."
        )
    return base.replace(**changed) if changed else base
