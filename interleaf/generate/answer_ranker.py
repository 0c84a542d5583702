"""The offline composer's fitted ranker: a logistic regression over answer_features.FEATURES that
gives each candidate the probability that it holds the answer, and the one threshold below which
the best candidate is no answer ("The documents do not say ...").

The weights are data, not code: `fitted/answer_ranker.json`, written by
`benchmarks/fit_answer_ranker.py` (scikit-learn's LogisticRegression on standardised features),
which records the sets it was fitted on, how the threshold was chosen, whether a part naming what
its documents never print is refused outright, and the held-out figures of its cross-validation by
document. Its fingerprint goes into the generate stage's, so refitting
moves every offline answer, as it should.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from interleaf.errors import ConfigError
from interleaf.generate.answer_features import FEATURES

FITTED = Path(__file__).resolve().parent / "fitted" / "answer_ranker.json"


@dataclass(frozen=True)
class AnswerRanker:
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float  # the best candidate's probability under this: abstain
    digest: str  # of the file: the generate stage's version
    # a part naming something the documents asked about never print is refused before ranking; the
    # fit keeps this gate when its held-out folds handle more questions right with it
    refuse_never_printed: bool = False

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        if matrix.shape[0] == 0:
            return np.zeros(0)
        z = ((matrix - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))


def ranker_from(payload: dict, digest: str = "") -> AnswerRanker:
    """An AnswerRanker from the fitted file's content; refused when its features are not FEATURES
    (a feature added or renamed since the fit: refit)."""
    features = tuple(payload["features"])
    if features != FEATURES:
        missing = sorted(set(FEATURES) - set(features)) or sorted(set(features) - set(FEATURES))
        raise ConfigError(
            f"{FITTED}: fitted on other features than the composer computes ({', '.join(missing) or 'their order'}): "
            "run `python benchmarks/fit_answer_ranker.py` to refit"
        )
    return AnswerRanker(
        features,
        np.asarray(payload["mean"], dtype=np.float64),
        np.asarray(payload["scale"], dtype=np.float64),
        np.asarray(payload["coef"], dtype=np.float64),
        float(payload["intercept"]),
        float(payload["threshold"]),
        digest,
        bool(payload["refuse_never_printed"]),
    )


@functools.cache
def fitted_ranker(path: Path = FITTED) -> AnswerRanker:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: the offline composer's fitted ranker cannot be read: {exc}") from exc
    return ranker_from(json.loads(raw), hashlib.sha256(raw).hexdigest()[:16])
