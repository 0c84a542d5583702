"""What a model folder says of itself: its JSON files, and whether it holds a BERT encoder that
bert_graph.py can build an ONNX graph for. Apart from the builder, which imports `onnx`: a command
loading a graph built before (interleaf/built_models.py) does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class OnnxEncoderError(ValueError):
    """A folder this backend cannot reproduce exactly; the message names the folder and the reason."""


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def bert_config(model_dir: Path) -> dict[str, Any]:
    cfg = read_json(model_dir / "config.json")
    if cfg is None:
        raise OnnxEncoderError(f"{model_dir}: no config.json (and no onnx/model.onnx)")
    archs = cfg.get("architectures") or ["?"]
    # BertForMaskedLM & co. checkpoints carry the same encoder, which is all sentence-transformers loads
    if cfg.get("model_type") != "bert" or not all(a.startswith("Bert") for a in archs):
        raise OnnxEncoderError(
            f"{model_dir}: architecture {'/'.join(archs)} (model_type {cfg.get('model_type')!r}) is not a BERT "
            "encoder; the onnx backend builds graphs only for BertModel (MiniLM, BGE, E5, GTE-base). Ship an "
            "onnx/model.onnx in the folder or use backend sentence-transformers"
        )
    if cfg.get("position_embedding_type", "absolute") != "absolute" or cfg.get("is_decoder"):
        raise OnnxEncoderError(f"{model_dir}: only absolute-position BERT encoders are supported")
    return cfg
