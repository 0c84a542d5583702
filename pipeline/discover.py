"""Which files an ingest covers: PDFs in the folders named, and files named directly."""

from __future__ import annotations

from pathlib import Path

from interleaf.errors import InterleafError


def discover_documents(paths: list[str]) -> list[str]:
    found: list[str] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found.extend(str(p) for p in sorted(path.rglob("*")) if p.is_file() and p.suffix.lower() == ".pdf")
        elif path.is_file():
            found.append(str(path))
        else:
            raise InterleafError(f"{raw}: no such file or folder")
    seen: set[str] = set()
    unique = []
    for p in found:
        key = str(Path(p).resolve())
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique
