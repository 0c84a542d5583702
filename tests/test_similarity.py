"""The offline composer's question-candidate similarity (generate/similarity.py) on the shipped
MiniLM: a text's vector is encoded once per process and kept, and a kept vector gives the
similarity a fresh encode gives."""

from __future__ import annotations

import numpy as np
import pytest

from interleaf.generate import similarity

QUESTION = "How many kettles did the harbour master inspect in 2021?"
TEXTS = [
    "The harbour master inspected 14 kettles in 2021.",
    "Kettles are descaled every spring.",
    "The Okapi ferry sails twice a day.",
]


def _encoded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The batches the encoder is given, recorded."""
    calls: list[list[str]] = []
    encoder = similarity._encoder()
    real = encoder.encode

    def recording(texts: list[str], *args: object, **kwargs: object) -> np.ndarray:
        calls.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(encoder, "encode", recording)
    return calls


def test_each_text_is_encoded_once_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(similarity, "_vectors", type(similarity._vectors)())
    calls = _encoded(monkeypatch)
    first = similarity.similarities(QUESTION, TEXTS, np.array([3.0, 2.0, 1.0]))
    again = similarity.similarities(QUESTION, [*TEXTS, "A new line about kettles."], np.array([3.0, 2.0, 1.0, 0.5]))
    assert calls == [[QUESTION, *TEXTS], ["A new line about kettles."]]
    assert np.allclose(again[:3], first)
    assert int(np.argmax(first)) == 0  # the sentence that answers is the closest


def test_a_kept_vector_gives_what_a_fresh_encode_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(similarity, "_vectors", type(similarity._vectors)())
    kept = similarity.similarities(QUESTION, TEXTS, np.array([3.0, 2.0, 1.0]))
    vectors = np.asarray(similarity._encoder().encode([QUESTION, *TEXTS]), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(kept, vectors[1:] @ vectors[0], atol=1e-6)


def test_the_least_recently_used_vectors_leave_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(similarity, "_vectors", type(similarity._vectors)())
    monkeypatch.setattr(similarity, "_KEPT", 3)
    similarity.similarities(QUESTION, TEXTS[:2], np.array([2.0, 1.0]))
    similarity.similarities(QUESTION, TEXTS[2:], np.array([1.0]))
    assert list(similarity._vectors) == [TEXTS[1], QUESTION, TEXTS[2]]
