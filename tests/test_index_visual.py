"""The visual retriever on tiny random CLIP and SigLIP models built here, over real crops of the corpus.

Random weights rank nothing meaningfully: these tests check loading by path, which quotes are encoded,
the incremental cache, and V-RAG's ensemble (dochaystack-vrag §3: similarities averaged over encoders).
"""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from interleaf.index.config import IndexConfig
from interleaf.index.corpus import QuoteCorpus
from interleaf.index.registry import get_retriever
from interleaf.index.retriever_config import BM25Config, VisualConfig
from interleaf.index.stage import corpus_for
from interleaf.index.visual import NOT_INDEXED
from tests.conftest import IngestedWarehouse, view_tables
from tests.tiny_models import build_clip
from warehouse import Warehouse


@pytest.fixture(scope="module")
def tiny_encoders(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("tiny-visual")
    return [str(build_clip(root / "clip", "clip", seed=0)), str(build_clip(root / "siglip", "siglip", seed=1))]


@pytest.fixture(scope="module")
def sample(corpus_warehouse: IngestedWarehouse) -> QuoteCorpus:
    """Twelve image quotes with crops and eight text quotes, from the ingested corpus."""
    spec = BM25Config(name="probe")
    quotes, documents, quote_texts = view_tables(corpus_warehouse.root, "quotes", "documents", "quote_texts")
    full = corpus_for(spec, IndexConfig(), quotes, documents, quote_texts)
    images = [i for i, m in enumerate(full.modalities) if m == "image" and full.img_paths[i]][:12]
    texts = [i for i, m in enumerate(full.modalities) if m == "text"][:8]
    assert len(images) == 12
    return full.subset(sorted(images + texts))


def test_visual_ensemble_encodes_crops_caches_and_averages(
    tiny_encoders: list[str], sample: QuoteCorpus, corpus_warehouse: IngestedWarehouse
) -> None:
    root = str(Warehouse(corpus_warehouse.root).root)
    retriever = get_retriever(VisualConfig(name="vis", models=tiny_encoders, batch_size=4))
    rows, encoded = retriever.encode(sample, None, root)
    image_pos = [i for i, m in enumerate(sample.modalities) if m == "image"]
    assert rows.num_rows == len(image_pos) == encoded
    assert set(rows.column("dim").to_pylist()) == {16 + 32}  # CLIP projection 16, SigLIP width 32
    vectors = np.asarray(rows.column("vector").to_pylist(), dtype=np.float32)
    assert len({v.tobytes() for v in vectors}) == len(vectors)  # different crops, different vectors

    again, encoded = retriever.encode(sample, rows, root)  # incremental: every key is cached
    assert encoded == 0 and again.column("vector").to_pylist() == rows.column("vector").to_pylist()

    retriever.load(sample, rows)
    queries = ["revenue chart by year", "table of model accuracy"]
    scores = retriever.scores(queries)
    assert scores.shape == (2, len(sample))
    text_pos = [i for i in range(len(sample)) if i not in image_pos]
    assert np.all(scores[:, text_pos] == NOT_INDEXED)  # a visual retriever has nothing to say on text

    # Sim_avg: the mean of each encoder's own cosine similarities, not one cosine over concatenations
    by_quote = dict(zip(rows.column("quote_id").to_pylist(), vectors, strict=True))
    image_vectors = np.stack([by_quote[sample.quote_ids[i]] for i in image_pos])
    clip, siglip = retriever.encoders  # type: ignore[attr-defined]
    sim_clip = clip.encode_text(queries) @ image_vectors[:, :16].T
    sim_siglip = siglip.encode_text(queries) @ image_vectors[:, 16:].T
    expected = (sim_clip + sim_siglip) / 2
    assert np.allclose(scores[:, image_pos], expected, atol=1e-5)
    assert np.all(np.abs(scores[:, image_pos]) <= 1.0 + 1e-5)


def test_visual_retriever_config_takes_models_and_nothing_textual() -> None:
    def visual(**options: object) -> None:
        IndexConfig.model_validate({"retrievers": [{"name": "vis", "kind": "visual", **options}]})

    with pytest.raises(ValidationError, match="models"):
        visual()
    with pytest.raises(ValidationError, match="at least 1 item"):
        visual(models=[])
    for textual in ({"model": "clip"}, {"fields": {"caption": False}}, {"k1": 1.5}, {"backend": "onnx"}):
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            visual(models=["clip"], **textual)


def test_changing_the_encoder_set_changes_keys_and_fingerprint(tiny_encoders: list[str], sample: QuoteCorpus) -> None:
    ensemble = get_retriever(VisualConfig(name="vis", models=tiny_encoders))
    single = get_retriever(VisualConfig(name="vis", models=[tiny_encoders[1]], device="cpu", batch_size=8))
    assert [e.path for e in single.encoders] == [tiny_encoders[1]]  # type: ignore[attr-defined]
    image_pos = single.applies_to(sample)
    assert not {ensemble.keys(sample)[i] for i in image_pos} & {single.keys(sample)[i] for i in image_pos}
    assert ensemble.fingerprint_config() != single.fingerprint_config()
    # where and in what batches it runs changes no vector: the fingerprint is the models'
    assert single.fingerprint_config() == {"kind": "visual", "models": [tiny_encoders[1]]}
