"""The server's security rules, one test each: keys (missing 401, wrong 403, hashed at rest, keyed
reading), uploads (oversize 413, not a PDF 415, a client's `../` never reaching the filesystem),
the per-key rate limit, CORS off unless configured, loopback by default, the page's CSP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from interleaf.config import load_settings
from interleaf.serve.config import ApiConfig
from interleaf.serve.jobs import safe_name
from interleaf.serve.keys import KeyRing, add_key, digest
from tests.conftest import CORPUS, REPO, IngestedWarehouse
from tests.support.prefect_home import cli_env
from tests.support.serve_server import RunningServer, copy_warehouse, serving

SMALL_PDF = CORPUS / "docs" / "figures-example.pdf"
LARGE_PDF = CORPUS / "docs" / "dpr-emnlp2020.pdf"
NOT_A_PDF = CORPUS / "bad" / "text-renamed.pdf"  # a text file named .pdf


@pytest.fixture(scope="module")
def root(corpus_warehouse: IngestedWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_warehouse(corpus_warehouse.root, tmp_path_factory.mktemp("serve-security"))


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RunningServer]:
    limit_mb = (SMALL_PDF.stat().st_size + LARGE_PDF.stat().st_size) / 2 / 2**20  # between the two
    with serving(root, f"serve.api.max_upload_mb={limit_mb}") as running_server:
        yield running_server


def upload(server: RunningServer, path: Path, key: str | None, name: str | None = None) -> httpx.Response:
    params = {"filename": name or path.name}
    headers = {"Content-Type": "application/pdf"}
    return server.client(key).post("/v1/documents", params=params, content=path.read_bytes(), headers=headers)


def test_upload_without_a_key_is_401(server: RunningServer) -> None:
    response = upload(server, SMALL_PDF, None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "API key" in response.json()["error"]["message"]


def test_upload_with_a_wrong_key_is_403(server: RunningServer) -> None:
    assert upload(server, SMALL_PDF, "il_not-a-key-of-this-server").status_code == 403
    # open reading: an OpenAI client has to send some key, and one unknown here opens reading only
    assert server.client("sk-any-client-placeholder").get("/v1/documents").status_code == 200


def test_an_oversize_upload_is_413(server: RunningServer) -> None:
    response = upload(server, LARGE_PDF, server.key)
    assert response.status_code == 413, response.text
    # the same without a Content-Length (chunked): the body is counted as it arrives
    data = LARGE_PDF.read_bytes()
    chunks = (data[i : i + 65536] for i in range(0, len(data), 65536))
    response = server.client(server.key).post(
        "/v1/documents", params={"filename": "big.pdf"}, content=chunks, headers={"Content-Type": "application/pdf"}
    )
    assert response.status_code == 413
    assert not list((server.root / "uploads").glob(f"{digest_of(LARGE_PDF)}*"))


def digest_of(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_that_is_not_a_pdf_is_415(server: RunningServer) -> None:
    response = upload(server, NOT_A_PDF, server.key)
    assert response.status_code == 415 and "%PDF-" in response.json()["error"]["message"]
    files = {"file": ("notes.pdf", NOT_A_PDF.read_bytes(), "application/pdf")}
    assert server.client(server.key).post("/v1/documents", files=files).status_code == 415


def test_a_client_path_never_reaches_the_filesystem(server: RunningServer, tmp_path: Path) -> None:
    before = {p for p in server.root.parent.rglob("*") if "uploads" not in p.parts}
    response = upload(server, SMALL_PDF, server.key, name="../../../../evil.pdf")
    assert response.status_code in (200, 202), response.text
    files = {"file": ("..\\..\\windows\\evil2.pdf", SMALL_PDF.read_bytes(), "application/pdf")}
    response = server.client(server.key).post("/v1/documents", files=files)
    assert response.status_code in (200, 202), response.text
    folder = server.root / "uploads" / digest_of(SMALL_PDF)  # under its content hash
    assert sorted(p.name for p in folder.iterdir()) == ["evil.pdf", "evil2.pdf"]
    after = {p for p in server.root.parent.rglob("*") if "uploads" not in p.parts}
    assert after == before  # nothing written anywhere else
    assert not list(Path("/tmp").glob("evil*.pdf")) and not (server.root.parent.parent / "evil.pdf").exists()


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("../../etc/passwd", "passwd.pdf"),
        ("..\\..\\boot.ini", "boot.pdf"),
        ("a/b/report 2024.PDF", "report-2024.pdf"),
        ("<script>alert(1)</script>.pdf", "script.pdf"),
        ("..", "upload.pdf"),
        (None, "upload.pdf"),
        ("résumé.pdf", "resume.pdf"),
    ],
)
def test_upload_names_are_reduced_to_a_safe_file_name(given: str | None, stored: str) -> None:
    assert safe_name(given) == stored


def test_keyed_reading_needs_a_key_and_health_stays_open(root: Path) -> None:
    with serving(root, "serve.api.read_access=keyed") as keyed:
        anonymous = keyed.client()
        assert anonymous.get("/v1/documents").status_code == 401
        assert anonymous.post("/v1/ask", json={"question": "What is DPR?"}).status_code == 401
        assert anonymous.get("/v1/models").status_code == 401
        assert keyed.client("il_wrong-key-0123456789").get("/v1/documents").status_code == 403
        assert keyed.client(keyed.key).get("/v1/documents").status_code == 200
        assert anonymous.get("/healthz").status_code == 200
        assert anonymous.get("/").status_code == 200  # the page itself holds no document data


def test_keys_are_hashed_at_rest(tmp_path: Path) -> None:
    keys_file = tmp_path / "api-keys"
    key = add_key(keys_file, "alice")
    stored = keys_file.read_text()
    assert key not in stored and f"alice sha256:{digest(key)}" in stored
    assert oct(keys_file.stat().st_mode & 0o777) == "0o600"
    config = ApiConfig(keys_file=str(keys_file))
    ring = KeyRing.from_config(config, tmp_path, environ={"INTERLEAF_API_KEYS": "ci=ci-key-0123456789abcdef"})
    assert [k.name for k in ring.keys] == ["alice", "ci"]
    assert ring.identify(key).name == "alice" and ring.identify("ci-key-0123456789abcdef").name == "ci"
    assert ring.identify("ci-key-0123456789abcdeX") is None
    assert all("ci-key" not in k.digest for k in ring.keys)


def test_each_key_has_its_own_rate_limit(root: Path) -> None:
    with serving(root, "serve.api.rate_limit.per_minute=6", "serve.api.rate_limit.burst=3") as limited:
        alice = limited.client(limited.key)
        statuses = [alice.get("/v1/documents").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        refused = alice.get("/v1/documents")
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        bob = add_key(limited.keys_file, "bob")  # a key made while the server runs works at once
        assert limited.client(bob).get("/v1/documents").status_code == 200  # bob has his own bucket
        anonymous = limited.client()  # unkeyed reading is limited per address, apart from alice
        assert [anonymous.get("/v1/documents").status_code for _ in range(3)] == [200, 200, 200]
        # deleting a key's line revokes it at once: it opens nothing that needs a key
        kept = [line for line in limited.keys_file.read_text().splitlines() if not line.startswith("bob ")]
        limited.keys_file.write_text("\n".join(kept) + "\n")
        assert upload(limited, SMALL_PDF, bob).status_code == 403


def test_cors_is_off_unless_origins_are_configured(server: RunningServer, root: Path) -> None:
    preflight = {"Origin": "http://elsewhere.example", "Access-Control-Request-Method": "POST"}
    response = server.client().options("/v1/ask", headers=preflight)
    assert "access-control-allow-origin" not in response.headers
    response = server.client().get("/v1/documents", headers={"Origin": "http://elsewhere.example"})
    assert "access-control-allow-origin" not in response.headers
    with serving(root, "serve.api.cors_origins=[http://allowed.example]") as open_to_one:
        allowed = open_to_one.client().options("/v1/ask", headers=preflight | {"Origin": "http://allowed.example"})
        assert allowed.headers["access-control-allow-origin"] == "http://allowed.example"
        other = open_to_one.client().options("/v1/ask", headers=preflight)
        assert "access-control-allow-origin" not in other.headers


def test_the_page_forbids_fetching_anything_from_elsewhere(server: RunningServer) -> None:
    response = server.client().get("/")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "http" not in policy and "*" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_interleaf_serve_binds_loopback_by_default(root: Path) -> None:
    assert load_settings().serve.api.host == "127.0.0.1"
    port = free_port()
    env = cli_env(root)
    command = [sys.executable, "-m", "interleaf.cli", "serve", "--port", str(port), "--no-access-log"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            listening = [
                c.laddr
                for c in psutil.Process(process.pid).net_connections(kind="tcp")
                if c.status == psutil.CONN_LISTEN
            ]
            if listening:
                break
            time.sleep(0.5)
        assert [(a.ip, a.port) for a in listening] == [("127.0.0.1", port)]
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=60)
        assert health.json()["index"]["loaded"]
    finally:
        process.terminate()
        process.wait(timeout=30)
