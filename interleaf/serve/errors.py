"""Errors as the API returns them: a status and a message that says what was wrong.

Every error body is `{"error": {"status": 404, "type": "unknown_document", "message": "..."}}`, the
shape OpenAI's clients read (`error.message`), with the status a client can act on.
"""

from __future__ import annotations

from typing import Any

from interleaf.errors import InterleafError, StageError
from interleaf.scope import EmptyQuestion, NoDocumentNamed, RejectedDocument, ScopeError, UnknownDocument
from interleaf.vlm.openai_chat import ModelServerError, ServerUnreachableError


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"status": self.status, "type": self.kind, "message": self.message}}


def backend_down(what: str, detail: str) -> ApiError:
    return ApiError(503, "backend_unavailable", f"{what} failed: {detail}", {"Retry-After": "10"})


# what a stage raises when a model server cannot be reached or answers with an error
_UNREACHABLE = (
    "ConnectError",
    "ConnectTimeout",
    "ReadTimeout",
    "TimeoutException",
    "HTTPStatusError",
    "RemoteProtocolError",
)


def api_error_of(exc: Exception) -> ApiError:
    """The API's answer to an error raised while answering."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, EmptyQuestion):
        return ApiError(422, "empty_question", str(exc))
    if isinstance(exc, UnknownDocument):
        return ApiError(404, "unknown_document", str(exc))
    if isinstance(exc, RejectedDocument):
        return ApiError(404, "rejected_document", str(exc))
    if isinstance(exc, (NoDocumentNamed, ScopeError)):
        return ApiError(422, "bad_scope", str(exc))
    if isinstance(exc, StageError):
        cause = exc.__cause__
        # the model server of a stage (generate, expand, ...): gone, or failing its requests
        if isinstance(cause, ServerUnreachableError | ModelServerError):
            return backend_down(f"stage {exc.stage}'s model server ({cause.base_url})", str(cause))
        if cause is not None and (isinstance(cause, OSError) or type(cause).__name__ in _UNREACHABLE):
            return backend_down(f"stage {exc.stage}", f"{type(cause).__name__}: {cause}")
        return ApiError(500, "stage_failed", str(exc))
    if isinstance(exc, InterleafError):
        # nothing ingested, or an ingest half-way: the corpus cannot be searched right now
        return ApiError(503, "corpus_unavailable", str(exc), {"Retry-After": "5"})
    return ApiError(500, "internal_error", f"{type(exc).__name__}: {exc}")
