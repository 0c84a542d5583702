"""A copy of the source tree with a toy part added the way the README says to add one: a toy ingest
stage (its package, its table's schema, one line of the stage list) and a toy retriever kind (one
file, one registry line). Commands run from the copy import it: `python -m interleaf.cli` with the
copy as its working directory, and a Ray worker through the command's runtime environment."""

from __future__ import annotations

import shutil
from pathlib import Path

from interleaf.stage import SOURCE_ROOT

PACKAGES = ("interleaf", "pipeline", "flows", "warehouse", "configs", "prompts")

KIND_COUNT_STAGE = '''"""A toy ingest stage: how many quotes of each kind a document holds."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa

from interleaf.stage import StageInput, StageOutput
from warehouse import schemas


class KindCountStage:
    name = "kind_count"
    unit = "document"
    page_work = False
    inputs = ("quotes",)
    outputs = ("kind_counts",)
    upstream = ("parse",)
    sources = ("interleaf.kind_count",)
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def config(self) -> dict[str, Any]:
        return {}

    def prompt_hashes(self) -> list[str]:
        return []

    def version(self) -> dict[str, str]:
        return {}

    def run(self, given: StageInput) -> StageOutput:
        counts = Counter((q["doc_id"], q["kind"]) for q in given.tables["quotes"].to_pylist())
        rows = [{"doc_id": d, "kind": k, "quotes": n} for (d, k), n in sorted(counts.items())]
        return StageOutput({"kind_counts": pa.Table.from_pylist(rows, schema=schemas.TABLES["kind_counts"])})
'''

KIND_COUNT_SCHEMA = (
    '\nTABLES["kind_counts"] = pa.schema([("doc_id", pa.string()), ("kind", pa.string()), ("quotes", pa.int64())])\n'
)

WORD_COUNT_RETRIEVER = '''"""A toy retriever kind: a quote scores the number of distinct query words it holds."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pyarrow as pa

from interleaf.index.corpus import QuoteCorpus, text_key
from interleaf.index.protocol import Encoded
from interleaf.index.retriever_config import TextRetrieverBase
from interleaf.text.tokens import tokenize


class WordCountConfig(TextRetrieverBase):
    kind: Literal["word_count"] = "word_count"


class WordCountRetriever:
    kind = "word_count"
    table = "index_texts"
    lexical = True

    def __init__(self, spec: WordCountConfig) -> None:
        self.spec, self.name = spec, spec.name
        self._words: list[set[str]] = []

    def fingerprint_config(self) -> dict[str, Any]:
        return self.spec.fingerprint_config()

    def applies_to(self, corpus: QuoteCorpus) -> list[int]:
        return list(range(len(corpus)))

    def keys(self, corpus: QuoteCorpus) -> list[str]:
        return [text_key(t, "word_count") for t in corpus.texts]

    def encode(self, corpus: QuoteCorpus, reuse: pa.Table | None, root: str) -> Encoded:
        raise AssertionError("its rows are the index_texts rows the stage writes")

    def load(self, corpus: QuoteCorpus, rows: pa.Table) -> None:
        stored = dict(zip(rows.column("quote_id").to_pylist(), rows.column("text").to_pylist(), strict=True))
        self._words = [set(tokenize(stored.get(q, ""))) for q in corpus.quote_ids]

    def prepare(self) -> None:
        pass

    def scores(self, queries: list[str]) -> np.ndarray:
        out = np.zeros((len(queries), len(self._words)), dtype=np.float32)
        for i, q in enumerate(queries):
            asked = set(tokenize(q))
            out[i] = [len(asked & words) for words in self._words]
        return out
'''


def _insert_after(path: Path, anchor: str, added: str) -> None:
    text = path.read_text()
    assert text.count(anchor) == 1, f"{path}: {anchor!r} is not where the test expects it"
    path.write_text(text.replace(anchor, anchor + added))


def source_copy(into: Path) -> Path:
    """The tree's packages, configs and prompts copied into `into` (a checkout without tests)."""
    for name in PACKAGES:
        shutil.copytree(SOURCE_ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def add_kind_count_stage(tree: Path) -> None:
    """The README's three steps: the stage's package, its table's schema, its line in the stage list
    (with the line importing it)."""
    package = tree / "interleaf" / "kind_count"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "stage.py").write_text(KIND_COUNT_STAGE)
    with (tree / "warehouse" / "schemas.py").open("a") as schemas:
        schemas.write(KIND_COUNT_SCHEMA)
    plans = tree / "flows" / "plans.py"
    imported = "from interleaf.kind_count.stage import KindCountStage\n"
    _insert_after(plans, "from interleaf.index.stage import IndexStage\n", imported)
    _insert_after(plans, "        DescribeStage(settings.describe),\n", "        KindCountStage(),\n")


def add_word_count_retriever(tree: Path) -> None:
    """One file and one registry line."""
    (tree / "interleaf" / "index" / "word_count.py").write_text(WORD_COUNT_RETRIEVER)
    line = (
        '    "word_count": RetrieverKind(\n'
        '        "interleaf.index.word_count:WordCountConfig", "interleaf.index.word_count:WordCountRetriever"\n'
        "    ),\n"
    )
    registry = tree / "interleaf" / "index" / "registry.py"
    text = registry.read_text()
    anchor = "KINDS: dict[str, RetrieverKind] = {\n"
    assert text.count(anchor) == 1
    registry.write_text(text.replace(anchor, anchor + line))
