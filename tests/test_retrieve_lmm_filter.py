"""V-RAG's LMM filter (dochaystack-vrag §4 LMM-filter module): both backends and the retrieve stage.

- transformers: a tiny random Qwen2.5-VL (tests/tiny_models.py) loaded by path; P(yes) is checked for
  range, determinism, batch independence (left padding), against the next-token logits `generate`
  sees, and the threshold.
- openai: a real HTTP server on loopback (tests/support/chat_server.py) answering per request.
- the stage: two real PDFs of the corpus parsed by the default parser, a BM25 index over their quotes,
  `retrieve()` with the openai filter saying "no" to one image quote.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from interleaf.errors import StageError
from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Clause
from interleaf.index.config import IndexConfig
from interleaf.index.registry import get_retriever
from interleaf.index.retriever_config import BM25Config
from interleaf.index.stage import corpus_for
from interleaf.prompts import load_prompt
from interleaf.retrieve.config import FilterOpenAIConfig, LMMFilterConfig, RetrieveConfig
from interleaf.retrieve.lexical import LexicalReranker
from interleaf.retrieve.loaded_index import LoadedIndex, load_index
from interleaf.retrieve.openai_filter import OpenAIImageFilter
from interleaf.retrieve.protocol import FilterRequest, ImageFilter
from interleaf.retrieve.registry import get_image_filter
from interleaf.retrieve.stage import Question, QuestionResult, retrieve
from interleaf.retrieve.transformers_filter import TransformersImageFilter
from interleaf.vlm.config import QwenVLConfig
from tests.support.chat_server import ChatServer, running
from tests.tiny_models import build_qwen2_5_vl

os.environ["HF_HUB_OFFLINE"] = "1"
VRAG = "Can this image provide answers to this question? Respond only with yes or no"
QUESTION = "What does the corrosion rate table report?"
SMALL = {"min_pixels": 28 * 28 * 4, "max_pixels": 28 * 28 * 32}  # a few image tokens per crop: fast on 2 cores


@pytest.fixture(scope="module")
def crops(corpus: Path) -> list[bytes]:
    """Three renders of a real page that become 6, 12 and 35 image tokens within SMALL's pixel
    budget, so a batch of them needs padding."""
    import pymupdf

    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        return [doc[0].get_pixmap(dpi=dpi).tobytes("png") for dpi in (12, 20, 5)]


def test_prompt_is_vrags_sentence_with_the_question() -> None:
    prompt = load_prompt("lmm_filter")
    assert prompt.variables == {"question"}
    text = prompt.render(question=QUESTION)
    assert VRAG in text and QUESTION in text and "<!--" not in text


# -- transformers --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen2_5_vl(tmp_path_factory.mktemp("tiny-qwen25vl-filter"), [load_prompt("lmm_filter").text])


def transformers_filter(model: Path, threshold: float = 0.5, batch_size: int = 3) -> TransformersImageFilter:
    config = LMMFilterConfig(
        enabled=True,
        backend="transformers",
        threshold=threshold,
        transformers=QwenVLConfig(model=str(model), batch_size=batch_size, **SMALL),
    )
    image_filter = get_image_filter(config)  # chosen by config alone, loaded by path
    assert isinstance(image_filter, TransformersImageFilter)
    return image_filter


def test_transformers_filter_reads_p_yes_in_batches(tiny_qwen: Path, crops: list[bytes]) -> None:
    image_filter = transformers_filter(tiny_qwen)
    assert image_filter.model == str(tiny_qwen) and image_filter.prompt_hash == load_prompt("lmm_filter").hash
    requests = [FilterRequest(f"q{i}", png) for i, png in enumerate(crops)]
    batched = image_filter.judge(QUESTION, requests)
    assert [v.quote_id for v in batched] == ["q0", "q1", "q2"]
    assert all(v.error is None and v.p_yes is not None and 0.0 <= v.p_yes <= 1.0 for v in batched), batched
    assert all(v.keep == (v.p_yes >= 0.5) for v in batched)  # type: ignore[operator]
    assert image_filter.judge(QUESTION, requests) == batched  # same inputs, same verdicts
    alone = [image_filter.judge(QUESTION, [r])[0] for r in requests]
    text = load_prompt("lmm_filter").render(question=QUESTION)
    lengths = image_filter.vl.inputs([image_filter.vl.messages(png, text) for png in crops])["attention_mask"].sum(1)
    assert len(set(lengths.tolist())) == 3  # the batch is padded
    # left padding: in a batch of 3 crops of different sizes, each row reads its own last position
    assert [v.p_yes for v in alone] == pytest.approx([v.p_yes for v in batched], abs=1e-4)
    assert len({round(v.p_yes or 0.0, 6) for v in batched}) == 3  # the image reaches the read-out

    # both spellings of each answer are read, as single tokens of the tokenizer
    processor, model = image_filter.vl.load()
    yes, no = image_filter.answer_ids()
    tokens = processor.tokenizer.convert_ids_to_tokens(yes + no)
    assert tokens == ["yes", "Yes", "no", "No"]
    # the read-out position is the one generation continues from: P(yes) from generate's first-step logits
    import torch

    inputs = image_filter.vl.inputs([image_filter.vl.messages(crops[1], text)])
    out = model.generate(**inputs, max_new_tokens=1, do_sample=False, output_logits=True, return_dict_in_generate=True)
    first = out.logits[0][0].float()
    expected = torch.softmax(first[yes + no], dim=0)[: len(yes)].sum().item()
    assert batched[1].p_yes == pytest.approx(expected, abs=1e-4)


def test_transformers_filter_keep_follows_the_threshold(tiny_qwen: Path, crops: list[bytes]) -> None:
    requests = [FilterRequest(f"q{i}", png) for i, png in enumerate(crops)]
    scores = sorted(v.p_yes or 0.0 for v in transformers_filter(tiny_qwen).judge(QUESTION, requests))
    middle = (scores[0] + scores[1]) / 2  # between the lowest and the others: one no, two yes
    verdicts = transformers_filter(tiny_qwen, threshold=middle, batch_size=2).judge(QUESTION, requests)
    assert sorted(v.keep for v in verdicts) == [False, True, True]
    assert all(v.keep == ((v.p_yes or 0.0) >= middle) for v in verdicts)


def test_transformers_filter_turns_a_bad_crop_into_an_error_verdict(tiny_qwen: Path, crops: list[bytes]) -> None:
    image_filter = transformers_filter(tiny_qwen, batch_size=2)  # the bad crop and a good one share a batch
    bad, good = image_filter.judge(QUESTION, [FilterRequest("bad", b"not a png"), FilterRequest("good", crops[0])])
    assert bad.keep is None and bad.p_yes is None and bad.error and bad.error.startswith("unreadable image")
    assert good.error is None and good.p_yes is not None


def test_transformers_filter_bug_fails_loudly_instead_of_keeping_everything(
    tiny_qwen: Path, crops: list[bytes]
) -> None:
    """With on_error: keep, a bug turned into error verdicts would silently keep every image."""
    image_filter = transformers_filter(tiny_qwen, batch_size=2)

    def broken(conversations: list) -> list[float]:
        raise KeyError("logits")

    image_filter.p_yes = broken  # type: ignore[method-assign]
    requests = [FilterRequest("q0", crops[0]), FilterRequest("q1", crops[1])]
    with pytest.raises(StageError, match=r"failed on q0, q1: KeyError"):
        image_filter.judge(QUESTION, requests)


# -- openai --------------------------------------------------------------------------------------


def check_filter_text(text: str) -> list[str]:
    return [] if VRAG in text and "Question: " in text else ["prompt"]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    srv = ChatServer("qwen-vl-test", "test-key", check_filter_text, reply=lambda _text, _png: "Yes")
    with running(srv):
        yield srv


def openai_config(server: ChatServer, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> LMMFilterConfig:
    monkeypatch.setenv("TEST_VLM_KEY", "test-key")
    openai = FilterOpenAIConfig(
        base_url=server.base_url,
        model="qwen-vl-test",
        api_key_env="TEST_VLM_KEY",
        **{"backoff_s": 0.01, "timeout_s": 5.0, **overrides},
    )
    return LMMFilterConfig(enabled=True, backend="openai", openai=openai)


def openai_filter(server: ChatServer, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> OpenAIImageFilter:
    image_filter = get_image_filter(openai_config(server, monkeypatch, **overrides))
    assert isinstance(image_filter, OpenAIImageFilter)
    return image_filter


def test_openai_filter_asks_vrags_question_and_parses_the_first_word(
    server: ChatServer, crops: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.script = ["say:Yes.", "say:no", "say:Maybe, it depends.", "say:**NO** - it is a map", "say:"]
    image_filter = openai_filter(server, monkeypatch, concurrency=1)  # one at a time: the script's order
    requests = [FilterRequest(f"q{i}", crops[i % 3]) for i in range(5)]
    verdicts = image_filter.judge(QUESTION, requests)
    assert server.errors == [] and len(server.requests) == 5
    body = server.requests[0]
    assert body["max_tokens"] == 4 and body["temperature"] == 0.0
    (text,) = [p["text"] for p in body["messages"][0]["content"] if p["type"] == "text"]
    assert VRAG in text and QUESTION in text
    assert server.images == [crops[i % 3] for i in range(5)]  # the crops themselves, as PNG data URLs
    assert [v.quote_id for v in verdicts] == [f"q{i}" for i in range(5)]
    assert [v.keep for v in verdicts] == [True, False, None, False, None]
    assert all(v.p_yes is None for v in verdicts)
    assert verdicts[2].error == "unparseable answer: 'Maybe, it depends.'"
    assert verdicts[4].error == "unparseable answer: ''"
    assert verdicts[0].error is None and verdicts[1].error is None


def test_openai_filter_retries_then_reports_the_failure(
    server: ChatServer, crops: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.script = ["500", "say:no"]
    (verdict,) = openai_filter(server, monkeypatch, retries=1).judge(QUESTION, [FilterRequest("q", crops[0])])
    assert verdict.keep is False and verdict.error is None and len(server.requests) == 2
    server.script = ["500", "500", "500"]
    (verdict,) = openai_filter(server, monkeypatch, retries=1).judge(QUESTION, [FilterRequest("q", crops[0])])
    assert verdict.keep is None and "HTTP 500" in (verdict.error or "") and "2 attempts" in (verdict.error or "")
    assert len(server.requests) == 4


# -- the retrieve stage --------------------------------------------------------------------------


@dataclass
class SmallIndex:
    index: LoadedIndex
    root: Path  # the warehouse-like folder holding the crops under their img_path


@pytest.fixture(scope="module")
def small_index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> SmallIndex:
    """Two real PDFs (5 image quotes with crops, 7 text quotes) parsed by the default parser, BM25 over them."""
    from interleaf.parse.config import ParseConfig
    from interleaf.parse.registry import get_parser
    from interleaf.parse.stage import DocumentInput, parse_document

    root = tmp_path_factory.mktemp("lmm-filter-warehouse")
    parser = get_parser(ParseConfig())
    outputs = []
    for name in ("corrosion-plot-table.pdf", "figures-example.pdf"):
        path = corpus / "docs" / name
        data = path.read_bytes()
        out = parse_document(DocumentInput(hashlib.sha256(data).hexdigest(), name, str(path), data), parser, "fp")
        for rel, png in out.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(png)
        outputs.append(out)
    quotes = pa.concat_tables([o.quotes for o in outputs])
    documents = pa.concat_tables([o.documents for o in outputs])
    config = IndexConfig(retrievers=[BM25Config(name="bm25")])
    spec = config.retrievers[0]
    rows, _ = get_retriever(spec).encode(corpus_for(spec, config, quotes, documents, None), None, str(root))
    return SmallIndex(load_index(config, quotes, documents, None, {"bm25": rows}), root)


STAGE_QUESTION = "figure table example corrosion plot chart"


def run(
    small: SmallIndex, image_filter: ImageFilter | None = None, top_m: int = 60, loaded: list[str] | None = None
) -> QuestionResult:
    def load_image(img_path: str) -> bytes:
        if loaded is not None:
            loaded.append(img_path)
        return (small.root / img_path).read_bytes()

    config = RetrieveConfig(scope="corpus", lmm_filter=LMMFilterConfig(top_m=top_m))
    (result,) = retrieve(
        small.index,
        [Question("q1", STAGE_QUESTION)],
        [[Clause(STAGE_QUESTION, "question", ExpandConfig().weights.question)]],  # the question alone
        config,
        ExpandConfig(),
        LexicalReranker(),
        image_filter=image_filter,
        load_image=load_image,
    )
    return result


def images_of(small: SmallIndex, quote_ids: list[str]) -> list[str]:
    return [q for q in quote_ids if small.index.modalities[small.index.position[q]] == "image"]


def test_stage_drops_the_image_judged_no_and_judges_only_the_heads_images(
    small_index: SmallIndex, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = run(small_index)
    ranked = [q for q, _ in plain.ranking]
    images = images_of(small_index, ranked)
    assert len(images) >= 4 and len(ranked) > len(images), ranked  # images and texts, mixed
    top_m = ranked.index(images[2]) + 1  # the head holds three image quotes; later images lie beyond it
    head_images, target = images[:3], images[1]
    pos = small_index.index.position
    path_of = {q: str(small_index.index.corpus.img_paths[pos[q]]) for q in images}
    target_png = (small_index.root / path_of[target]).read_bytes()
    server.reply = lambda _text, png: "no" if png == target_png else "Yes, it does."

    loaded: list[str] = []
    result = run(small_index, openai_filter(server, monkeypatch, concurrency=2), top_m, loaded)
    assert server.errors == []
    # only the image quotes of the head were read and sent; no text quote, nothing beyond top_m
    assert sorted(loaded) == sorted(path_of[q] for q in head_images)
    assert sorted(server.images) == sorted((small_index.root / path_of[q]).read_bytes() for q in head_images)
    assert [v.quote_id for v in result.verdicts] == head_images
    assert [v.keep for v in result.verdicts] == [True, False, True]
    # the "no" leaves the ranking and every context; everything else keeps its order
    assert [q for q, _ in result.ranking] == [q for q in ranked if q != target]
    for budget, context in result.contexts.items():
        ids = [q for q, _ in context]
        before = [q for q, _ in plain.contexts[budget]]
        assert target not in ids
        assert set(images_of(small_index, before)) - {target} <= set(ids)  # the other images stay
    # the freed image slot goes to the next image candidate (budget 5 = 2 images + 3 texts)
    assert images_of(small_index, [q for q, _ in plain.contexts[5]]) == images[:2]
    assert images_of(small_index, [q for q, _ in result.contexts[5]]) == [images[0], images[2]]


def test_stage_keeps_a_candidate_whose_call_failed(
    small_index: SmallIndex, server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = run(small_index)
    images = images_of(small_index, [q for q, _ in plain.ranking])
    server.script = ["say:yes", "500", "say:yes"]  # the second head image's call fails (no retries)
    image_filter = openai_filter(server, monkeypatch, concurrency=1, retries=0)
    top_m = [q for q, _ in plain.ranking].index(images[2]) + 1
    result = run(small_index, image_filter, top_m)
    assert [v.keep for v in result.verdicts] == [True, None, True]
    assert "HTTP 500" in (result.verdicts[1].error or "")
    assert result.ranking == plain.ranking and result.contexts == plain.contexts  # nothing removed

    # the verdicts are data: the eval flow's rows pass the declared schema and read back through SQL
    from interleaf.retrieve.stage import result_tables
    from warehouse import Warehouse
    from warehouse.catalog import query

    wh = Warehouse(small_index.root / "wh")
    tables = result_tables("qset-1", "corpus", [result], small_index.index, image_filter)
    wh.write_part("image_verdicts", "fp", "qset-1", tables["image_verdicts"])
    wh.publish("answer:corpus", {"retrieve": ("fp", ("image_verdicts",))})
    _columns, rows = query(wh, "SELECT quote_id, keep, backend, model, prompt_hash, error FROM image_verdicts")
    assert [r[0] for r in rows] == images[:3]
    assert [r[1] for r in rows] == [True, None, True]
    assert {(r[2], r[3], r[4]) for r in rows} == {("openai", "qwen-vl-test", load_prompt("lmm_filter").hash)}
    assert rows[0][5] is None and "HTTP 500" in rows[1][5]
