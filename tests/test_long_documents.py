"""Long documents through the real flows: seven pages of the IRS manual cut into a PDF of their own
(pages 7-9 and 50-53, the outline PyMuPDF keeps for them), ingested and asked through the CLI.

Each mechanism of interleaf.structure is tested alone in the test_structure_* files; here, that parse
stores the section tree, the index reads it, retrieval asks within the sections a question names,
and `eval --explain` traces a miss from the stored rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from tests.conftest import CORPUS, run_cli, sql_rows

IRS = CORPUS / "scale" / "irs-manual-400p.pdf"
KEPT = [7, 8, 9, 50, 51, 52, 53]  # 1-based pages of the manual
NAME = "irs-manual-excerpt.pdf"


def page_in_excerpt(page: int) -> int:
    return KEPT.index(page) + 1


@pytest.fixture(scope="module")
def excerpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The warehouse root, after `interleaf ingest` of the excerpt."""
    folder = tmp_path_factory.mktemp("long")
    pdf = pymupdf.open(IRS)
    pdf.select([p - 1 for p in KEPT])
    (folder / "docs").mkdir()
    pdf.save(folder / "docs" / NAME)
    root = folder / "warehouse"
    run_cli(root, "ingest", str(folder / "docs"))
    return root


def _qa_file(folder: Path, items: list[dict]) -> Path:
    path = folder / "qa.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def test_sections_and_section_paths_are_in_sql(excerpt: Path) -> None:
    sections = sql_rows(excerpt, "select label, title, level, source, n_quotes from sections order by ordinal")
    labels = [s["label"] for s in sections]
    assert "2.3.59.5" in labels and "Exhibit 2.3.59-14" in labels
    assert sections[0]["level"] == 0 and sections[0]["source"] == "document"
    assert {s["source"] for s in sections[1:]} >= {"outline"}
    # every quote sits in a stored section, and its path ends with that section's own heading (the
    # document itself, level 0, has an empty path: quotes before the first heading)
    orphans = sql_rows(
        excerpt,
        "select q.quote_id from quotes q left join sections s using (section_id) where s.section_id is null"
        " or (s.level > 0 and not ends_with(q.section_path, s.title)) or (s.level = 0 and q.section_path <> '')",
    )
    assert orphans == []
    cut_off = sql_rows(
        excerpt, "select section_path, page_idx from quotes where text like '%Weekly cut-off time for BMFOLB%'"
    )
    assert cut_off and cut_off[0]["section_path"].endswith("2.3.59.5 Restoring RRR Tax Modules to Master File")


def test_bm25_reads_the_section_path_and_minilm_does_not(excerpt: Path) -> None:
    """The table on the manual's page 53 never says "Exhibit 2.3.59-14"; its indexed text does."""
    rows = sql_rows(
        excerpt,
        "select t.retriever, t.text, q.text as own from index_texts t join quotes q using (quote_id)"
        f" where q.page_idx = {page_in_excerpt(53) - 1} and q.text like '%entity no-merge%'",
    )
    by_retriever = {r["retriever"]: r for r in rows}
    assert set(by_retriever) == {"bm25", "minilm"}
    assert "2.3.59-14" not in by_retriever["bm25"]["own"]
    assert "2.3.59-14" in by_retriever["bm25"]["text"]
    assert "2.3.59-14" not in by_retriever["minilm"]["text"]
    # the exhibit's table, cut by two page breaks: its third part carries the first part's header row
    (part,) = sql_rows(
        excerpt,
        "select t.text, q.text as own from index_texts t join quotes q using (quote_id)"
        f" where t.retriever = 'bm25' and q.kind = 'table' and q.page_idx = {page_in_excerpt(53) - 1}",
    )
    assert "POSITION DESCRIPTION AND VALIDITY" not in part["own"]
    assert "POSITION DESCRIPTION AND VALIDITY" in part["text"]


def test_a_named_exhibit_is_searched_within_its_section(excerpt: Path, tmp_path: Path) -> None:
    question = (
        "In IRM 2.3.59 Exhibit 2.3.59-14 (Command Code BMFOL Entity Display), the TC006 No Merge Code lists "
        "tax-module and entity no-merge reason codes. Which values are entity no-merge codes?"
    )
    evidence = [{"page": page_in_excerpt(53), "modality": "table", "needle": "values 22-33 are entity no-merge"}]
    qa = _qa_file(tmp_path, [{"id": "x1", "doc": NAME, "question": question, "evidence": evidence}])
    run_cli(excerpt, "eval", "--qa", str(qa), "--scope", "corpus")
    scoped = sql_rows(
        excerpt, "select clause_id, kind, text, n_quotes from asked_clauses where starts_with(kind, 'scope:')"
    )
    assert [s["kind"] for s in scoped] == ["scope:Exhibit 2.3.59-14"]
    total = sql_rows(excerpt, "select count(*) as n from index_texts where retriever = 'bm25'")[0]["n"]
    assert 0 < scoped[0]["n_quotes"] < total
    # every hit of that clause lies in the exhibit's section (or is an image on its pages)
    outside = sql_rows(
        excerpt,
        "select h.quote_id from hits h join quotes q using (quote_id) join sections s using (section_id)"
        f" where h.clause_id = {scoped[0]['clause_id']} and s.label <> 'Exhibit 2.3.59-14'"
        " and q.kind not in ('figure', 'table', 'chart', 'image', 'equation')",
    )
    assert outside == []
    recall = sql_rows(excerpt, "select k, recall from eval_results where modality = 'all' and k = 5")
    assert recall == [{"k": 5, "recall": 1.0}]


def test_explain_traces_a_missed_item_from_the_stored_rows(excerpt: Path, tmp_path: Path) -> None:
    """A question that shares no word with its evidence: the quote exists (a ranking miss, not a parse
    miss), no list ranks it, and the five quotes that filled the context are named."""
    evidence = [{"page": page_in_excerpt(8), "modality": "text", "needle": "BMFOR displays the tax module screens"}]
    qa = _qa_file(
        tmp_path, [{"id": "m1", "doc": NAME, "question": "Whose portrait hangs in the hall?", "evidence": evidence}]
    )
    out = run_cli(excerpt, "eval", "--qa", str(qa), "--scope", "doc", "--explain", "--k", "5").stdout
    assert "evidence missed at k=5, doc scope (1)" in out
    assert "m1 evidence 0 (text, page 2) missed at k=5" in out
    assert "a parse miss" not in out
    assert "quote that took its place" in out
    assert out.count(f"{NAME} p") >= 5  # the matching quote and the context's five, by document and page
    refused = run_cli(excerpt, "eval", "--qa", str(qa), "--explain", "--k", "7", check=False)
    assert refused.returncode != 0 and "--k 7" in refused.stderr + refused.stdout
