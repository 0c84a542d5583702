"""Every warehouse table's Arrow schema, declared once.

`check(table_name, table)` is called on every write; a table that does not match its
declared schema never reaches disk.
"""

from __future__ import annotations

import pyarrow as pa

from interleaf.errors import SchemaError

BBOX = pa.list_(pa.float32(), 4)
LINE_BREAK_HYPHENS = pa.list_(
    pa.struct(
        [
            pa.field("column", pa.string(), nullable=False),
            pa.field("word", pa.string(), nullable=False),
            pa.field("hyphen_kept", pa.bool_(), nullable=False),
        ]
    )
)

DOCUMENTS = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),  # SHA-256 of the file's bytes
        pa.field("name", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("pages", pa.int32(), nullable=False),
        pa.field("bytes", pa.int64(), nullable=False),
        pa.field("title", pa.string()),
    ]
)

PAGES = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("page_idx", pa.int32(), nullable=False),  # 0-based
        pa.field("width", pa.float32(), nullable=False),  # PDF points
        pa.field("height", pa.float32(), nullable=False),
        pa.field("rotation", pa.int16(), nullable=False),
        pa.field("has_text_layer", pa.bool_(), nullable=False),
        pa.field("ocr_used", pa.bool_(), nullable=False),
        pa.field("n_quotes", pa.int32(), nullable=False),
    ]
)

QUOTES = pa.schema(
    [
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("page_idx", pa.int32(), nullable=False),
        pa.field("layout_idx", pa.int32(), nullable=False),  # reading order within the page
        # text, title, equation, table, figure, header, footer, reference, caption, list, code
        pa.field("kind", pa.string(), nullable=False),
        pa.field("bbox", BBOX, nullable=False),  # x0, y0, x1, y1 in PDF points, top-left origin
        pa.field("text", pa.string(), nullable=False),
        pa.field("text_source", pa.string(), nullable=False),  # text_layer, ocr, mineru, none
        # words printed across a line break with a hyphen, as `text` or `caption` (`column`) now
        # holds them on one line: joined ("information"), or hyphen kept ("multi-modal", `hyphen_kept`)
        # by the document's own usage (interleaf/text/hyphens.py); [] when none
        pa.field("line_break_hyphens", LINE_BREAK_HYPHENS),
        pa.field("caption", pa.string()),
        pa.field("footnote", pa.string()),
        pa.field("html", pa.string()),  # table body as HTML, where the backend gives one
        pa.field("img_path", pa.string()),  # relative to the warehouse root
        pa.field("furniture", pa.bool_(), nullable=False),  # page header / footer / page number
        pa.field("backend", pa.string(), nullable=False),
        pa.field("score", pa.float32()),
        pa.field("section_id", pa.string()),  # the `sections` row the quote sits in (interleaf.structure)
        pa.field("section_path", pa.string()),  # its headings, root to leaf, joined by " > "
    ]
)

# parse stage, interleaf.structure: each document's section tree (PDF outline, numbered headings,
# running headers), one row per section
SECTIONS = pa.schema(
    [
        pa.field("section_id", pa.string(), nullable=False),  # <doc_id[:16]>-s<ordinal>; s0000 = the document
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("ordinal", pa.int32(), nullable=False),  # document order
        pa.field("level", pa.int32(), nullable=False),  # 0 = the document, 1 = top headings
        pa.field("parent_id", pa.string()),
        pa.field("label", pa.string()),  # "Exhibit 7.4.12-14", "7.4.12.6", "Chapter 12"; null when unnumbered
        pa.field("number", pa.string()),  # the label's comparable number: "7.4.12-14"
        pa.field("title", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),  # root to this section, joined by " > "
        pa.field("page_start", pa.int32(), nullable=False),  # 0-based
        pa.field("page_end", pa.int32(), nullable=False),
        pa.field("first_quote_id", pa.string()),
        pa.field("n_quotes", pa.int32(), nullable=False),
        pa.field("source", pa.string(), nullable=False),  # document, outline, heading, running_header
    ]
)

REJECTS = pa.schema(
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("doc_id", pa.string()),
        pa.field("quote_id", pa.string()),
        pa.field("path", pa.string()),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("fingerprint", pa.string(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
)

RUNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("flow", pa.string(), nullable=False),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("fingerprint", pa.string(), nullable=False),
        pa.field("config_json", pa.string(), nullable=False),
        pa.field("code_version", pa.string(), nullable=False),
        pa.field("inputs", pa.list_(pa.string()), nullable=False),
        pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("ended_at", pa.timestamp("us", tz="UTC")),
        pa.field("status", pa.string(), nullable=False),  # running, ok, cached, rejected, failed, interrupted
        pa.field("rows", pa.int64(), nullable=False),
        pa.field("error", pa.string()),
        # the process that wrote the row: a `running` row whose process is gone is closed as
        # `interrupted` (parts written before these columns existed read them as null)
        pa.field("pid", pa.int64()),
        pa.field("host", pa.string()),
    ]
)

# parse stage, its pages as their ranges complete (interleaf/parse/resume.py): one row per page, what
# the parser gave before the whole-document steps. A checkpoint, not a view: an interrupted parse
# resumes at the first range missing here, and a document's rows go once its parse commits.
# Floats are float64 so that a resumed parse stores exactly what an uninterrupted one does.
PAGE_RESULT_QUOTE = pa.struct(
    [
        pa.field("kind", pa.string(), nullable=False),
        pa.field("bbox", pa.list_(pa.float64(), 4), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("text_source", pa.string(), nullable=False),
        pa.field("caption", pa.string()),
        pa.field("footnote", pa.string()),
        pa.field("html", pa.string()),
        pa.field("furniture", pa.bool_(), nullable=False),
        pa.field("score", pa.float64()),
        pa.field("png", pa.binary()),  # the crop, written as a file when the document commits
    ]
)
PAGE_RESULTS = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("page_idx", pa.int32(), nullable=False),
        pa.field("rejected", pa.string()),  # why the page was rejected; the page columns are then null
        pa.field("width", pa.float64()),
        pa.field("height", pa.float64()),
        pa.field("rotation", pa.int16()),
        pa.field("has_text_layer", pa.bool_()),
        pa.field("ocr_used", pa.bool_()),
        pa.field("quotes", pa.list_(PAGE_RESULT_QUOTE), nullable=False),  # in reading order
    ]
)

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "pages": PAGES,
    "quotes": QUOTES,
    "sections": SECTIONS,
    "rejects": REJECTS,
    "runs": RUNS,
    "page_results": PAGE_RESULTS,
}


def schema_of(name: str) -> pa.Schema:
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(name, f"no schema is declared for table {name!r}") from None


def check(name: str, table: pa.Table) -> pa.Table:
    """Return `table` cast to the declared schema, or raise SchemaError saying what differs."""
    schema = schema_of(name)
    got = table.schema
    missing = [f.name for f in schema if f.name not in got.names]
    extra = [n for n in got.names if n not in schema.names]
    if missing or extra:
        raise SchemaError(name, f"columns differ: missing {missing}, unexpected {extra}")
    table = table.select(schema.names)
    for field in schema:
        column = table.column(field.name)
        if not field.nullable and column.null_count:
            raise SchemaError(name, f"column {field.name!r} has {column.null_count} nulls")
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(name, f"cannot cast to the declared schema: {exc}") from exc


def empty(name: str) -> pa.Table:
    return schema_of(name).empty_table()


# -- retrieval (issue 4): index, expand, retrieve, eval -----------------------------------------

INDEX_TEXTS = pa.schema(
    [
        pa.field("retriever", pa.string(), nullable=False),
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),  # hash of the indexed text
        pa.field("text", pa.string(), nullable=False),
    ]
)

# Dimensions differ per model, so the vector is a list with its `dim` beside it (one schema for
# every model); readers reshape the flat values into a fixed (n, dim) matrix.
QUOTE_EMBEDDINGS = pa.schema(
    [
        pa.field("retriever", pa.string(), nullable=False),
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),  # hash of encoded text (or image) + model
        pa.field("model", pa.string(), nullable=False),
        pa.field("dim", pa.int32(), nullable=False),
        pa.field("vector", pa.list_(pa.float32()), nullable=False),
    ]
)

# -- query stages (answer flow): one part per question set, under the stage's fingerprint -------

QUESTIONS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),  # hash of the question set's content
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("doc_name", pa.string()),  # the document a doc-scoped question is about (documents.name)
        # every document it is asked about, resolved (interleaf/scope.py); null: the whole corpus
        pa.field("doc_ids", pa.list_(pa.string())),
        pa.field("answer", pa.string()),  # gold short answer, when the set has one
        pa.field("evidence_json", pa.string()),  # gold evidence [{page, modality, needle}], when given
        pa.field("question_type", pa.string()),
        # for judging answers (qa_dev_answers.jsonl); null where the file does not say
        pa.field("must_include", pa.list_(pa.string())),  # strings a correct answer holds
        pa.field("answerable", pa.bool_()),  # false: the right answer is "the documents do not say"
        pa.field("cross_page", pa.bool_()),  # the answer needs more than one page
        # MMLongBench-Doc's gold (interleaf/questions/mmlongbench.py): how its short answer is scored
        # (Int, Float, Str, List, None) and the kind of document; null for other question sets
        pa.field("answer_format", pa.string()),
        pa.field("doc_type", pa.string()),
        pa.field("context", pa.string()),  # a chat's earlier turns (the server): one more clause for expansion
        pa.field("source", pa.string(), nullable=False),  # the question file, or "ask"
    ]
)

CLAUSES = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("clause_id", pa.int32(), nullable=False),  # 0 is the question itself
        pa.field("text", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # question, part, keywords, reference, llm
        pa.field("weight", pa.float32(), nullable=False),
        pa.field("expander", pa.string(), nullable=False),  # the backend that wrote it: rules, llm, none
    ]
)

HITS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("clause_id", pa.int32(), nullable=False),  # `asked_clauses`: every clause retrieve asked
        pa.field("retriever", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),  # doc, corpus
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),  # 1-based
        pa.field("score", pa.float32(), nullable=False),
    ]
)

# retrieve stage: every clause asked, under the ids its hits use: expand's clauses, then the PRF clause
# and the question asked within each section it names (kind "scope:<the words that name it>")
ASKED_CLAUSES = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),  # doc, corpus
        pa.field("clause_id", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("weight", pa.float32(), nullable=False),
        pa.field("n_quotes", pa.int32(), nullable=False),  # quotes it was asked among
    ]
)

CONTEXTS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),
        pa.field("budget", pa.int32(), nullable=False),  # context size: 5, 10, 15, 20
        pa.field("position", pa.int32(), nullable=False),  # 1-based
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("page_idx", pa.int32(), nullable=False),
        pa.field("modality", pa.string(), nullable=False),  # text, image
        pa.field("score", pa.float32(), nullable=False),  # fused (or reranked) score
    ]
)

EVAL_EVIDENCE = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("evidence_idx", pa.int32(), nullable=False),
        pa.field("modality", pa.string(), nullable=False),  # text, image
        pa.field("page", pa.int32(), nullable=False),  # 1-based, as in the question file
        pa.field("needle", pa.string(), nullable=False),
        pa.field("matching_quotes", pa.int32(), nullable=False),  # 0: the evidence was never parsed into a quote
        pa.field("budget", pa.int32(), nullable=False),
        pa.field("rank", pa.int32()),  # 1-based position of the first matching quote in the context; null: missed
    ]
)

EVAL_RESULTS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),  # full, or an ablation's name
        pa.field("scope", pa.string(), nullable=False),
        pa.field("modality", pa.string(), nullable=False),  # text, image, all
        pa.field("k", pa.int32(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
        pa.field("n_evidence", pa.int32(), nullable=False),
        pa.field("qa_file", pa.string(), nullable=False),
    ]
)

TABLES.update(
    {
        "index_texts": INDEX_TEXTS,
        "quote_embeddings": QUOTE_EMBEDDINGS,
        "questions": QUESTIONS,
        "clauses": CLAUSES,
        "hits": HITS,
        "asked_clauses": ASKED_CLAUSES,
        "contexts": CONTEXTS,
        "eval_evidence": EVAL_EVIDENCE,
        "eval_results": EVAL_RESULTS,
    }
)

# describe stage (issue 3): each image quote's text forms beside its image, MMDocRAG §2.1.
QUOTE_TEXTS = pa.schema(
    [
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("page_idx", pa.int32(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # figure, table, equation
        pa.field("png_sha256", pa.string(), nullable=False),  # the crop's bytes: the cache key's root
        # crop + reading + describer config; null when the reading was lost in its worker (a reject
        # says so): nothing was read, so nothing is cached under a key
        pa.field("content_key", pa.string()),
        pa.field("ocr_text", pa.string()),  # lines in reading order
        pa.field("ocr_conf", pa.float32()),  # mean line confidence; 1.0 for the text layer
        pa.field("ocr_source", pa.string()),  # text_layer, rapidocr, paddleocr
        pa.field("table_md", pa.string()),  # tables only: Markdown rows and columns
        pa.field("table_source", pa.string()),  # text_layer, rapidocr, paddleocr
        pa.field("vlm_text", pa.string()),  # the description ("VLM-text")
        pa.field("vlm_sources", pa.string()),  # what it was built from: image, caption, ocr_text, ...
        pa.field("describer", pa.string(), nullable=False),  # offline, transformers, openai
        pa.field("model", pa.string()),
        pa.field("prompt_hash", pa.string()),
    ]
)
TABLES["quote_texts"] = QUOTE_TEXTS

# retrieve stage, LMM filter (dochaystack-vrag §4): one row per image quote a VLM was asked about.
IMAGE_VERDICTS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),  # doc, corpus
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("keep", pa.bool_()),  # the answer: yes / no; null when the call failed or was unreadable
        pa.field("p_yes", pa.float32()),  # transformers: P(yes) over the yes/no answer tokens
        pa.field("backend", pa.string(), nullable=False),  # transformers, openai
        pa.field("model", pa.string()),
        pa.field("prompt_hash", pa.string(), nullable=False),
        pa.field("error", pa.string()),
    ]
)
TABLES["image_verdicts"] = IMAGE_VERDICTS


# generate stage (MMDocRAG §2.1, §3): one answer per question, every citation checked.
ANSWERS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("answer_md", pa.string(), nullable=False),  # citations repaired, invalid ones removed
        # the value, name or list asked for, or "Not answerable" (what MMLongBench-Doc scores); null
        # where the generator gave none
        pa.field("short_answer", pa.string()),
        pa.field("raw_md", pa.string(), nullable=False),  # as the generator wrote it (reasoning stripped)
        pa.field("generator", pa.string(), nullable=False),  # offline, openai, transformers
        pa.field("model", pa.string()),
        pa.field("input_mode", pa.string(), nullable=False),  # text, multimodal
        pa.field("prompt_hash", pa.string()),  # the prompts rendered, joined
        pa.field("context_quotes", pa.int32(), nullable=False),
        pa.field("words", pa.int32(), nullable=False),
        pa.field("invalid_citations", pa.int32(), nullable=False),  # cited quotes not in the context, dropped
        pa.field("repaired_citations", pa.int32(), nullable=False),
        pa.field("tokens_in", pa.int32(), nullable=False),
        pa.field("tokens_out", pa.int32(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),  # when it was generated
        pa.field("error", pa.string()),
        # "the documents do not say": false when the generator abstained (or every part was missing)
        pa.field("answerable", pa.bool_(), nullable=False),
        pa.field("abstain_reason", pa.string()),  # why it abstained: the anchor no quote covers, ...
        # relevance beside support: the answer addresses the question (each part answered or said missing)
        pa.field("addresses_question", pa.bool_(), nullable=False),
        pa.field("relevance_reason", pa.string(), nullable=False),  # per part: answered / said missing / ...
    ]
)

CITATIONS = pa.schema(
    [
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("question_id", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),
        pa.field("sentence_idx", pa.int32(), nullable=False),
        pa.field("sentence", pa.string(), nullable=False),
        pa.field("quote_id", pa.string(), nullable=False),
        pa.field("modality", pa.string(), nullable=False),  # text, image
        pa.field("label", pa.string(), nullable=False),  # [3] or image2, as numbered in the context
        pa.field("supported", pa.bool_(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)
# evaluate stage: every metric of the papers, overall and by breakdown (one row per value).
EVAL_METRICS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),  # the run that computed it: `eval --compare A B`
        pa.field("qset_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),  # doc, corpus, fixed (MMDocRAG's given contexts)
        pa.field("metric", pa.string(), nullable=False),  # quote_f1, bleu, judge_fluency, recall@10, ...
        pa.field("breakdown", pa.string(), nullable=False),  # all, question_type, page_span, retriever, position, ...
        pa.field("group_name", pa.string(), nullable=False),  # the group within the breakdown
        pa.field("value", pa.float64()),  # null: not computed (no judge configured, no data)
        pa.field("n", pa.int32(), nullable=False),  # what it averages over: the note says
        pa.field("note", pa.string(), nullable=False),
        # the digest of the code that computed it (interleaf.evaluate.metric_rows.MEASURES): `eval
        # --compare` says when two runs were measured by different code; null: stored before it was kept
        pa.field("measured_by", pa.string()),
    ]
)
TABLES["answers"] = ANSWERS
TABLES["eval_metrics"] = EVAL_METRICS
TABLES["citations"] = CITATIONS


def markdown() -> str:
    """The tables and their columns, as the README lists them."""
    lines = []
    for name, schema in TABLES.items():
        columns = ", ".join(f"`{f.name}` {f.type}" for f in schema)
        lines.append(f"- **`{name}`**: {columns}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
