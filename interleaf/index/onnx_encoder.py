"""Sentence-transformers BERT encoders on ONNX Runtime, without torch.

torch + sentence-transformers cost the ingest process ~900 MB for what is, at inference, a few matrix
products per layer. Here the same model runs on ONNX Runtime: the folder's own `onnx/model.onnx` when
it ships one, else a BERT graph built in memory from `config.json` + `model.safetensors`. Truncation,
pooling and normalisation follow the folder's sentence-transformers files, so the vectors match
`SentenceTransformer(folder).encode(...)`.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

from interleaf.heap import return_freed_memory

OPSET = 17  # the first opset with a single LayerNormalization op
_HUGE_LENGTH = 1_000_000  # transformers writes ~1e30 as model_max_length when a tokenizer has no limit
_POOLINGS = ("cls", "mean", "max", "lasttoken")
_LEGACY_POOLING = {  # sentence-transformers < 6 wrote one boolean per mode
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
Precision = Literal["float32", "int8"]
# ONNX Runtime's CPU arena keeps the largest batch's activations for the session's life; the last run
# of an encode hands them back. The 619-page manual's 5,800 passages in one process (MiniLM): held
# after the encode +110 -> +28 MB, the same peak (+133 MB) and time. Shrinking after every run instead
# raised the peak to +290 MB: the chunks it frees fragment malloc, batch after batch.
_ARENA_SHRINKAGE = ort.RunOptions()
_ARENA_SHRINKAGE.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")


class OnnxEncoderError(ValueError):
    """A folder this backend cannot reproduce exactly; the message names the folder and the reason."""


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _bert_config(model_dir: Path) -> dict[str, Any]:
    cfg = _read_json(model_dir / "config.json")
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


class _Graph:
    """Just enough of a graph builder: each node gets a fresh output name, weights become initializers."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: set[str] = set()
        self._count = 0

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def const(self, name: str, value: np.ndarray) -> str:
        if name in self._names:  # a shared scalar asked for again by every layer
            return name
        self._names.add(name)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name


def quantized(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each weight matrix product in int8 (ONNX Runtime's dynamic quantization: the
    activations are quantized per batch, the weights once, per output channel).

    Products of two activations (attention scores, attention x values) stay float32: they have no
    fixed weights to quantize. Per output channel, not per tensor: on the 619-page manual's 5,800
    passages (MiniLM), per tensor moved the vectors to a mean cosine of 0.950 with the float32
    ones (lowest 0.84), per channel to 0.992 (lowest 0.980); both encode in 31 s against 64.5 s."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weights = {init.name for init in model.graph.initializer}
    for k, node in enumerate(model.graph.node):
        node.name = node.name or f"node_{k}"  # quantize_dynamic picks nodes by name
    with_weight = [n.name for n in model.graph.node if n.op_type == "MatMul" and any(i in weights for i in n.input)]
    with tempfile.TemporaryDirectory(prefix="interleaf-int8-") as tmp:
        out = Path(tmp) / "model.onnx"
        root = logging.getLogger()
        root.addFilter(_no_preprocessing_advice)
        try:
            quantize_dynamic(model, out, nodes_to_quantize=with_weight, per_channel=True, weight_type=QuantType.QInt8)
        finally:
            root.removeFilter(_no_preprocessing_advice)
        return onnx.load(str(out))


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """quantize_dynamic warns, on the root logger, that static quantization wants a pre-processed
    model: advice for a path this does not take, printed on every int8 load. Only that line is
    dropped (a logger filter), so other threads' records pass while it runs."""
    return not str(record.msg).startswith("Please consider to run pre-processing")


def build_bert_graph(model_dir: str | Path) -> onnx.ModelProto:
    """The HF BertModel forward pass (no pooler) as an ONNX model whose output is `last_hidden_state`."""
    from safetensors.numpy import load_file

    model_dir = Path(model_dir)
    cfg = _bert_config(model_dir)
    if not (model_dir / "model.safetensors").exists():
        raise OnnxEncoderError(f"{model_dir}: no model.safetensors to build the ONNX graph from")
    weights = {
        k.removeprefix("bert.")
        .replace("LayerNorm.gamma", "LayerNorm.weight")
        .replace("LayerNorm.beta", "LayerNorm.bias"): v
        for k, v in load_file(str(model_dir / "model.safetensors")).items()
    }
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    eps, act = float(cfg.get("layer_norm_eps", 1e-12)), str(cfg.get("hidden_act", "gelu"))
    g = _Graph()

    def weight(name: str, transpose: bool = False) -> str:
        if name not in weights:
            raise OnnxEncoderError(f"{model_dir}: model.safetensors has no tensor {name!r}")
        value = weights.pop(name).astype(np.float32)  # pop: no second copy of the weights stays alive
        return g.const(name, value.T if transpose else value)

    def linear(x: str, prefix: str) -> str:  # torch Linear stores [out, in]; MatMul wants [in, out]
        return g.op("Add", g.op("MatMul", x, weight(f"{prefix}.weight", True)), weight(f"{prefix}.bias"))

    def layer_norm(x: str, prefix: str) -> str:
        return g.op("LayerNormalization", x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias"), axis=-1, epsilon=eps)

    half, one = g.const("half", np.array(0.5, np.float32)), g.const("one", np.array(1.0, np.float32))

    def activation(x: str) -> str:
        if act == "gelu":  # exact erf GELU, as torch.nn.functional.gelu
            inv_sqrt2 = g.const("inv_sqrt2", np.array(1 / math.sqrt(2), np.float32))
            return g.op("Mul", g.op("Mul", x, half), g.op("Add", one, g.op("Erf", g.op("Mul", x, inv_sqrt2))))
        if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
            c, k = (
                g.const("tanh_c", np.array(math.sqrt(2 / math.pi), np.float32)),
                g.const("tanh_k", np.array(0.044715, np.float32)),
            )
            cube = g.op("Mul", k, g.op("Mul", x, g.op("Mul", x, x)))
            return g.op(
                "Mul", g.op("Mul", x, half), g.op("Add", one, g.op("Tanh", g.op("Mul", c, g.op("Add", x, cube))))
            )
        if act == "relu":
            return g.op("Relu", x)
        if act in ("silu", "swish"):
            return g.op("Mul", x, g.op("Sigmoid", x))
        raise OnnxEncoderError(f"{model_dir}: hidden_act {act!r} is not supported")

    # embeddings: word + position (the first S rows of the table) + token type, then LayerNorm
    seq_len = g.op("Shape", "input_ids", start=1, end=2)
    zero = g.const("zero_1d", np.array([0], np.int64))
    positions = g.op("Slice", weight("embeddings.position_embeddings.weight"), zero, seq_len, zero)
    x = g.op("Add", g.op("Gather", weight("embeddings.word_embeddings.weight"), "input_ids"), positions)
    x = g.op("Add", x, g.op("Gather", weight("embeddings.token_type_embeddings.weight"), "token_type_ids"))
    x = layer_norm(x, "embeddings.LayerNorm")
    # padding as an additive bias of the float32 minimum on the attention scores, as transformers does
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", one, mask), g.const("min", np.array(np.finfo(np.float32).min, np.float32)))
    bias = g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2], np.int64)))  # [B, 1, 1, S]
    split = g.const("split_heads", np.array([0, 0, heads, hidden // heads], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1 / math.sqrt(hidden // heads), np.float32))
    for i in range(int(cfg["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        q, k, v = (g.op("Reshape", linear(x, f"{p}.attention.self.{n}"), split) for n in ("query", "key", "value"))
        scores = g.op("MatMul", g.op("Transpose", q, perm=[0, 2, 1, 3]), g.op("Transpose", k, perm=[0, 2, 3, 1]))
        probs = g.op("Softmax", g.op("Add", g.op("Mul", scores, scale), bias), axis=-1)
        context = g.op("MatMul", probs, g.op("Transpose", v, perm=[0, 2, 1, 3]))
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        attended = layer_norm(
            g.op("Add", linear(context, f"{p}.attention.output.dense"), x), f"{p}.attention.output.LayerNorm"
        )
        inner = activation(linear(attended, f"{p}.intermediate.dense"))
        x = layer_norm(g.op("Add", linear(inner, f"{p}.output.dense"), attended), f"{p}.output.LayerNorm")
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ints = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(g.nodes, "bert", ints, [out], initializer=g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="interleaf")


def _pooling_modes(config: dict[str, Any], where: Path) -> list[str]:
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        modes = [mode] if isinstance(mode, str) else list(mode)
    else:
        modes = [name for key, name in _LEGACY_POOLING.items() if config.get(key)]
    if not modes or any(m not in _POOLINGS for m in modes):
        raise OnnxEncoderError(f"{where}: pooling {modes or 'none'} not supported (supported: {', '.join(_POOLINGS)})")
    return modes


class OnnxEncoder:
    """Encode texts with a local sentence-transformers folder on ONNX Runtime.

    `pooling` overrides the folder's pooling; `fallback_pooling` applies when the folder has no
    pooling config (a plain transformers folder, as sentence-transformers would mean-pool it).
    `precision` int8 runs the weight products quantized (`quantized`): about twice as fast on a CPU
    with int8 dot products, and no longer the sentence-transformers vectors exactly.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        pooling: str | None = None,
        fallback_pooling: str = "mean",
        batch_size: int = 32,
        max_batch_tokens: int = 2048,
        threads: int = 2,
        precision: Precision = "float32",
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise OnnxEncoderError(f"{self.folder}: not a folder (the onnx backend takes local paths only)")
        self.batch_size, self.max_batch_tokens = batch_size, max_batch_tokens
        self.model_dir, folder_pooling, self.normalize = self._modules()
        shipped = self.model_dir / "onnx" / "model.onnx"
        self.source = "onnx/model.onnx" if shipped.exists() else "model.safetensors"
        if not shipped.exists():
            _bert_config(self.model_dir)  # a non-BERT folder fails here, before any tokenizer complaint
        chosen = [pooling] if pooling else folder_pooling or [fallback_pooling]
        chosen = [mode.replace("last_token", "lasttoken") for mode in chosen]  # sentence-transformers' spelling
        self.pooling = _pooling_modes({"pooling_mode": chosen}, self.folder)
        st_config = _read_json(self.model_dir / "sentence_bert_config.json") or {}
        self.lowercase = bool(st_config.get("do_lower_case", False))
        self.max_seq_length = self._max_length(st_config)
        self.tokenizer = self._tokenizer()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads  # the default, one per core plus spinning, oversubscribes 2 cores
        options.inter_op_num_threads = 1
        # An ingest encodes beside the page workers' layout and OCR: threads spinning for work take
        # their cores. Measured on 2 cores, MiniLM on 1,670 passages beside two busy processes:
        # 23.0 s without spinning, 25.4 s with; alone, 11.1 s against 10.6 s.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_mem_pattern = False  # planned per input shape; with a new shape every batch it only holds memory
        self.precision = precision
        if shipped.exists() and precision == "float32":
            self.session = ort.InferenceSession(str(shipped), options, providers=["CPUExecutionProvider"])
        else:  # kept in memory: no file to clean up, nothing written into a read-only site-packages
            graph = onnx.load(str(shipped)) if shipped.exists() else build_bert_graph(self.model_dir)
            model_bytes = (quantized(graph) if precision == "int8" else graph).SerializeToString()
            del graph
            self.session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
            # the Python wrapper keeps the bytes (~90 MB for MiniLM) only to rebuild on set_providers
            self.session._model_bytes = None
            del model_bytes
            if precision == "int8":
                # glibc kept what quantizing freed: the process held 374 MB after loading MiniLM in
                # int8, 198 MB once trimmed, against 233 MB in float32
                return_freed_memory()
        self._inputs = {i.name: _INT_TYPES.get(i.type, np.int64) for i in self.session.get_inputs()}
        outputs = self.session.get_outputs()
        names = [o.name for o in outputs]
        self._output = next((n for n in ("last_hidden_state", "token_embeddings") if n in names), names[0])

    def _modules(self) -> tuple[Path, list[str] | None, bool]:
        """(folder of the transformer, the folder's pooling modes or None, whether it normalises)."""
        modules = _read_json(self.folder / "modules.json")
        if modules is None:
            return self.folder, None, False
        model_dir, pooling, normalize = self.folder, None, False
        for module in modules:
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            where = self.folder / module.get("path", "")
            if kind == "Transformer":
                model_dir = where
            elif kind == "Pooling":
                pooling = _pooling_modes(_read_json(where / "config.json") or {}, where)
            elif kind == "Normalize":
                normalize = True
            else:  # a Dense or other head changes the vectors: better an error than silently different ones
                raise OnnxEncoderError(
                    f"{self.folder}: module {module.get('type')} is not supported by the onnx backend"
                )
        return model_dir, pooling, normalize

    def _max_length(self, st_config: dict[str, Any]) -> int:
        if st_config.get("max_seq_length"):
            return int(st_config["max_seq_length"])
        length = int((_read_json(self.model_dir / "tokenizer_config.json") or {}).get("model_max_length") or 512)
        length = 512 if length > _HUGE_LENGTH else length
        positions = (_read_json(self.model_dir / "config.json") or {}).get("max_position_embeddings")
        return min(length, int(positions)) if positions and positions > 0 else length

    def _tokenizer(self) -> Tokenizer:
        path = self.model_dir / "tokenizer.json"
        if not path.exists():
            raise OnnxEncoderError(f"{self.model_dir}: no tokenizer.json (save the tokenizer with a fast tokenizer)")
        tokenizer = Tokenizer.from_file(str(path))
        # tokenizer.json may carry the export's own fixed padding/truncation (MiniLM's: 128): ours wins
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        pad = (_read_json(self.model_dir / "tokenizer_config.json") or {}).get("pad_token", "[PAD]")
        pad = pad.get("content", "[PAD]") if isinstance(pad, dict) else pad
        self.pad_id = tokenizer.token_to_id(pad) or 0
        return tokenizer

    @cached_property
    def dim(self) -> int:
        return int(self.encode([""]).shape[1])

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """float32 vectors [len(texts), dim], in the order of `texts`."""
        size = batch_size or self.batch_size
        if self.lowercase:
            texts = [t.lower() for t in texts]
        tokens = self._token_ids(texts)
        # length-sorted batches pad little; the rows go back to the callers' order through `idx`
        lengths = [len(t[0]) for t in tokens]
        order = np.argsort(lengths, kind="stable")
        out: np.ndarray | None = None
        batches = self._batches(order, lengths, size)
        for number, idx in enumerate(batches):
            batch = [tokens[i] for i in idx]
            width = max(len(t[0]) for t in batch)
            ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
            mask, types = np.zeros_like(ids), np.zeros_like(ids)
            for row, (token_ids, type_ids) in enumerate(batch):
                ids[row, : len(token_ids)], types[row, : len(token_ids)] = token_ids, type_ids
                mask[row, : len(token_ids)] = 1
            arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feeds = {name: arrays[name].astype(dtype) for name, dtype in self._inputs.items() if name in arrays}
            last = number == len(batches) - 1
            run_options = _ARENA_SHRINKAGE if last else None
            hidden = np.asarray(self.session.run([self._output], feeds, run_options)[0], dtype=np.float32)
            pooled = hidden if hidden.ndim == 2 else self._pool(hidden, mask)
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
        if out is None:
            return np.zeros((0, 0), dtype=np.float32)
        if self.normalize:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def _token_ids(self, texts: list[str], chunk: int = 512) -> list[tuple[np.ndarray, np.ndarray]]:
        """(token ids, type ids) of each text. Tokenized `chunk` texts at a time and kept as arrays:
        the tokenizer's Encoding objects also hold each token's string and offsets, 80 MB for the
        619-page manual's 5,800 passages (426,300 tokens) when made all at once."""
        out = []
        for start in range(0, len(texts), chunk):
            for enc in self.tokenizer.encode_batch(texts[start : start + chunk]):
                out.append((np.asarray(enc.ids, dtype=np.int64), np.asarray(enc.type_ids, dtype=np.int64)))
        return out

    def _batches(self, order: np.ndarray, lengths: list[int], size: int) -> list[np.ndarray]:
        """Consecutive runs of `order` (ascending length) of at most `size` texts and `max_batch_tokens`
        padded tokens: attention memory grows with texts x length^2, and the allocator keeps what the
        largest batch took (MiniLM, measured: 8192 tokens per batch leave ~260 MB more than 2048)."""
        batches, start = [], 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < size
                and (end - start + 1) * lengths[order[end]] <= self.max_batch_tokens
            ):
                end += 1
            batches.append(order[start:end])
            start = end
        return batches

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        weights = mask[:, :, None].astype(np.float32)
        parts = []
        for mode in self.pooling:
            if mode == "cls":
                parts.append(hidden[:, 0])
            elif mode == "mean":
                parts.append((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))
            elif mode == "max":
                parts.append(np.where(weights > 0, hidden, np.float32(-1e9)).max(axis=1))
            else:  # lasttoken: right padding, so the last real token sits at length - 1
                parts.append(hidden[np.arange(len(hidden)), mask.sum(axis=1) - 1])
        return np.concatenate(parts, axis=1)
