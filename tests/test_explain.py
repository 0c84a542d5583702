"""`interleaf eval --explain`: the report of missed evidence, built from recall outcomes and hits."""

from __future__ import annotations

from rich.console import Console

from interleaf.evaluate.explain import QuoteInfo, explain_misses, render
from interleaf.evaluate.recall import Evidence, EvidenceOutcome, QAItem, outcomes
from interleaf.index.corpus import QuoteCorpus
from interleaf.retrieve.fusion import Hit

ITEMS = [
    QAItem(
        "q1",
        "manual.pdf",
        "In Exhibit 2.3.59-14, which values are entity no-merge codes?",
        (Evidence(53, "table", "values 22-33 are entity no-merge"),),
    ),
    QAItem("q2", "manual.pdf", "What is BMFOR?", (Evidence(8, "text", "BMFOR displays"),)),
]


def _corpus() -> QuoteCorpus:
    """Five quotes of one document; `row` (page 53) holds q1's needle, `intro` (page 8) holds q2's."""
    rows = [
        ("row", 52, "table", "11 54-55 No Merge Code; values 1-10 are tax module; values 22-33 are entity no-merge"),
        ("title", 49, "text", "Exhibit 2.3.59-14 Command Code BMFOL Entity Display"),
        ("other", 60, "text", "Exhibit 2.3.59-15 Entity Display no-merge"),
        ("intro", 7, "text", "BMFOR displays the tax module screens only"),
        ("noise", 9, "text", "Command Code BMFOL basics"),
    ]
    corpus = QuoteCorpus()
    for qid, page, kind, text in rows:
        corpus.quote_ids.append(qid)
        corpus.doc_ids.append("D")
        corpus.page_idx.append(page)
        corpus.kinds.append(kind)
        corpus.texts.append(text)
        corpus.match_texts.append([text])
        corpus.img_paths.append(None)
    return corpus


def _inputs() -> tuple[list[EvidenceOutcome], dict, dict, dict]:
    # q1: BM25 ranks the evidence row 7th on the question clause and 2nd on clause 1; MiniLM never
    # finds it; the fused ranking puts it 3rd, below `other` and `title`, so a 2-quote context misses it.
    hits = {
        "q1": [
            Hit(0, "bm25", "other", 1, 9.0),
            Hit(0, "bm25", "title", 2, 8.0),
            Hit(0, "bm25", "row", 7, 3.0),
            Hit(1, "bm25", "row", 2, 5.0),
            Hit(0, "minilm", "title", 1, 0.8),
            Hit(0, "minilm", "other", 4, 0.5),
        ],
        "q2": [Hit(0, "bm25", "intro", 1, 7.0)],
    }
    rankings = {"q1": ["other", "title", "row", "noise"], "q2": ["intro", "noise"]}
    contexts = {
        "q1": {2: ["other", "title"], 5: ["other", "title", "row", "noise"]},
        "q2": {2: ["intro", "noise"], 5: ["intro", "noise"]},
    }
    outs = outcomes(_corpus(), ITEMS, {"manual.pdf": "D"}, contexts)
    return outs, hits, rankings, contexts


def test_a_missed_item_shows_each_lists_rank_and_the_quotes_that_took_its_place() -> None:
    outs, hits, rankings, contexts = _inputs()
    reports = explain_misses(outs, ITEMS, 2, hits, rankings, contexts, {"q1": ["full question", "entity no-merge"]})
    assert [(r.question_id, r.evidence_idx) for r in reports] == [("q1", 0)]  # q2's evidence is 1st: found
    report = reports[0]
    assert report.findable and report.needle == "values 22-33 are entity no-merge" and report.page == 53
    (match,) = report.matches
    assert match.quote_id == "row"
    # lists in order bm25/0, bm25/1, minilm/0; the row is absent from minilm's list
    assert match.list_ranks == {"bm25/0": 7, "bm25/1": 2, "minilm/0": None}
    assert match.fused_rank == 3
    assert [(d.position, d.quote_id) for d in report.displaced_by] == [(1, "other"), (2, "title")]
    # `other` is in the top 10 of bm25/0 (rank 1) and minilm/0 (rank 4); `title` of the same two
    assert report.displaced_by[0].lists == ["bm25/0", "minilm/0"]


def test_nothing_is_reported_at_a_budget_that_found_everything_or_was_not_built() -> None:
    outs, hits, rankings, contexts = _inputs()
    assert explain_misses(outs, ITEMS, 5, hits, rankings, contexts) == []
    assert explain_misses(outs, ITEMS, 20, hits, rankings, contexts) == []  # no context of 20 quotes exists


def test_an_item_no_quote_holds_is_reported_as_a_parse_miss() -> None:
    items = [QAItem("q3", "manual.pdf", "Where is X?", (Evidence(3, "text", "not in any quote"),))]
    outs = outcomes(_corpus(), items, {"manual.pdf": "D"}, {"q3": {2: ["noise"]}})
    (report,) = explain_misses(outs, items, 2, {"q3": []}, {"q3": ["noise"]}, {"q3": {2: ["noise"]}})
    assert not report.findable and report.matches == []
    console = Console(width=160, record=True)
    console.print(render([report], {}))
    assert "parse miss" in console.export_text()


def test_the_rendered_report_names_the_ranks_and_the_winning_quotes() -> None:
    outs, hits, rankings, contexts = _inputs()
    reports = explain_misses(outs, ITEMS, 2, hits, rankings, contexts)
    corpus = _corpus()
    infos = {
        q: QuoteInfo("manual.pdf", p, k, t)
        for q, p, k, t in zip(corpus.quote_ids, corpus.page_idx, corpus.kinds, corpus.texts, strict=True)
    }
    console = Console(width=200, record=True)
    console.print(render(reports, infos))
    text = console.export_text()
    assert "q1 evidence 0" in text and "missed at k=2" in text
    assert "bm25/1" in text and "minilm/0" in text
    assert "manual.pdf p61 text: Exhibit 2.3.59-15" in text  # `other`, page_idx 60, took position 1
    assert "manual.pdf p53 table" in text  # the evidence row itself
