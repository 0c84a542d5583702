"""MinerU 2.x/3.x content lists as a parse backend (`parse.backend: content_list`).

The ingest still walks PDFs: a document is its PDF (its id is the PDF's hash, page sizes and any
missing crop come from it), and its content is read from the `<name>_content_list.json` MinerU
wrote for it, found at any depth under `parse.content_list.folder` (MinerU's own layout,
`<out>/<name>/auto/<name>_content_list.json` with `images/` beside it, works as it is). A PDF with
no content list there, or with two, is rejected with the reason.

The content lists are part of the parse's fingerprint (a digest of every `*_content_list.json`
under the folder), so editing or replacing one re-parses instead of serving the stored quotes;
MinerU names its image files by their content hash, so a new image comes with a new content list.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from interleaf.errors import ConfigError, DocumentError
from interleaf.parse.config import ContentListConfig
from interleaf.parse.facts import DocumentFacts
from interleaf.parse.mineru.content_list import read_content_list
from interleaf.parse.protocol import ParsedDocument
from interleaf.stage import PageMap

SUFFIX = "_content_list.json"


class ContentListParser:
    name = "content_list"

    def __init__(self, config: ContentListConfig) -> None:
        if config.folder is None:
            raise ConfigError(
                "parse.backend=content_list needs parse.content_list.folder: the folder holding MinerU's "
                f"<name>{SUFFIX} files (and their images) for the PDFs ingested"
            )
        self.folder = Path(config.folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise ConfigError(f"parse.content_list.folder {config.folder!r} is not a folder")
        self.config = config
        self._files: dict[str, list[Path]] | None = None
        self._digest: str | None = None

    def files(self) -> dict[str, list[Path]]:
        """Content-list file name -> every path holding one of that name, in path order."""
        if self._files is None:
            found: dict[str, list[Path]] = {}
            for path in sorted(self.folder.rglob(f"*{SUFFIX}")):
                if path.is_file():
                    found.setdefault(path.name, []).append(path)
            self._files = found
        return self._files

    def digest(self) -> str:
        if self._digest is None:
            h = hashlib.sha256()
            for paths in self.files().values():
                for path in paths:
                    h.update(str(path.relative_to(self.folder)).encode() + b"\0" + path.read_bytes() + b"\0")
            self._digest = h.hexdigest()[:16]
        return self._digest

    def fingerprint_config(self) -> dict[str, Any]:
        return {"crop_dpi": self.config.crop_dpi, "folder": str(self.folder), "content_lists": self.digest()}

    def content_list_for(self, name: str) -> Path:
        wanted = Path(name).stem + SUFFIX
        paths = self.files().get(wanted, [])
        if not paths:
            raise DocumentError(name, f"no {wanted} under {self.folder} (parse.content_list.folder)")
        if len(paths) > 1:
            listed = ", ".join(str(p.relative_to(self.folder)) for p in paths)
            raise DocumentError(name, f"{len(paths)} files named {wanted} under {self.folder} ({listed}): keep one")
        return paths[0]

    def parse(
        self, pdf: bytes, name: str, page_map: PageMap = map, facts: DocumentFacts | None = None
    ) -> ParsedDocument:
        # no page work worth spreading: the content list is read once, missing crops are rare; the
        # PDF is opened here anyway, so `facts` are not needed (parse reads the outline itself)
        return read_content_list(self.content_list_for(name), pdf, crop_dpi=self.config.crop_dpi)
