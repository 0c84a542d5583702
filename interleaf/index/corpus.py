"""The quotes as retrievers see them: one indexed text per quote, composed from the warehouse rows.

Image quotes (figure / table / equation) are indexed by their caption, the vector text inside the
box and, when the describe stage has run, their OCR-text / table Markdown / VLM-text (MMDocRAG §4.5:
VLM-text carries more than OCR-text), so the text retrievers find them too. Each quote is prefixed
with a contextual header, its document title and section path (interleaf.structure.context): in
corpus scope, a passage that never names its subject is otherwise indistinguishable from one in
another document, and a table row three pages into "Exhibit 7.4.12-14" never says "Exhibit 7.4.12-14".
A table continued across pages carries its first part's title and header row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from interleaf.index.retriever_config import TextFields
from interleaf.kinds import HEADING_KINDS, Modality, modality_of
from interleaf.structure.context import contextual_header, item_context
from interleaf.structure.references import label_line
from interleaf.structure.tables import TablePart, link_table_parts


def text_key(text: str, model: str) -> str:
    """Embeddings are keyed by what was encoded and by whom: a changed quote or model re-encodes."""
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()[:24]


@dataclass
class QuoteCorpus:
    quote_ids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    page_idx: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # indexed text
    match_texts: list[list[str]] = field(default_factory=list)  # what evidence needles are sought in
    img_paths: list[str | None] = field(default_factory=list)
    section_ids: list[str | None] = field(default_factory=list)  # the quote's `sections` row
    label_lines: list[str | None] = field(default_factory=list)  # "Table 2-2 ...": what names it as an item

    def __len__(self) -> int:
        columns = self.__dict__.get("_columns")
        return columns.num_rows if columns is not None else len(self.quote_ids)

    # Pickled as Arrow columns, whose buffers a snapshot maps (interleaf/retrieve/snapshot.py); a
    # restored corpus decodes a column into its list when the column is first read, so a load
    # decodes nothing and a question decodes what it reads (the evidence texts only an evaluation).
    def __reduce__(self) -> tuple[Any, ...]:
        columns = self.__dict__.get("_columns")
        if columns is None or any(name in self.__dict__ for name in self.__dataclass_fields__):
            n = len(self.quote_ids)
            # a corpus built without structure has no section ids or label lines: None for each quote
            values = {name: getattr(self, name) or [None] * n for name in COLUMN_TYPES}
            columns = pa.table({name: pa.array(values[name], type=t) for name, t in COLUMN_TYPES.items()})
        return (_restored_corpus, (columns,))

    def __getattr__(self, name: str) -> Any:
        # only called when the attribute is missing: a restored corpus's column, not decoded yet
        columns = self.__dict__.get("_columns")
        if columns is None or name not in COLUMN_TYPES:
            raise AttributeError(name)
        self.__dict__[name] = columns.column(name).to_pylist()
        return self.__dict__[name]

    @property
    def modalities(self) -> list[Modality]:
        return [modality_of(k) for k in self.kinds]

    def subset(self, keep: list[int]) -> QuoteCorpus:
        return QuoteCorpus(*([getattr(self, f)[i] for i in keep] for f in self.__dataclass_fields__))


COLUMN_TYPES: dict[str, pa.DataType] = {
    "quote_ids": pa.string(),
    "doc_ids": pa.string(),
    "page_idx": pa.int32(),
    "kinds": pa.string(),
    "texts": pa.large_string(),
    "match_texts": pa.large_list(pa.large_string()),
    "img_paths": pa.string(),
    "section_ids": pa.string(),
    "label_lines": pa.string(),
}
assert set(COLUMN_TYPES) == set(QuoteCorpus.__dataclass_fields__), "a QuoteCorpus field has no column type"


def _restored_corpus(columns: pa.Table) -> QuoteCorpus:
    corpus = QuoteCorpus.__new__(QuoteCorpus)
    corpus.__dict__["_columns"] = columns
    return corpus


def _described(quote_texts: pa.Table | None) -> dict[str, list[str]]:
    if quote_texts is None or quote_texts.num_rows == 0:
        return {}
    cols = [c for c in ("ocr_text", "table_md", "vlm_text") if c in quote_texts.column_names]
    out: dict[str, list[str]] = {}
    for row in quote_texts.select(["quote_id", *cols]).to_pylist():
        texts = [row[c] for c in cols if row[c]]
        out.setdefault(row["quote_id"], []).extend(texts)
    return out


def _table_md(quote_texts: pa.Table | None) -> dict[str, str]:
    if quote_texts is None or "table_md" not in quote_texts.column_names:
        return {}
    rows = quote_texts.select(["quote_id", "table_md"]).to_pylist()
    return {r["quote_id"]: r["table_md"] for r in rows if r["table_md"]}


def _table_parts(rows: list[dict], table_md: dict[str, str]) -> dict[str, TablePart]:
    """Each document's tables continued across pages, linked (interleaf.structure.tables)."""
    by_doc: dict[str, list[dict]] = {}
    for r in rows:
        by_doc.setdefault(r["doc_id"], []).append(r)
    section_of = {r["quote_id"]: r["section_id"] for r in rows}
    parts: dict[str, TablePart] = {}
    for doc_rows in by_doc.values():
        parts.update(link_table_parts(doc_rows, section_of, table_md))
    return parts


def _figure_caption(kept: list[dict], i: int, reach: int = 3) -> list[str]:
    """The caption of the nearest image quote within `reach` quotes on the same page, if any."""
    r = kept[i]
    for d in range(1, reach + 1):
        for j in (i - d, i + d):
            if 0 <= j < len(kept):
                n = kept[j]
                same_page = n["doc_id"] == r["doc_id"] and n["page_idx"] == r["page_idx"]
                if same_page and modality_of(n["kind"]) == "image" and n["caption"]:
                    return [n["caption"][:300]]
    return []


def build_corpus(
    quotes: pa.Table,
    documents: pa.Table,
    quote_texts: pa.Table | None,
    fields: TextFields,
    skip_kinds: list[str],
) -> QuoteCorpus:
    """Pure: warehouse rows -> indexed texts, in document reading order."""
    titles = {r["doc_id"]: r["title"] or r["name"] for r in documents.select(["doc_id", "title", "name"]).to_pylist()}
    described = _described(quote_texts)
    columns = ["quote_id", "doc_id", "page_idx", "layout_idx", "kind", "text", "caption", "img_path", "furniture"]
    rows = quotes.select([*columns, "section_id", "section_path"]).to_pylist()
    rows.sort(key=lambda r: (r["doc_id"], r["page_idx"], r["layout_idx"]))
    parts = _table_parts(rows, _table_md(quote_texts)) if fields.table_context else {}
    by_path = fields.section and fields.section_source == "path"
    opening: dict[str, str] = {}  # section_id -> its first quote in reading order (its heading, mostly)
    for r in rows:
        opening.setdefault(r["section_id"], r["quote_id"])
    corpus = QuoteCorpus()
    section: dict[str, str] = {}
    kept: list[dict] = []
    for r in rows:
        if r["kind"] in HEADING_KINDS and r["text"].strip():
            section[r["doc_id"]] = r["text"].strip()[:200]
        if r["furniture"] or r["kind"] in skip_kinds:
            continue
        r["_section"] = section.get(r["doc_id"], "")
        kept.append(r)
    for i, r in enumerate(kept):
        extra = described.get(r["quote_id"], []) if fields.described else []
        part = parts.get(r["quote_id"])
        if fields.caption and part is not None:
            body = item_context(r["caption"], part)
        else:
            body = [r["caption"] or ""] if fields.caption and r["caption"] else []
        body.append(r["text"] or "")
        body.extend(extra)
        if fields.figure_context and modality_of(r["kind"]) == "text" and len((r["text"] or "").split()) <= 16:
            body.extend(_figure_caption(kept, i))
        if fields.neighbours:
            for j in range(max(0, i - fields.neighbours), min(len(kept), i + fields.neighbours + 1)):
                n = kept[j]
                if j != i and n["doc_id"] == r["doc_id"] and n["page_idx"] == r["page_idx"]:
                    body.append((n["text"] or "")[:300])
        head = []
        title = titles.get(r["doc_id"]) if fields.doc_title else None
        if by_path:
            opens = opening.get(r["section_id"]) == r["quote_id"]
            own = r["text"] or ""
            head.append(contextual_header(title, r["section_path"], own, fields.section_levels, opens_section=opens))
        else:
            head.append(title or "")
            if fields.section and r["_section"] and r["_section"] != r["text"].strip()[:200]:
                head.append(r["_section"])
        text = " | ".join(h for h in head if h)
        text = (text + "\n" if text else "") + "\n".join(t for t in body if t.strip())
        corpus.quote_ids.append(r["quote_id"])
        corpus.doc_ids.append(r["doc_id"])
        corpus.page_idx.append(r["page_idx"])
        corpus.kinds.append(r["kind"])
        corpus.texts.append(text[: fields.max_chars])
        corpus.match_texts.append([r["text"], r["caption"], *described.get(r["quote_id"], [])])
        corpus.img_paths.append(r["img_path"])
        corpus.section_ids.append(r["section_id"])
        corpus.label_lines.append(label_line(r["kind"], r["caption"], r["text"]))
    return corpus
