"""Sentence-transformers BERT encoders on ONNX Runtime, without torch.

torch + sentence-transformers cost the ingest process ~900 MB for what is, at inference, a few matrix
products per layer. Here the same model runs on ONNX Runtime: the folder's own `onnx/model.onnx` when
it ships one, else a BERT graph built from `config.json` + `model.safetensors` (bert_graph.py).
Truncation, pooling and normalisation follow the folder's sentence-transformers files, so the vectors
match `SentenceTransformer(folder).encode(...)`.
"""

from __future__ import annotations

import functools
import logging
import tempfile
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from interleaf.built_models import built_model
from interleaf.index.model_folder import OnnxEncoderError, bert_config, read_json
from interleaf.runtime.heap import return_freed_memory

if TYPE_CHECKING:
    import onnx

__all__ = ["OnnxEncoder", "OnnxEncoderError", "quantized"]

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


# what `quantized` makes of the weights, in the int8 vectors' keys: a change re-encodes those only
QUANTIZATION = "per-channel-7bit"


def quantized(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each weight matrix product in int8 (ONNX Runtime's dynamic quantization: the
    activations are quantized per batch, the weights once, per output channel).

    Products of two activations (attention scores, attention x values) stay float32: they have no
    fixed weights to quantize. Per output channel, not per tensor: on the 619-page manual's 5,800
    passages (MiniLM), per tensor moved the vectors to a mean cosine of 0.950 with the float32
    ones (lowest 0.84), per channel to 0.992 (lowest 0.980); both encode in 31 s against 64.5 s.

    Weights in 7 bits (`reduce_range`): a CPU without AVX-512 VNNI multiplies int8 in pairs summed
    into 16 bits, which 8-bit weights can overflow. On such a 2-core AMD EPYC, a tiny random-weight
    BERT's int8 vectors (tests/test_index_onnx.py, 20 DPR passages) had a mean cosine of 0.976 with
    the float32 ones (lowest 0.932) with 8-bit weights, 0.9993 (lowest 0.998) with 7-bit; MiniLM
    on 46 DPR passages 0.9904 (lowest 0.982) and 0.9899 (lowest 0.980)."""
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
            quantize_dynamic(
                model,
                out,
                nodes_to_quantize=with_weight,
                per_channel=True,
                reduce_range=True,
                weight_type=QuantType.QInt8,
            )
        finally:
            root.removeFilter(_no_preprocessing_advice)
        import onnx

        return onnx.load(str(out))


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """quantize_dynamic warns, on the root logger, that static quantization wants a pre-processed
    model: advice for a path this does not take, printed on every int8 load. Only that line is
    dropped (a logger filter), so other threads' records pass while it runs."""
    return not str(record.msg).startswith("Please consider to run pre-processing")


def _pooling_modes(config: dict[str, Any], where: Path) -> list[str]:
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        modes = [mode] if isinstance(mode, str) else list(mode)
    else:
        modes = [name for key, name in _LEGACY_POOLING.items() if config.get(key)]
    if not modes or any(m not in _POOLINGS for m in modes):
        raise OnnxEncoderError(f"{where}: pooling {modes or 'none'} not supported (supported: {', '.join(_POOLINGS)})")
    return modes


MODEL_FILE = "model.onnx"
_BUILDERS = ["interleaf.index.bert_graph"]  # the modules whose source decides a built graph


def _write_graph(model_dir: Path, folder: Path) -> None:
    import onnx

    from interleaf.index.bert_graph import WEIGHTS_FILE, build_bert_graph

    with open(folder / WEIGHTS_FILE, "wb") as weights:
        graph = build_bert_graph(model_dir, weights)
    onnx.save(graph, str(folder / MODEL_FILE))


def _write_int8(shipped: Path, model_dir: Path, folder: Path) -> None:
    import onnx

    from interleaf.index.bert_graph import build_bert_graph

    graph = onnx.load(str(shipped)) if shipped.exists() else build_bert_graph(model_dir)
    onnx.save(quantized(graph), str(folder / MODEL_FILE))


def _graph_sources(model_dir: Path) -> list[Path]:
    return [model_dir / "config.json", model_dir / "model.safetensors"]


def _built_session(model_dir: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    """A session of the graph built from `model_dir` (interleaf/built_models.py: once per machine),
    its weights in a file beside it that ONNX Runtime maps instead of copying them into the process.
    Built in memory and handed over as bytes, the model was held three times over while it loaded:
    as safetensors arrays, in the graph, in its serialized bytes. MiniLM in one process (probe,
    RSS): the load's peak +357 -> +102 MB and 0.50 -> 0.16 s, the same vectors bit for bit. What the
    process holds is the same once it has encoded (+96-109 against +99-111 MB after 30 questions
    or 400 passages): the gain is the load's peak, in the ingest process beside the page workers
    and in `interleaf serve`."""
    build = functools.partial(_write_graph, model_dir)
    with built_model("bert-graph", build, sources=_graph_sources(model_dir), code=_BUILDERS) as folder:
        return ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])


def _int8_session(shipped: Path, model_dir: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    """A session of the model quantized to int8 (`quantized`), from the folder's own ONNX graph or
    the one built for it, kept in the cache as the float32 graph is: nothing is written into a
    read-only site-packages."""
    build = functools.partial(_write_int8, shipped, model_dir)
    sources = [shipped] if shipped.exists() else _graph_sources(model_dir)
    code = [*_BUILDERS, __name__]
    with built_model("bert-int8", build, sources=sources, code=code, packages=("onnx", "onnxruntime")) as folder:
        session = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
    # glibc kept what a build's quantizing freed: the process held 374 MB after loading MiniLM in
    # int8, 198 MB once trimmed, against 233 MB in float32
    return_freed_memory()
    return session


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
            bert_config(self.model_dir)  # a non-BERT folder fails here, before any tokenizer complaint
        chosen = [pooling] if pooling else folder_pooling or [fallback_pooling]
        chosen = [mode.replace("last_token", "lasttoken") for mode in chosen]  # sentence-transformers' spelling
        self.pooling = _pooling_modes({"pooling_mode": chosen}, self.folder)
        st_config = read_json(self.model_dir / "sentence_bert_config.json") or {}
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
        elif precision == "float32":
            self.session = _built_session(self.model_dir, options)
        else:
            self.session = _int8_session(shipped, self.model_dir, options)
        self._inputs = {i.name: _INT_TYPES.get(i.type, np.int64) for i in self.session.get_inputs()}
        outputs = self.session.get_outputs()
        names = [o.name for o in outputs]
        self._output = next((n for n in ("last_hidden_state", "token_embeddings") if n in names), names[0])

    def _modules(self) -> tuple[Path, list[str] | None, bool]:
        """(folder of the transformer, the folder's pooling modes or None, whether it normalises)."""
        modules = read_json(self.folder / "modules.json")
        if modules is None:
            return self.folder, None, False
        model_dir, pooling, normalize = self.folder, None, False
        for module in modules:
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            where = self.folder / module.get("path", "")
            if kind == "Transformer":
                model_dir = where
            elif kind == "Pooling":
                pooling = _pooling_modes(read_json(where / "config.json") or {}, where)
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
        length = int((read_json(self.model_dir / "tokenizer_config.json") or {}).get("model_max_length") or 512)
        length = 512 if length > _HUGE_LENGTH else length
        positions = (read_json(self.model_dir / "config.json") or {}).get("max_position_embeddings")
        return min(length, int(positions)) if positions and positions > 0 else length

    def _tokenizer(self) -> Tokenizer:
        path = self.model_dir / "tokenizer.json"
        if not path.exists():
            raise OnnxEncoderError(f"{self.model_dir}: no tokenizer.json (save the tokenizer with a fast tokenizer)")
        tokenizer = Tokenizer.from_file(str(path))
        # tokenizer.json may carry the export's own fixed padding/truncation (MiniLM's: 128): ours wins
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        pad = (read_json(self.model_dir / "tokenizer_config.json") or {}).get("pad_token", "[PAD]")
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
