"""The vLLM launcher against stand-in executables written here and put first on PATH: a `vllm` that
accepts `serve MODEL --host H --port P ...`, starts a helper process (as vLLM starts its engine) and
serves /v1/models and /v1/chat/completions on loopback (tests/support/openai_server.py) after a delay; and an
`nvidia-smi` that lists one GPU. Checked: the launcher starts it, waits, the generator gets an answer
through it, and the whole process group is gone afterwards; an answering server is reused; and the
"no vLLM", "no GPU" and "no weights" refusals say what is missing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from interleaf.generate.config import GenerateConfig, GenerateOpenAIConfig
from interleaf.generate.launcher import (
    MAX_IMAGES,
    LaunchError,
    gpu_problem,
    launch_for,
    load_preset,
    servers_for,
    vllm_server,
)
from interleaf.generate.protocol import AnswerRequest, ContextQuote
from interleaf.generate.registry import get_generator
from tests.support.openai_server import OpenAIServer, running

REPO = Path(__file__).resolve().parent.parent
MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"

STANDIN_VLLM = """#!{python}
import json, os, subprocess, sys, time
sys.path.insert(0, {repo!r})
from tests.support.openai_server import OpenAIServer

args = sys.argv[1:]
record = os.environ["STANDIN_RECORD"]
assert args[0] == "serve", args
model, options = args[1], dict(zip(args[2::2], args[3::2]))
helper = subprocess.Popen(["sleep", "300"])  # as vLLM's engine core: a second process in the group
with open(record, "w") as out:
    json.dump({{"argv": args, "pid": os.getpid(), "helper": helper.pid}}, out)
print("INFO: loading weights", flush=True)
if os.environ.get("STANDIN_FAIL"):
    print("ERROR: CUDA out of memory", flush=True)
    sys.exit(1)
time.sleep(1.0)  # loading: the launcher must wait
reply = lambda seen: "Served by the stand-in [1]."
OpenAIServer(model, None, reply, host=options["--host"], port=int(options["--port"])).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def running_pid(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """bin/vllm and bin/nvidia-smi first on PATH, a hub cache holding the model's config.json, offline."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "vllm", STANDIN_VLLM.format(python=sys.executable, repo=str(REPO)))
    executable(bin_dir / "nvidia-smi", "#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-stand-in)'\n")
    snapshot = tmp_path / "hub" / f"models--{MODEL.replace('/', '--')}" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({"model_type": "qwen2_5_vl", "vision_config": {"depth": 32}}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("STANDIN_RECORD", str(tmp_path / "standin.json"))
    yield tmp_path


def ask(base_url: str) -> str:
    config = GenerateConfig(
        backend="openai", openai=GenerateOpenAIConfig(base_url=base_url, model=MODEL, api_key_env="NO_KEY_HERE")
    )
    quote = ContextQuote("t1", "text", 1, "d", "doc.pdf", 0, "text", "The launcher starts vLLM.")
    (answer,) = get_generator(config).generate([AnswerRequest("q1", "What starts vLLM?", (quote,))], lambda p: b"")
    assert answer.error is None, answer.error
    return answer.markdown


def test_starts_waits_answers_and_stops_the_whole_group(standins: Path) -> None:
    port = free_port()
    preset = {  # two stages on one URL share one server
        "describe.openai.base_url": f"http://127.0.0.1:{port}/v1",
        "describe.openai.model": MODEL,
        "generate.openai.base_url": f"http://localhost:{port}/v1",
        "generate.openai.model": MODEL,
    }
    started = time.monotonic()
    with launch_for(preset, log_path=standins / "vllm.log", stop_grace_s=5) as urls:
        assert time.monotonic() - started >= 1.0  # it waited for the stand-in to load
        assert urls == [f"http://127.0.0.1:{port}/v1"]
        record = json.loads((standins / "standin.json").read_text())
        assert record["argv"] == [
            "serve",
            MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--limit-mm-per-prompt",  # a VLM, by its cached config.json
            json.dumps({"image": MAX_IMAGES}),
            "--max-model-len",
            "32768",
        ]
        assert running_pid(record["pid"]) and running_pid(record["helper"])
        assert ask(urls[0]) == "Served by the stand-in [1]."
    assert "INFO: loading weights" in (standins / "vllm.log").read_text()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (running_pid(record["pid"]) or running_pid(record["helper"])):
        time.sleep(0.05)
    assert not running_pid(record["pid"]) and not running_pid(record["helper"])  # the group, not only vllm
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more


def test_a_server_already_answering_is_used_and_left_running(standins: Path) -> None:
    with running(OpenAIServer(MODEL, None, lambda seen: "Already up [1].")) as server:
        port = server.server_address[1]
        with vllm_server(MODEL, port) as base_url:
            assert ask(base_url) == "Already up [1]."
        assert not (standins / "standin.json").exists()  # vllm was never started
        assert ask(server.base_url) == "Already up [1]."  # still serving
        with (
            pytest.raises(LaunchError, match=f"already serves {MODEL}, not other/model"),
            vllm_server("other/model", port),
        ):
            pass


def test_a_server_that_dies_while_loading_is_reported_with_its_log(standins: Path, monkeypatch) -> None:
    monkeypatch.setenv("STANDIN_FAIL", "1")
    dies = r"exited with code 1 before answering(.|\n)*CUDA out of memory"
    with pytest.raises(LaunchError, match=dies), vllm_server(MODEL, free_port(), log_path=standins / "vllm.log"):
        pass


def test_no_gpu_is_refused_at_once(standins: Path) -> None:
    (standins / "bin" / "nvidia-smi").unlink()
    if gpu_problem() is None:
        pytest.skip("this machine has a GPU")
    with pytest.raises(LaunchError) as caught, vllm_server(MODEL, free_port()):
        pass
    message = str(caught.value)
    assert "no GPU" in message and "nvidia-smi" in message and "base_url" in message
    assert not (standins / "standin.json").exists()


def test_missing_weights_are_refused_with_how_to_get_them(standins: Path, monkeypatch) -> None:
    empty = standins / "empty-hub"
    empty.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(empty))
    with pytest.raises(LaunchError) as caught, vllm_server(MODEL, free_port()):
        pass
    message = str(caught.value)
    assert f"the weights of {MODEL} are not in the Hugging Face cache ({empty})" in message
    assert "HF_HUB_OFFLINE=1" in message and f"hf download {MODEL}" in message
    with (
        pytest.raises(LaunchError, match="the model folder /nowhere/qwen does not exist"),
        vllm_server("/nowhere/qwen", free_port()),
    ):
        pass
    assert not (standins / "standin.json").exists()


def test_no_vllm_installed_says_how_to_install_it(standins: Path, monkeypatch) -> None:
    (standins / "bin" / "vllm").unlink()
    if shutil.which("vllm"):
        pytest.skip("a real vllm is installed here")
    port = free_port()
    with pytest.raises(LaunchError, match=r"vLLM is not installed.*\[gpu\]") as caught, vllm_server(MODEL, port):
        pass
    assert f"http://127.0.0.1:{port}/v1" in str(caught.value)


def test_presets_name_their_servers() -> None:
    (spec,) = servers_for(load_preset("qwen2.5-vl-7b"))
    assert (spec.model, spec.base_url) == (MODEL, "http://127.0.0.1:8000/v1")
    assert servers_for(load_preset("qwen2.5-vl-7b-transformers")) == []  # in process: nothing to serve
    assert servers_for({"generate.openai.base_url": "https://api.example.com/v1", "generate.openai.model": "m"}) == []
    with pytest.raises(LaunchError, match="two models"):
        servers_for(
            {
                "a.base_url": "http://127.0.0.1:8000/v1",
                "a.model": "x",
                "b.base_url": "http://127.0.0.1:8000/v1",
                "b.model": "y",
            }
        )
    with pytest.raises(LaunchError, match="unknown model preset"):
        load_preset("no-such-preset")
