"""Every warehouse table's Arrow schema, declared once.

`check(table_name, table)` is called on every write; a table that does not match its
declared schema never reaches disk.
"""

from __future__ import annotations

import pyarrow as pa

from interleaf.errors import SchemaError

BBOX = pa.list_(pa.float32(), 4)

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
        pa.field("caption", pa.string()),
        pa.field("footnote", pa.string()),
        pa.field("html", pa.string()),  # table body as HTML, where the backend gives one
        pa.field("img_path", pa.string()),  # relative to the warehouse root
        pa.field("furniture", pa.bool_(), nullable=False),  # page header / footer / page number
        pa.field("backend", pa.string(), nullable=False),
        pa.field("score", pa.float32()),
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
        pa.field("status", pa.string(), nullable=False),  # running, ok, cached, rejected, failed
        pa.field("rows", pa.int64(), nullable=False),
        pa.field("error", pa.string()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "pages": PAGES,
    "quotes": QUOTES,
    "rejects": REJECTS,
    "runs": RUNS,
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
