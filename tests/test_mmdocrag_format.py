"""MMDocRAG's JSONL format in and out, on the fixture in tests/fixtures/mmdocrag (written in that format
from dpr-emnlp2020.pdf: 3 lines with 15 quotes, 1 line with 20, crops as PNG)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pymupdf
import pytest

from interleaf.evaluate.mmdocrag import (
    MMDocRAGError,
    image_loader,
    item_from_request,
    read_mmdocrag,
    write_finetune,
    write_mmdocrag,
)
from interleaf.generate.prompting import answer_conversation, answer_prompt
from interleaf.generate.protocol import AnswerRequest, ContextQuote

FIXTURE = Path(__file__).parent / "fixtures" / "mmdocrag"
SAMPLE_15 = FIXTURE / "sample_15.jsonl"
SAMPLE_20 = FIXTURE / "sample_20.jsonl"


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_fixture_lines_read_with_their_fixed_contexts() -> None:
    read15, read20 = read_mmdocrag(SAMPLE_15), read_mmdocrag(SAMPLE_20)
    assert read15.rejects == [] and read20.rejects == []
    assert [i.q_id for i in read15.items] == [0, 2, 3]
    assert [i.q_id for i in read20.items] == [1]
    # MMDocRAG §3: C15 = 10 text + 5 image quotes, C20 = 12 + 8
    assert all((len(i.text_quotes), len(i.img_quotes)) == (10, 5) for i in read15.items)
    assert (len(read20.items[0].text_quotes), len(read20.items[0].img_quotes)) == (12, 8)
    first = read15.items[0]
    assert first.gold_quotes == ("image2", "text9", "image5", "text4")
    assert first.question_type == "Comparative"
    assert first.evidence_modality_type == ("table", "figure", "Text")
    assert first.source == f"{SAMPLE_15}:1"


def test_pure_text_request_numbers_each_modality_in_file_order() -> None:
    for item, raw in zip(read_mmdocrag(SAMPLE_15).items, raw_lines(SAMPLE_15), strict=True):
        request = item.request("text")
        assert request.question_id == str(raw["q_id"]) and request.question == raw["question"]
        texts = [q for q in request.quotes if q.modality == "text"]
        images = [q for q in request.quotes if q.modality == "image"]
        # text quotes come first (the prompt's order, §4.6 positions), each numbered by its place in its list
        assert request.quotes == (*texts, *images)
        assert [q.number for q in texts] == list(range(1, 11)) and [q.number for q in images] == list(range(1, 6))
        assert [q.text for q in texts] == [t["text"] for t in raw["text_quotes"]]
        assert [q.label for q in texts] == [f"[{n}]" for n in range(1, 11)]
        # pure-text mode: an image quote is its img_description
        assert [q.text for q in images] == [i["img_description"] for i in raw["img_quotes"]]
        assert [q.label for q in images] == [f"image{n}" for n in range(1, 6)]
        assert [q.page_idx for q in images] == [i["page_id"] for i in raw["img_quotes"]]
        # gold labels name context quotes directly
        ids = {q.quote_id for q in request.quotes}
        assert set(raw["gold_quotes"]) <= ids


def test_multimodal_request_gives_crops_as_png(tmp_path: Path) -> None:
    item = read_mmdocrag(SAMPLE_15).items[0]
    request = item.request("multimodal", FIXTURE)
    load = image_loader(FIXTURE)
    for quote in (q for q in request.quotes if q.modality == "image"):
        png = load(quote.img_path)
        assert png == (FIXTURE / quote.img_path).read_bytes()
    # MMDocRAG ships JPEG crops: the loader hands the generator PNG bytes of the same picture
    jpeg_root = tmp_path / "dataset"
    (jpeg_root / "images").mkdir(parents=True)
    original = pymupdf.Pixmap(str(FIXTURE / "images" / "dpr-emnlp2020_p4_l5.png"))
    (jpeg_root / "images" / "fig.jpg").write_bytes(original.tobytes("jpg"))
    converted = image_loader(jpeg_root)("images/fig.jpg")
    assert converted.startswith(b"\x89PNG")
    assert (pymupdf.Pixmap(converted).width, pymupdf.Pixmap(converted).height) == (original.width, original.height)
    # images.zip unpacks flat: a path that is not there is looked up by name directly under the root
    assert image_loader(jpeg_root / "images")("images/fig.jpg") == converted


def test_multimodal_request_names_the_line_and_quote_of_a_missing_crop(tmp_path: Path) -> None:
    shutil.copy(SAMPLE_15, tmp_path / "sample_15.jsonl")
    item = read_mmdocrag(tmp_path / "sample_15.jsonl").items[0]
    assert item.request("text").quotes  # pure text needs no crop
    with pytest.raises(MMDocRAGError, match=r"sample_15\.jsonl:1: image1: image images/dpr-emnlp2020_p3_l10\.png"):
        item.request("multimodal", tmp_path)


def test_malformed_lines_are_rejected_one_by_one_and_the_rest_is_read(tmp_path: Path) -> None:
    good = raw_lines(SAMPLE_15)
    no_question = {k: v for k, v in good[1].items() if k != "question"}
    outside = {**good[2], "gold_quotes": ["text11"]}  # a 15-quote context has 10 text quotes
    bad_page = json.loads(json.dumps(good[1]))
    bad_page["img_quotes"][3]["page_id"] = "four"
    lines = [
        json.dumps(good[0]),
        '{"q_id": 7, "question": ',  # truncated
        json.dumps(no_question),
        "",
        json.dumps(outside),
        json.dumps(bad_page),
        "[1, 2]",
        json.dumps(good[2]),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_mmdocrag(path)
    assert [i.q_id for i in read.items] == [0, 3]
    assert [(r.line, r.path) for r in read.rejects] == [(n, str(path)) for n in (2, 3, 5, 6, 7)]
    reasons = [r.reason for r in read.rejects]
    assert reasons[0].startswith("invalid JSON")
    assert reasons[1] == "missing field 'question'"
    assert reasons[2] == "gold quote text11 is outside the context (10 text quotes)"
    assert reasons[3] == "img_quotes[3]: field 'page_id' is str, expected int"
    assert reasons[4] == "a line must be a JSON object, got list"
    assert str(read.rejects[0]).startswith(f"{path}:2: invalid JSON")


def test_require_images_rejects_a_line_whose_crop_is_missing(tmp_path: Path) -> None:
    shutil.copy(SAMPLE_15, tmp_path / "sample_15.jsonl")
    shutil.copytree(FIXTURE / "images", tmp_path / "images")
    (tmp_path / "images" / "dpr-emnlp2020_p11_l8.png").unlink()  # lines 2 and 3 use this crop, line 1 does not
    read = read_mmdocrag(tmp_path / "sample_15.jsonl", require_images=True)
    assert [i.q_id for i in read.items] == [0]
    assert [r.line for r in read.rejects] == [2, 3]
    assert read.rejects[1].reason == f"image5: image images/dpr-emnlp2020_p11_l8.png not found under {tmp_path}"


def test_written_lines_equal_the_lines_read(tmp_path: Path) -> None:
    for source in (SAMPLE_15, SAMPLE_20):
        items = read_mmdocrag(source).items
        out = tmp_path / source.name
        assert write_mmdocrag(items, out) == len(items)
        assert raw_lines(out) == raw_lines(source)
    # keys MMDocRAG adds to some lines (old_id) survive the round trip
    line = {**raw_lines(SAMPLE_15)[0], "old_id": 1234}
    (tmp_path / "old.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    write_mmdocrag(read_mmdocrag(tmp_path / "old.jsonl").items, tmp_path / "again.jsonl")
    assert raw_lines(tmp_path / "again.jsonl") == [line]


def _our_request() -> tuple[AnswerRequest, dict[str, int]]:
    """An Interleaf context: warehouse quote ids, modalities interleaved in retrieval order."""
    item = read_mmdocrag(SAMPLE_15).items[0]
    quotes = item.request("text").quotes
    order = [quotes[i] for i in (10, 0, 1, 11, 2, 3, 4, 12, 5, 6, 13, 7, 8, 14, 9)]
    renamed = tuple(
        replace(q, quote_id=f"3e67fc1a-p{q.page_idx:04d}-q{n:03d}", doc_id="3e67fc1a9977715a")
        for n, q in enumerate(order)
    )
    layout = {q.quote_id: 100 + n for n, q in enumerate(renamed)}
    return AnswerRequest("q042", item.question, renamed), layout


def test_our_question_exports_to_mmdocrag_and_reads_back(tmp_path: Path) -> None:
    request, layout = _our_request()
    gold = [q.quote_id for q in request.quotes if q.label in ("image2", "[9]")]
    answer = "DPR scores 78.4 against 59.1 [9].\n\n![DPR beats BM25 at top-20](image2)"
    item = item_from_request(
        request,
        layout_ids=layout,
        answer_interleaved=answer,
        answer_short="78.4 vs 59.1",
        gold_quote_ids=gold,
        question_type="Comparative",
        evidence_modality_type=["table", "text"],
    )
    assert item.gold_quotes == ("image2", "text9")  # our ids became positional labels
    assert item.doc_name == "dpr-emnlp2020"
    out = tmp_path / "export" / "ours.jsonl"
    write_mmdocrag([item], out, images_from=FIXTURE)  # crops copied beside the file
    back = read_mmdocrag(out, require_images=True)
    assert back.rejects == []
    [again] = back.items
    line = raw_lines(out)[0]
    assert line["q_id"] == "q042" and line["answer_interleaved"] == answer
    assert [q["quote_id"] for q in line["text_quotes"]] == [f"text{n}" for n in range(1, 11)]
    assert [q["layout_id"] for q in line["img_quotes"]] == [
        layout[q.quote_id] for q in request.quotes if q.modality == "image"
    ]
    # the same quote carries the same number, so the answer's citations keep their meaning
    by_label = {q.label: q.text for q in request.quotes}
    assert {q.label: q.text for q in again.request("multimodal", out.parent).quotes} == by_label


def test_export_refuses_what_it_cannot_write_faithfully() -> None:
    request, layout = _our_request()
    with pytest.raises(MMDocRAGError, match="gold quote nowhere is not in the context"):
        item_from_request(request, layout_ids=layout, answer_interleaved="", gold_quote_ids=["nowhere"])
    with pytest.raises(MMDocRAGError, match="no layout index"):
        item_from_request(request, layout_ids={}, answer_interleaved="")
    gap = AnswerRequest("q1", "?", tuple(q for q in request.quotes if q.label != "[4]"))
    with pytest.raises(MMDocRAGError, match=r"text quotes are not numbered 1\.\.9"):
        item_from_request(gap, layout_ids=layout, answer_interleaved="")


def test_finetune_records_are_system_user_assistant_built_by_the_generation_prompt(tmp_path: Path) -> None:
    items = read_mmdocrag(SAMPLE_15).items + read_mmdocrag(SAMPLE_20).items
    system = answer_prompt("text").render()

    def render_user(request: AnswerRequest) -> str:
        return answer_conversation(request.question, request.quotes, "text")[1].text

    out = tmp_path / "train.jsonl"
    assert write_finetune(items, out, render_user, system) == 4
    records = raw_lines(out)
    for item, record in zip(items, records, strict=True):
        messages = record["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant"]
        assert messages[0]["content"] == system
        assert messages[2]["content"] == item.answer_interleaved
        user = messages[1]["content"]
        assert user.startswith("Text Quotes are:\n[1] ") and user.endswith(f"The user question is: {item.question}")
        for q in item.img_quotes:  # pure text: image quotes as their descriptions (Appendix C.2)
            assert f"image{q.number} is described as: {q.img_description}" in user
    unanswered = replace(items[0], answer_interleaved=" ")
    with pytest.raises(MMDocRAGError, match="no answer_interleaved to train on for question"):
        write_finetune([unanswered], tmp_path / "bad.jsonl", render_user, system)


def test_context_quotes_keep_the_document_and_page() -> None:
    item = read_mmdocrag(SAMPLE_20).items[0]
    quote: ContextQuote = item.request("text").quotes[12]  # the first image quote of a 12 + 8 context
    assert (quote.quote_id, quote.modality, quote.number, quote.page_idx) == ("image1", "image", 1, 7)
    assert quote.doc_name == "dpr-emnlp2020" and quote.img_path == "images/dpr-emnlp2020_p7_l2.png"
