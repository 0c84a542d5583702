"""A BERT encoder's forward pass as an ONNX graph, built from a transformers folder's `config.json` and
`model.safetensors` (interleaf/index/onnx_encoder.py runs it).

The weights can go to a file beside the graph instead of into it, one tensor at a time. ONNX Runtime
then maps that file instead of parsing a serialized copy, so the process that loads the model (the
ingest process, `interleaf serve`) does not hold the weights in the graph and in its bytes as well
while it loads (the figures: `_built_session` in onnx_encoder.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from interleaf.index.model_folder import OnnxEncoderError, bert_config

OPSET = 17  # the first opset with a single LayerNormalization op
WEIGHTS_FILE = "weights.bin"  # beside the model, as ONNX's external data names it
_EXTERNAL_MIN_BYTES = 1024  # scalars and shape constants stay in the graph


class _Graph:
    """Just enough of a graph builder: each node gets a fresh output name, weights become initializers,
    written to `weights` (a file beside the model) when one is given, else held in the model itself."""

    def __init__(self, weights: BinaryIO | None = None) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: set[str] = set()
        self._count = 0
        self._weights = weights

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def const(self, name: str, value: np.ndarray) -> str:
        if name in self._names:  # a shared scalar asked for again by every layer
            return name
        self._names.add(name)
        value = np.ascontiguousarray(value)
        if self._weights is None or value.nbytes < _EXTERNAL_MIN_BYTES:
            self.initializers.append(numpy_helper.from_array(value, name))
            return name
        offset = self._weights.tell()
        self._weights.write(value.data)
        tensor = onnx.TensorProto(name=name, dims=value.shape, data_type=helper.np_dtype_to_tensor_dtype(value.dtype))
        tensor.data_location = TensorProto.EXTERNAL
        for key, text in (("location", WEIGHTS_FILE), ("offset", str(offset)), ("length", str(value.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, text
        self.initializers.append(tensor)
        return name


def build_bert_graph(model_dir: str | Path, weights_file: BinaryIO | None = None) -> onnx.ModelProto:
    """The HF BertModel forward pass (no pooler) as an ONNX model whose output is `last_hidden_state`.
    With `weights_file` (opened for writing as `WEIGHTS_FILE` in the folder the model will be saved
    to), the weights go there and the model only points at them."""
    from safetensors import safe_open

    model_dir = Path(model_dir)
    cfg = bert_config(model_dir)
    if not (model_dir / "model.safetensors").exists():
        raise OnnxEncoderError(f"{model_dir}: no model.safetensors to build the ONNX graph from")
    with safe_open(str(model_dir / "model.safetensors"), framework="np") as tensors:
        return _bert_graph(model_dir, cfg, tensors, _Graph(weights_file))


def _hf_name(key: str) -> str:
    """A checkpoint's tensor name as BertModel's (BertForMaskedLM & co. prefix `bert.`; old ones say gamma/beta)."""
    return (
        key.removeprefix("bert.")
        .replace("LayerNorm.gamma", "LayerNorm.weight")
        .replace("LayerNorm.beta", "LayerNorm.bias")
    )


def _bert_graph(model_dir: Path, cfg: dict[str, Any], tensors: Any, g: _Graph) -> onnx.ModelProto:
    names: list[str] = tensors.keys()  # safe_open has no iteration of its own
    stored = {_hf_name(k): k for k in names}
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    eps, act = float(cfg.get("layer_norm_eps", 1e-12)), str(cfg.get("hidden_act", "gelu"))

    def weight(name: str, transpose: bool = False) -> str:
        if name not in stored:
            raise OnnxEncoderError(f"{model_dir}: model.safetensors has no tensor {name!r}")
        value = tensors.get_tensor(stored[name]).astype(np.float32, copy=False)  # read one at a time
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
