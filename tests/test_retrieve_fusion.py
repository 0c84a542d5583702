"""Fusion, quotas and the rerankers (the cross-encoders on a tiny random model built here)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from interleaf.retrieve.fusion import Hit, apply_quota, number_share, numbers_lift, page_fusion, pages_take_turns, rrf
from interleaf.retrieve.lexical import LexicalReranker
from tests.conftest import IngestedWarehouse, view_tables
from tests.tiny_models import build_cross_encoder


def test_rrf_max_keeps_a_top_hit_of_one_clause_above_middling_ones() -> None:
    hits = [Hit(0, "bm25", "top", 1, 9.0)] + [Hit(c, "bm25", "mid", 5, 1.0) for c in range(4)]
    assert rrf(hits, {}, {}, 20, "max")[0][0] == "top"
    assert rrf(hits, {}, {}, 20, "sum")[0][0] == "mid"


def test_rrf_weights_retrievers() -> None:
    hits = [Hit(0, "a", "x", 1, 1.0), Hit(0, "b", "y", 1, 1.0)]
    assert rrf(hits, {"a": 0.5, "b": 1.0}, {}, 20)[0][0] == "y"


def test_page_fusion_lifts_the_other_quotes_of_a_page_with_several_strong_hits() -> None:
    names = ["table", "lone", "para", "caption", "near"]
    ranking = [(q, 1 / (10 + rank)) for rank, q in enumerate(names, start=1)]  # an RRF ranking, k = 10
    page_of = {"table": ("d", 9), "para": ("d", 9), "near": ("d", 9), "lone": ("d", 2), "caption": ("d", 5)}
    fused = [q for q, _ in page_fusion(ranking, page_of, k=10, weight=0.5)]
    assert fused.index("near") < fused.index("caption")  # page 9 holds three hits, page 5 one
    assert fused[:2] == ["table", "lone"]  # a page prior re-orders neighbours; it does not bury a top hit
    assert page_fusion(ranking, page_of, k=10, weight=0.0) == ranking


def test_pages_take_turns_in_the_head_and_keep_its_quotes() -> None:
    names = ["table", "para", "lone", "near", "caption", "tail"]
    ranking = [(q, 1 / (10 + rank)) for rank, q in enumerate(names, start=1)]
    page_of = {"table": 9, "para": 9, "near": 9, "lone": 2, "caption": 5, "tail": 9}
    turned = pages_take_turns(ranking, page_of, head=5)
    # each page's first quote, in rank order, then page 9's second and third; past the head, as it was
    assert [q for q, _ in turned] == ["table", "lone", "caption", "para", "near", "tail"]
    assert set(turned[:5]) == set(ranking[:5])  # the head's quotes, scores kept: only their order moves
    assert pages_take_turns(ranking, page_of, head=0) == ranking


def test_number_share_counts_the_tokens_that_are_numbers() -> None:
    assert number_share("Goodwill 1,383 1,384 (34) $6.31 12%") == 5 / 6
    assert number_share("We test goodwill annually in the fourth quarter") == 0.0
    assert number_share("") == 0.0


def test_numbers_lift_raises_a_table_of_figures_in_the_head_only() -> None:
    names = ["para", "note", "figures", "policy", "past"]
    ranking = [(q, 1 / (10 + rank)) for rank, q in enumerate(names, start=1)]
    share = {"para": 0.0, "note": 0.05, "figures": 0.6, "policy": 0.1, "past": 0.9}
    lifted = numbers_lift(ranking, share, head=4, k=10, weight=1.0)
    # the table of figures rises from third to first; "past", past the head, stays last whatever it holds
    assert [q for q, _ in lifted] == ["figures", "para", "note", "policy", "past"]
    assert dict(lifted) == dict(ranking)  # only the order moves: each quote keeps its score
    # a small weight re-orders near-ties only: the top hit keeps its place
    assert numbers_lift(ranking, share, head=4, k=10, weight=0.05)[0][0] == "para"
    assert numbers_lift(ranking, share, head=4, k=10, weight=0.0) == ranking
    # equal shares are lifted alike: a head of paragraphs holding no number keeps its order
    assert [q for q, _ in numbers_lift(ranking, dict.fromkeys(names, 0.0), head=4, k=10, weight=1.0)] == names


def test_quota_caps_each_modality_and_spills_when_one_runs_short() -> None:
    ranked = [(f"i{n}", 1.0 - n / 100) for n in range(10)] + [("t0", 0.5), ("t1", 0.4)]
    modality = {q: ("image" if q.startswith("i") else "text") for q, _ in ranked}
    ctx = apply_quota(ranked, modality, 5, (2, 3))
    assert [q for q, _ in ctx] == ["i0", "i1", "i2", "t0", "t1"]  # 2 images, 2 texts, 1 spilled image


def test_lexical_reranker_prefers_the_passage_with_the_cues() -> None:
    scores = LexicalReranker().score(
        "Which model scores the highest F1 in Table 2?",
        ["Table 2: entailment models. Qwen3-8B F1 53.7", "Table 20 lists other models", "unrelated text"],
    )
    assert scores[0] > scores[1] > scores[2]


# the dev half's Best Buy 10-K (mlb-D-289): the company's name is printed in many of its passages
_TEN_K = [
    "Merchandise inventories are recorded at the lower of cost or net realizable value. The weighted-average "
    "method is used to determine the cost of inventory which includes costs of in-bound freight.",
    "The Best Buy Foundation is working to build brighter futures for teens from disinvested communities.",
    "Unless the context otherwise requires, the use of the terms \u201cBest Buy,\u201d \u201cwe,\u201d \u201cus\u201d"
    " and \u201cour\u201d in these Notes to Consolidated Financial Statements refers to Best Buy Co., Inc.",
    "The Domestic segment is comprised of our operations in all states, districts and territories of the U.S. "
    "and our Best Buy Health business.",
    "Development of merchandise and service offerings, pricing and promotions, procurement and supply chain "
    "are centrally managed.",
    "We have operations in the U.S. and Canada.",
]


def test_a_cue_most_passages_hold_sets_them_apart_less_than_a_rare_one() -> None:
    question = "how does Best Buy record Merchandise inventories?"
    reranker = LexicalReranker()
    common = reranker.score(question, _TEN_K)  # "Best Buy" in 3 of the 6
    rare = reranker.score(
        question,
        [p.replace("Best Buy", "the company") for p in _TEN_K[:2]]
        + _TEN_K[2:3]
        + [p.replace("Best Buy", "the company") for p in _TEN_K[3:]],
    )  # in 1 of the 6
    lift_common = common[2] - common[5]  # a passage holding the cue over one without it
    lift_rare = rare[2] - rare[5]
    assert 0 < lift_common < 0.6 * lift_rare  # without the idf the two lifts are equal
    assert common[0] > common[4]  # the inventories sentence is still told from the merchandise one


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny cross-encoder with weights drawn large enough (std 0.3; the default 0.02 leaves every
    logit near 0) that the order of a pair moves its score: in (q, p) the query's tokens take token
    type 0 and the first positions, in (p, q) the passage's do."""
    import torch
    from transformers import BertForSequenceClassification

    folder = build_cross_encoder(tmp_path_factory.mktemp("tiny-ce"))
    model = BertForSequenceClassification.from_pretrained(folder)
    torch.manual_seed(1)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "LayerNorm" not in name:
                weight.normal_(0.0, 0.3)
    model.save_pretrained(folder)
    return folder


def pair_logits(folder: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """The model's logit for each pair through the tokenizer's own pair encoding:
    [CLS] first [SEP] second [SEP], token types 0 then 1."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        return [float(model(**tokenizer(a, b, return_tensors="pt")).logits[0, 0]) for a, b in pairs]


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


QUERY = "which model has the best f1"
PASSAGES = ["table of f1 score gain", "figure", "text gain"]


@pytest.mark.parametrize(
    ("backend", "activation"),
    [
        ("cross-encoder", sigmoid),  # sentence-transformers' CrossEncoder: a sigmoid on a single logit
        ("flag", lambda x: x),  # FlagReranker.compute_score: the raw logit (normalize=False)
    ],
)
def test_cross_encoders_score_the_query_then_the_passage(
    tiny_cross_encoder: Path, backend: str, activation: Callable[[float], float]
) -> None:
    from interleaf.retrieve.config import RerankConfig
    from interleaf.retrieve.registry import get_reranker

    reranker = get_reranker(RerankConfig(backend=backend, model=str(tiny_cross_encoder), device="cpu"))
    assert reranker is not None and reranker.name == backend
    right = [activation(x) for x in pair_logits(tiny_cross_encoder, [(QUERY, p) for p in PASSAGES])]
    swapped = [activation(x) for x in pair_logits(tiny_cross_encoder, [(p, QUERY) for p in PASSAGES])]
    assert min(abs(a - b) for a, b in zip(right, swapped, strict=True)) > 0.02  # the order matters to this model
    assert reranker.score(QUERY, PASSAGES) == pytest.approx(right, abs=1e-4)
    assert reranker.score(QUERY, []) == []


def test_rerank_config_refuses_options_no_backend_reads() -> None:
    from interleaf.retrieve.config import RerankConfig

    with pytest.raises(ValidationError, match=r"needs retrieve\.rerank\.model"):
        RerankConfig(backend="flag")
    with pytest.raises(ValidationError, match=r"model: the lexical reranker runs no model"):
        RerankConfig(backend="lexical", model="BAAI/bge-reranker-v2-m3")
    with pytest.raises(ValidationError, match=r"device: the lexical reranker runs no model"):
        RerankConfig(backend="lexical", device="cuda")
    # `none` switches reranking off, as an ablation of a configured model reranker does
    assert RerankConfig(backend="none", model="BAAI/bge-reranker-v2-m3", device="cuda").backend == "none"


def test_a_variant_sets_an_item_of_a_list_of_the_configuration() -> None:
    """`index.retrievers.minilm.weight` (fit_retrieval's grids, eval variants; as --set names it):
    the dense retriever's weight changes, the BM25 one's stays, and the retrieve stage's fingerprint
    config moves with it."""
    from interleaf.config import Settings
    from interleaf.evaluate.ablation import Variant
    from interleaf.retrieve.stage import RetrieveStage

    settings = Settings()
    changed = Variant("dense 0.75", {"index.retrievers.minilm.weight": 0.75}).apply(settings)
    assert [r.weight for r in changed.index.retrievers] == [settings.index.retrievers[0].weight, 0.75]
    assert settings.index.retrievers[1].weight != 0.75

    def config(s: Settings) -> dict:
        return RetrieveStage(s.retrieve, s.index, s.expand).config()

    assert config(changed) != config(settings)


def test_two_stages_sharing_a_holder_each_search_with_their_own_weights(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    """Eval's variants and the server share one held index; the retrievers' weights are in no
    upstream fingerprint, so the held index is keyed by the index configuration too: a variant that
    weights the dense retriever otherwise gets an index with its weight, and the first stage, asked
    again, its own (on the code keyed by the upstream fingerprints alone, both got the first's)."""
    from interleaf.config import Settings
    from interleaf.evaluate.ablation import Variant
    from interleaf.retrieve.loaded_index import IndexHolder
    from interleaf.retrieve.stage import QUESTION_SIDE, RetrieveStage
    from interleaf.stage import StageInput

    settings = Settings()
    changed = Variant("dense 0.75", {"index.retrievers.minilm.weight": 0.75}).apply(settings)
    holder = IndexHolder()
    first = RetrieveStage(settings.retrieve, settings.index, settings.expand, indexes=holder)
    second = RetrieveStage(changed.retrieve, changed.index, changed.expand, indexes=holder)
    names = [n for n in first.inputs if n not in QUESTION_SIDE]
    tables = dict(zip(names, view_tables(corpus_warehouse.root, *names), strict=True))
    upstream = {name: "the same corpus" for name in first.upstream if name not in QUESTION_SIDE}
    # the snapshots these made-up upstreams store go to a folder of the test's own, not to the
    # session's warehouse, which other tests expect to hold the ingest's one snapshot
    given = StageInput(unit="qset", tables=tables, root=tmp_path, upstream=upstream)

    assert first.load_index(given).weights["minilm"] == settings.index.retrievers[1].weight != 0.75
    assert second.load_index(given).weights["minilm"] == 0.75
    assert first.load_index(given).weights["minilm"] == settings.index.retrievers[1].weight
    assert holder.loads == 3  # one index held at a time: each switch loads the other
