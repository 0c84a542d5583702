"""Domain exceptions. Each carries the id of what it is about, so a log line names it."""

from __future__ import annotations


class InterleafError(Exception):
    """Base of every error Interleaf raises on purpose."""


class SchemaError(InterleafError):
    def __init__(self, table: str, reason: str) -> None:
        super().__init__(f"table {table}: {reason}")
        self.table = table
        self.reason = reason


class ConfigError(InterleafError):
    pass


class DocumentError(InterleafError):
    """A document cannot be processed; `reason` is what the rejects table records."""

    def __init__(self, path: str, reason: str, doc_id: str | None = None) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.doc_id = doc_id

    def __reduce__(self) -> tuple[type, tuple[str, str, str | None]]:
        # raised in a page worker, it is pickled back to the parent: by its arguments, not its message
        return (type(self), (self.path, self.reason, self.doc_id))


class StageError(InterleafError):
    """An unexpected failure inside a stage, tagged with the document or quote it hit."""

    def __init__(self, stage: str, item_id: str, cause: BaseException) -> None:
        super().__init__(f"{stage} failed on {item_id}: {type(cause).__name__}: {cause}")
        self.stage = stage
        self.item_id = item_id


class ReadOnlyQueryError(InterleafError):
    pass


class CatalogError(InterleafError):
    """catalog.duckdb could not be written; the warehouse itself is intact."""


class CorruptPartError(InterleafError):
    """A stored Parquet part is not the file that was written (truncated, bytes changed)."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"corrupt part {path}: {reason}")
        self.path = path
        self.reason = reason


class WarehouseWriteError(InterleafError, OSError):
    """A warehouse file could not be written (a full disk, a quota, a read-only mount). Not one
    document's fault: every write after it would fail the same way, so the command stops and
    publishes nothing. An OSError still (errno kept), for callers that judge by errno."""

    def __init__(self, path: object, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"
