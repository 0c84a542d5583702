"""A local vLLM server for a model preset (`make e2e MODEL=qwen2.5-vl-7b`), for as long as a block runs.

    with vllm_server("Qwen/Qwen2.5-VL-7B-Instruct", port=8000) as base_url:
        ...  # describe, generate, judge against base_url

If a server already answers at the URL with that model (GET /v1/models), it is used and left
running. Otherwise `vllm serve MODEL --host 127.0.0.1 --port PORT` is started in its own process
group, awaited until /v1/models lists the model, and on leaving the block the whole group (vLLM's
engine processes included) gets SIGTERM, then SIGKILL after a grace period. Before starting, it
stops at once, saying what is missing and how to provide it, when vLLM is not installed (the `gpu`
extra), when there is no GPU (nvidia-smi, else torch.cuda when torch is installed; torch is never
imported when it is not), or when the weights are not here (a local folder that does not exist, or
a hub id absent from the Hugging Face cache while HF_HUB_OFFLINE forbids downloading it).

`launch_for(preset)` starts one server per loopback URL a preset names (`<section>.base_url` with
`<section>.model` beside it), so that every stage pointing at the same URL shares one server.
`python -m interleaf.generate.launcher PRESET -- COMMAND...` runs a command inside those servers.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from interleaf.errors import InterleafError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MAX_IMAGES = 10  # images per request a VLM server accepts: the 20-quote context holds 8 (MMDocRAG §4.2)
MAX_MODEL_LEN = 32768  # the model's 128k default reserves a KV cache many GPUs cannot hold


class LaunchError(InterleafError):
    pass


# -- what must be there before starting ---------------------------------------------------------


def vllm_problem(base_url: str) -> str | None:
    if shutil.which("vllm"):
        return None
    return (
        "vLLM is not installed (no `vllm` on PATH): install the gpu extra (`pip install -e '.[gpu]'`) on a "
        f"machine with a GPU, or start any OpenAI-compatible server at {base_url} yourself"
    )


def gpu_problem() -> str | None:
    """None when an NVIDIA GPU is visible."""
    fix = "vLLM needs an NVIDIA GPU and its driver; elsewhere, point the preset's base_url at a server on a GPU machine"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"no GPU: nvidia-smi failed ({exc}); {fix}"
        if listed.returncode == 0 and any(line.startswith("GPU ") for line in listed.stdout.splitlines()):
            return None
        return f"no GPU: `nvidia-smi -L` lists none ({(listed.stderr or listed.stdout).strip()[:200]}); {fix}"
    if importlib.util.find_spec("torch") is None:  # not installed: nothing else to ask
        return f"no GPU: no nvidia-smi on PATH and torch is not installed; {fix}"
    import torch

    if torch.cuda.is_available():
        return None
    return f"no GPU: no nvidia-smi on PATH and torch.cuda.is_available() is False; {fix}"


def hf_cache_dir() -> Path:
    """Where huggingface_hub keeps downloads, by its documented variables."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "huggingface" / "hub"


def local_config(model: str) -> Path | None:
    """The model's config.json here: in its folder, or in the hub cache's snapshot of the hub id."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder / "config.json" if (folder / "config.json").is_file() else None
    snapshots = hf_cache_dir() / f"models--{model.replace('/', '--')}" / "snapshots"
    found = sorted(snapshots.glob("*/config.json")) if snapshots.is_dir() else []
    return found[-1] if found else None


def is_local_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or Path(model).expanduser().exists()


def weights_problem(model: str) -> str | None:
    if local_config(model) is not None:
        return None
    if is_local_path(model):
        return (
            f"the model folder {model} does not exist or has no config.json: "
            "set the preset's model to a folder that holds the weights"
        )
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    if not offline:
        return None  # vLLM downloads them
    return (
        f"the weights of {model} are not in the Hugging Face cache ({hf_cache_dir()}) and HF_HUB_OFFLINE=1 "
        f"forbids downloading them: run `hf download {model}` where the hub is reachable and copy the cache "
        "here (or set HF_HUB_CACHE to it), or point the preset's model at a local folder"
    )


def default_args(model: str) -> list[str]:
    """Serve options for a VLM (when its config.json is here to say so) and a bounded context."""
    args = ["--max-model-len", str(MAX_MODEL_LEN)]
    config = local_config(model)
    if config is not None and "vision_config" in json.loads(config.read_text()):
        args = ["--limit-mm-per-prompt", json.dumps({"image": MAX_IMAGES}), *args]
    return args


# -- the server ---------------------------------------------------------------------------------


def served_models(base_url: str, timeout_s: float = 2.0) -> list[str] | None:
    """The model ids a server lists at base_url, or None when nothing answers there."""
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=timeout_s)
        return [m["id"] for m in response.json()["data"]] if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies, waiting to be reaped, do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: ask the kernel, zombies included
        try:
            os.killpg(pgid, 0)
            return True
        except OSError:
            return False
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while being read
        if int(fields[2]) == pgid and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            return True
    return False


def _stop(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the whole group, SIGKILL to what is left after `grace_s`."""
    pgid = process.pid  # start_new_session: the server leads its own group
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and (process.poll() is None or _group_alive(pgid)):
            time.sleep(0.1)
        if process.poll() is not None and not _group_alive(pgid):
            break
    process.wait()


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextmanager
def vllm_server(
    model: str,
    port: int = 8000,
    *,
    host: str = "127.0.0.1",
    extra_args: Sequence[str] | None = None,
    startup_timeout_s: float = 1800.0,
    stop_grace_s: float = 30.0,
    log_path: Path | None = None,
) -> Iterator[str]:
    """Yield the base_url of a server for `model` on host:port, started here if none answers.
    `extra_args` replace default_args(model) (VLM image limit, max model length)."""
    base_url = f"http://{host}:{port}/v1"
    served = served_models(base_url)
    if served is not None:
        if model not in served:
            raise LaunchError(
                f"{base_url} already serves {', '.join(served) or 'no model'}, not {model}: stop it or use another port"
            )
        yield base_url  # someone else's server: used, left running
        return
    problems = [p for p in (vllm_problem(base_url), gpu_problem(), weights_problem(model)) if p]
    if problems:
        raise LaunchError(f"cannot start `vllm serve {model}`: " + "; ".join(problems))
    args = list(default_args(model) if extra_args is None else extra_args)
    command = ["vllm", "serve", model, "--host", host, "--port", str(port), *args]
    log_path = log_path or Path(tempfile.gettempdir()) / f"interleaf-vllm-{port}.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_until_ready(process, base_url, model, startup_timeout_s, log_path)
            yield base_url
        finally:
            _stop(process, stop_grace_s)


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, model: str, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LaunchError(
                f"`vllm serve {model}` exited with code {process.returncode} before answering; {log}:\n{_tail(log)}"
            )
        if model in (served_models(base_url, timeout_s=1.0) or []):
            return
        time.sleep(0.25)
    raise LaunchError(f"`vllm serve {model}` did not answer at {base_url} within {timeout_s:g}s; {log}:\n{_tail(log)}")


# -- presets ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    model: str
    host: str
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


def servers_for(preset: Mapping[str, Any]) -> list[ServerSpec]:
    """The loopback servers a preset's stages talk to: each `<section>.base_url` with its
    `<section>.model`; stages on one URL must name one model. Remote URLs are not ours to start."""
    specs: dict[tuple[str, int], ServerSpec] = {}
    for key, value in preset.items():
        if not key.endswith(".base_url"):
            continue
        section = key.removesuffix(".base_url")
        model = preset.get(f"{section}.model")
        if not model:
            raise LaunchError(f"the preset sets {key} but no {section}.model to serve there")
        url = httpx.URL(str(value))
        if url.host not in LOOPBACK:
            continue
        spec = ServerSpec(str(model), "127.0.0.1" if url.host == "localhost" else url.host, url.port or 80)
        other = specs.setdefault((spec.host, spec.port), spec)
        if other.model != spec.model:
            raise LaunchError(f"the preset serves two models at {spec.base_url}: {other.model} and {spec.model}")
    return list(specs.values())


def load_preset(name: str, presets_file: Path | None = None) -> dict[str, Any]:
    import yaml

    from interleaf.config import MODEL_PRESETS

    path = presets_file or MODEL_PRESETS
    presets = yaml.safe_load(path.read_text()) or {}
    if name not in presets:
        raise LaunchError(f"unknown model preset {name!r}; presets in {path}: {', '.join(presets)}")
    return dict(presets[name])


@contextmanager
def launch_for(
    preset: str | Mapping[str, Any], presets_file: Path | None = None, **server_options: Any
) -> Iterator[list[str]]:
    """Servers for every loopback URL of a preset (a name in configs/models.yaml, or its mapping of
    dotted keys), for the duration of the block; yields their base URLs (none for an in-process preset)."""
    values = load_preset(preset, presets_file) if isinstance(preset, str) else preset
    with ExitStack() as stack:
        yield [
            stack.enter_context(vllm_server(s.model, s.port, host=s.host, **server_options))
            for s in servers_for(values)
        ]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m interleaf.generate.launcher PRESET [--presets FILE] -- COMMAND...`"""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[args.index("--") + 1 :] if "--" in args else []
    parser = argparse.ArgumentParser(description="Run a command while a model preset's vLLM servers run.")
    parser.add_argument("preset", help="a preset of configs/models.yaml")
    parser.add_argument("--presets", type=Path, default=None, help="another presets file")
    options = parser.parse_args(args[: args.index("--")] if "--" in args else args)
    try:
        with launch_for(options.preset, options.presets) as urls:
            print(f"interleaf: serving at {', '.join(urls) or '(no server needed)'}", file=sys.stderr)
            return subprocess.call(command) if command else 0
    except LaunchError as exc:
        print(f"interleaf: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
