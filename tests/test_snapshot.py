"""The index snapshot (interleaf/retrieve/snapshot.py): its arrays are the mapped file's bytes, its
texts are decoded when first read, what it answers is what an index built from the stored rows
answers, and damage anywhere in it is caught before a search."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import IngestedWarehouse
from warehouse import Warehouse

QUESTION = "Which retriever does the DPR paper compare against BM25 in Table 2?"


def _copy(corpus_warehouse: IngestedWarehouse, tmp_path: Path) -> Path:
    root = tmp_path / "wh"
    shutil.copytree(corpus_warehouse.root, root)
    return root


def _open(root: Path) -> object:
    from flows.plans import open_index
    from interleaf.config import Settings

    return open_index(Warehouse(root), Settings())


def _stored(root: Path) -> Path:
    from interleaf.retrieve import snapshot

    found = list((root / snapshot.FOLDER).glob("*.index"))
    assert len(found) == 1, f"the ingest stores one snapshot for its corpus: {found}"
    return found[0]


def test_a_snapshot_maps_its_arrays_decodes_on_first_read_and_answers_as_the_built_index(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    root = _copy(corpus_warehouse, tmp_path)
    _stored(root)
    mapped = _open(root)

    # the load copied no array and decoded no column: the matrix and BM25's scores are read-only
    # views of the file, and the corpus holds its Arrow columns only
    dense = [r for r in mapped.retrievers.values() if r.kind == "dense"]
    bm25 = [r for r in mapped.retrievers.values() if r.kind == "bm25"]
    assert dense and bm25
    for array in [r._matrix for r in dense] + [r._bm25.scores["data"] for r in bm25]:
        assert not array.flags.owndata and not array.flags.writeable
    assert set(mapped.corpus.__dict__) == {"_columns"}
    assert "_derived" in mapped.__dict__ and "scopes" not in mapped.__dict__

    shutil.rmtree(_stored(root).parent)  # the mapping outlives the file's name
    built = _open(root)  # from the stored rows (and stored again)
    assert set(built.corpus.__dict__) != {"_columns"}

    for field in ("quote_ids", "doc_ids", "page_idx", "kinds", "texts", "match_texts", "section_ids", "label_lines"):
        assert getattr(mapped.corpus, field) == getattr(built.corpus, field), field
    assert mapped.position == built.position
    assert mapped.page_of == built.page_of
    assert mapped.sections == built.sections
    asked = mapped.scopes.for_question(QUESTION)
    assert [s.text for s in asked] == [s.text for s in built.scopes.for_question(QUESTION)]
    assert asked, "the question names a table: one scope at least"
    for a, b in zip(asked, built.scopes.for_question(QUESTION), strict=True):
        assert np.array_equal(a.mask, b.mask)
    for name, retriever in mapped.retrievers.items():
        assert np.allclose(retriever.scores([QUESTION]), built.retrievers[name].scores([QUESTION]), atol=1e-5), name


@pytest.mark.parametrize("where", ["the pickle", "the largest array", "the layout line"])
def test_damage_anywhere_in_a_snapshot_is_caught_before_a_search(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path, where: str
) -> None:
    from interleaf.retrieve import snapshot

    root = _copy(corpus_warehouse, tmp_path)
    built = _open(root)  # read from the sound snapshot
    stored = _stored(root)
    data = bytearray(stored.read_bytes())
    head = len(snapshot.MAGIC) + snapshot.DIGEST_CHARS + 1
    layout = json.loads(data[head : data.index(b"\n", head)])
    if where == "the pickle":
        start, length = layout["pickle"]
        at = start + length // 2
    elif where == "the largest array":
        start, length = max(layout["buffers"], key=lambda b: b[1])
        at = start + length // 2
    else:
        at = head + 2
    data[at] ^= 0x10
    stored.write_bytes(bytes(data))

    # read alone, the damaged file gives no index, or one whose check fails: never one said sound
    found = snapshot.load(Warehouse(root), stored.stem)
    assert found is None or not found.ready()

    # asked for by a question: set aside, and the index built again from the stored rows
    again = _open(root)
    assert again.ready()
    assert set(again.corpus.__dict__) != {"_columns"}  # built, not read from the damaged file
    assert again.corpus.quote_ids == built.corpus.quote_ids
    for name, retriever in again.retrievers.items():
        assert np.allclose(retriever.scores([QUESTION]), built.retrievers[name].scores([QUESTION]), atol=1e-5), name
    assert list((root / "_corrupt").rglob("*.index*"))
    assert _stored(root).read_bytes() != bytes(data)  # a sound one stored in its place
