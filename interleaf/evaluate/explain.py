"""Why an evidence item was missed: where every retriever and clause ranked its matching quotes, and
which quotes took the places it needed.

Pure: from the recall outcomes (`interleaf.evaluate.recall.outcomes`), each question's per-(retriever,
clause) hits, its fused ranking and contexts, and what each quote is (document, page, kind, text),
to a list of `MissReport`s; `render` turns them into a rich renderable for `interleaf eval --explain`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from interleaf.evaluate.recall import EvidenceOutcome, QAItem, outcomes
from interleaf.retrieve.fusion import Hit

SNIPPET_CHARS = 110


@dataclass(frozen=True)
class QuoteInfo:
    """What a reader needs to recognise a quote in the report."""

    doc: str  # document name (or id)
    page_idx: int  # 0-based
    kind: str
    text: str  # the text retrievers see (indexed text) or the quote's own text

    def label(self) -> str:
        return f"{self.doc} p{self.page_idx + 1} {self.kind}"


@dataclass(frozen=True)
class MatchTrace:
    """One quote that matches the evidence, and where each list put it (None: not in its top depth)."""

    quote_id: str
    list_ranks: dict[str, int | None]  # "retriever/clause_id" -> 1-based rank
    fused_rank: int | None  # position in the final (fused, reranked) ranking


@dataclass(frozen=True)
class Displacer:
    """A quote that sits in the context at k, above where the evidence would have had to be."""

    position: int
    quote_id: str
    lists: list[str]  # the lists ("retriever/clause_id") that ranked it in their top 10


@dataclass
class MissReport:
    question_id: str
    question: str
    evidence_idx: int
    group: str  # text | image
    needle: str
    page: int  # 1-based, as in the qa file
    k: int
    clauses: list[str]
    matches: list[MatchTrace] = field(default_factory=list)  # empty: no quote holds the needle (a parse miss)
    displaced_by: list[Displacer] = field(default_factory=list)

    @property
    def findable(self) -> bool:
        return bool(self.matches)


def list_name(hit: Hit) -> str:
    return f"{hit.retriever}/{hit.clause_id}"


def _list_names(hits: Sequence[Hit]) -> list[str]:
    """Every (retriever, clause) list the question was asked, in a stable order."""
    return sorted({list_name(h) for h in hits}, key=lambda n: (n.split("/")[0], int(n.split("/")[1])))


def explain_misses(
    outcomes: Sequence[EvidenceOutcome],
    items: Sequence[QAItem],
    k: int,
    hits: Mapping[str, Sequence[Hit]],
    rankings: Mapping[str, Sequence[str]],
    contexts: Mapping[str, Mapping[int, Sequence[str]]],
    clauses: Mapping[str, Sequence[str]] | None = None,
    top_lists: int = 10,
) -> list[MissReport]:
    """One report per evidence item with no matching quote in the context of budget `k`.

    `hits[qid]`: every (retriever, clause) hit of the question; `rankings[qid]`: the final fused
    ranking (quote ids, best first); `contexts[qid][budget]`: the context actually given."""
    by_id = {i.id: i for i in items}
    reports = []
    for outcome in outcomes:
        if k not in outcome.first_rank or outcome.first_rank[k] is not None:
            continue  # found, or no context of that budget was built
        item = by_id[outcome.question_id]
        evidence = item.evidence[outcome.evidence_idx]
        qhits = hits.get(outcome.question_id, [])
        names = _list_names(qhits)
        rank_of: dict[tuple[str, str], int] = {}
        for h in qhits:
            key = (h.quote_id, list_name(h))
            rank_of[key] = min(rank_of.get(key, h.rank), h.rank)
        fused = {q: i for i, q in enumerate(rankings.get(outcome.question_id, []), start=1)}
        matches = [
            MatchTrace(q, {n: rank_of.get((q, n)) for n in names}, fused.get(q))
            for q in sorted(outcome.matches, key=lambda q: (fused.get(q, 10**9), q))
        ]
        context = contexts.get(outcome.question_id, {}).get(k, [])
        displaced = [
            Displacer(pos, q, [n for n in names if rank_of.get((q, n), top_lists + 1) <= top_lists])
            for pos, q in enumerate(context, start=1)
        ]
        reports.append(
            MissReport(
                question_id=item.id,
                question=item.question,
                evidence_idx=outcome.evidence_idx,
                group=outcome.group,
                needle=evidence.needle,
                page=evidence.page,
                k=k,
                clauses=list((clauses or {}).get(item.id, [])),
                matches=matches,
                displaced_by=displaced,
            )
        )
    return reports


def _snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _rank(value: int | None) -> str:
    return "–" if value is None else str(value)


def explain_stored(tables: Mapping[str, pa.Table], k: int) -> tuple[list[MissReport], dict[str, QuoteInfo]]:
    """`explain_misses` over a question set's stored rows: `questions`, `contexts`, `hits`,
    `asked_clauses`, `quotes`, `quote_texts`, `documents` and `index_texts` (what the text retrievers
    matched against, shown for each quote named). The fused ranking is not stored: a matching quote's
    position is its place in the largest context."""
    from interleaf.evaluate.stage import contexts_by_question, evidence_corpus, qa_items
    from interleaf.expand.stage import clauses_by_question

    items = qa_items(tables["questions"])
    names = {d["name"]: d["doc_id"] for d in tables["documents"].select(["name", "doc_id"]).to_pylist()}
    corpus = evidence_corpus(tables["quotes"], tables["quote_texts"])
    contexts = contexts_by_question(tables["contexts"])
    found = outcomes(corpus, items, names, contexts)
    hits: dict[str, list[Hit]] = {}
    for h in tables["hits"].select(["question_id", "clause_id", "retriever", "quote_id", "rank", "score"]).to_pylist():
        hits.setdefault(h["question_id"], []).append(
            Hit(h["clause_id"], h["retriever"], h["quote_id"], h["rank"], h["score"])
        )
    asked = clauses_by_question(tables["asked_clauses"])  # the same columns as expand's `clauses`
    clauses = {q: [f"[{c.kind}] {c.text}" for c in cs] for q, cs in asked.items()}
    largest = {q: by[max(by)] for q, by in contexts.items() if by}
    reports = explain_misses(found, items, k, hits, largest, contexts, clauses)
    wanted = {m.quote_id for r in reports for m in r.matches} | {d.quote_id for r in reports for d in r.displaced_by}
    return reports, quote_infos(tables, wanted)


def quote_infos(tables: Mapping[str, pa.Table], wanted: set[str]) -> dict[str, QuoteInfo]:
    """Document name, page, kind and indexed text (else the quote's own text) of each quote named."""
    doc_name = {d["doc_id"]: d["name"] for d in tables["documents"].select(["doc_id", "name"]).to_pylist()}
    indexed: dict[str, str] = {}
    for r in tables["index_texts"].select(["quote_id", "text"]).to_pylist():
        if r["quote_id"] in wanted:
            indexed.setdefault(r["quote_id"], r["text"])
    out = {}
    for q in tables["quotes"].select(["quote_id", "doc_id", "page_idx", "kind", "text"]).to_pylist():
        if q["quote_id"] in wanted:
            name = doc_name.get(q["doc_id"], q["doc_id"][:12])
            out[q["quote_id"]] = QuoteInfo(name, q["page_idx"], q["kind"], indexed.get(q["quote_id"], q["text"]))
    return out


def render(reports: Sequence[MissReport], quotes: Mapping[str, QuoteInfo], max_matches: int = 3) -> RenderableType:
    """A rich renderable: per missed item, its matching quotes' ranks per list and the context that won."""
    if not reports:
        return Text("every evidence item was found", style="green")
    parts: list[RenderableType] = []
    for r in reports:
        head = Text()
        head.append(f"{r.question_id} evidence {r.evidence_idx} ", style="bold")
        head.append(f"({r.group}, page {r.page}) missed at k={r.k}: ", style="bold red")
        head.append(f"needle {r.needle!r}\n")
        head.append(_snippet(r.question, 200), style="italic")
        for i, c in enumerate(r.clauses):
            head.append(f"\n  clause {i}: {_snippet(c, 150)}", style="dim")
        parts.append(head)
        if not r.findable:
            parts.append(Text("  no quote holds the needle on that page: a parse miss, not a ranking one", style="red"))
        else:
            names = list(r.matches[0].list_ranks)
            title = "where each list ranked the evidence (list = retriever/clause)"
            table = Table("matching quote", *names, "in context", title=title, box=None)
            for m in r.matches[:max_matches]:
                info = quotes.get(m.quote_id)
                label = f"{info.label()}: {_snippet(info.text, 70)}" if info else m.quote_id
                table.add_row(label, *[_rank(m.list_ranks[n]) for n in names], _rank(m.fused_rank))
            parts.append(table)
        took = Table("#", "quote that took its place", "top-10 in", title=f"context at k={r.k}", box=None)
        for d in r.displaced_by:
            info = quotes.get(d.quote_id)
            label = f"{info.label()}: {_snippet(info.text)}" if info else d.quote_id
            took.add_row(str(d.position), label, ", ".join(d.lists) or "–")
        parts.append(took)
        parts.append(Text(""))
    return Group(*parts)
