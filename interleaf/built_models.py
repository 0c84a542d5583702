"""Model files Interleaf derives from the shipped ones, built once per machine and kept.

Two models are not used as shipped: the layout model gets one HardSwish node per activation
(parse/layout/hard_swish.py), and a sentence-transformers folder with safetensors only gets an ONNX
graph built for it (index/bert_graph.py; int8 on demand). Every process used to derive them again:
each page worker and each command that encodes, importing the `onnx` package and building the graph.
Measured on a 2-core EPYC, a one-page ingest: 12.1 s of CPU, of which `onnx` and the builds
were about a third (py-spy: the command, and each of its page workers).

A derived model is a folder in the cache (`$INTERLEAF_CACHE_DIR`, else `$XDG_CACHE_HOME/interleaf`,
else `~/.cache/interleaf`), named by a digest of what it is made from: the source files (path,
size, time of change), the source of the modules that build it, and the versions of the packages
they call. An edit of the builder, a new model file or a new `onnx` builds a new folder; a folder
is never rewritten. It is written under a temporary name and renamed whole, so a process killed
mid-build leaves no folder that looks built (its temporary, named for its process, is removed by a
later build once that process is gone). Where the cache cannot be written (a read-only home), the
model is built into a temporary folder for the process alone, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from interleaf.versions import package_version

CACHE_VARIABLE = "INTERLEAF_CACHE_DIR"
_TEMPORARY = ".building-"  # a build in progress: .building-<name>-<pid>-<random>


def cache_root() -> Path:
    if folder := os.environ.get(CACHE_VARIABLE):
        return Path(folder)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "interleaf"


def _source(module: str) -> bytes:
    """A module's source, found without running it (a builder's module imports `onnx`)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    return Path(spec.origin).read_bytes()


def _key(name: str, sources: Sequence[Path], code: Sequence[str], packages: Sequence[str]) -> str:
    digest = hashlib.sha256(name.encode())
    for path in sources:
        stat = path.stat()
        digest.update(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    for module in code:
        digest.update(_source(module))
    for package in packages:
        digest.update(f"{package}={package_version(package)}\0".encode())
    return digest.hexdigest()[:16]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        return False
    return False


def _sweep(root: Path) -> None:
    """Temporary folders of builds whose process is gone (killed mid-build)."""
    for folder in root.glob(f"{_TEMPORARY}*"):
        pid = folder.name.removeprefix(_TEMPORARY).rsplit("-", 2)[-2]
        if pid.isdigit() and _gone(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def built_model(
    name: str,
    build: Callable[[Path], None],
    *,
    sources: Sequence[Path],
    code: Sequence[str],
    packages: Sequence[str] = ("onnx",),
) -> Iterator[Path]:
    """The folder `build(folder)` fills from `sources`, from the cache when built before (`code`:
    the modules whose source decides what it writes, by name). It stays
    valid while the context is open (a temporary one, where the cache is not writable, is removed
    at its exit; a cached one stays)."""
    root = cache_root()
    folder = root / f"{name}-{_key(name, sources, code, packages)}"
    if folder.is_dir():
        yield folder
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        _sweep(root)
        building = Path(tempfile.mkdtemp(prefix=f"{_TEMPORARY}{name}-{os.getpid()}-", dir=root))
    except OSError:  # no writable cache: for this process alone
        with tempfile.TemporaryDirectory(prefix=f"interleaf-{name}-", ignore_cleanup_errors=True) as tmp:
            build(Path(tmp))
            yield Path(tmp)
        return
    try:
        build(building)
        building.chmod(0o755)  # mkdtemp's 0700 would keep the folder from the machine's other users
        os.rename(building, folder)
    except OSError:
        if not folder.is_dir():  # not a race lost to another process building the same folder
            raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    yield folder
