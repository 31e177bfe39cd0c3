"""The fitted routers shipped in a calibration file, read with numpy and loaded once per file version."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from pcm.config import load_calibration
from pcm.formulas import LEVELS, softmax


class RouterModel:
    """Multinomial logistic regression over the surprise signals, stored as plain JSON numbers."""

    def __init__(self, spec: dict):
        self.features = list(spec["features"])
        self.classes = list(spec["classes"])
        self.mean = np.asarray(spec["mean"], dtype=float)
        self.scale = np.asarray(spec["scale"], dtype=float)
        self.coef = np.asarray(spec["coef"], dtype=float)
        self.intercept = np.asarray(spec["intercept"], dtype=float)

    def probabilities(self, signals: dict[str, float], prior: list[float] | None = None) -> dict[str, float]:
        """P(level | signals). The model is fitted class-balanced (a uniform prior); `prior`
        (low, medium, high) re-weights it for the share of each level expected in use
        (Bayes' rule under label shift: p'(c|x) ∝ p(c|x) · π'(c) / π(c), π uniform)."""
        x = (np.asarray([signals[f] for f in self.features]) - self.mean) / self.scale
        fitted = np.asarray(softmax((self.coef @ x + self.intercept).tolist()))
        if prior is not None:
            shifted = fitted * np.asarray([prior[LEVELS.index(c)] for c in self.classes])
            fitted = shifted / shifted.sum()
        return dict(zip(self.classes, fitted.tolist()))


def shipped_routers(path: Path) -> tuple[RouterModel | None, RouterModel | None]:
    """(cheap router, full router) of the calibration file at `path`, None where it has none;
    built once per version of the file."""
    return _routers(str(path), path.stat().st_mtime if path.exists() else None)


@functools.lru_cache(maxsize=16)
def _routers(path: str, version: float | None) -> tuple[RouterModel | None, RouterModel | None]:
    calibration = load_calibration(Path(path))
    return tuple(
        RouterModel(calibration[name]) if calibration.get(name) else None for name in ("router_cheap", "router")
    )
