"""Uploads and their ingest jobs.

An uploaded PDF is checked (size, `%PDF-` signature) and stored under its content hash,
`<warehouse>/uploads/<sha256>/<name>`, where `<name>` is the client's file name reduced to its last
component and to letters, digits and `._-` (it becomes the document's name): nothing the client
sends is ever used as a path. Each upload is ingested by `interleaf ingest` in a child process
(the ingest flow, a Prefect flow run, with the server's own settings), one at a time: parsing
takes both cores and its models' memory, and the server's process keeps answering. A job's
progress is read from the warehouse itself, the stages that have committed the document; when the
ingest publishes, the server loads the new index (`ServerState.refresh`) before the job says done.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import yaml

from interleaf.serve.errors import ApiError
from interleaf.serve.state import ServerState

PDF_MAGIC = b"%PDF-"
UPLOADS = "uploads"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_KEEP_JOBS = 200  # finished jobs remembered (the oldest are forgotten)


def safe_name(client_name: str | None) -> str:
    """A file name made only of the last component of what the client sent, in a safe alphabet."""
    raw = client_name or ""
    last = PureWindowsPath(PurePosixPath(raw.replace("\x00", "")).name).name  # `a/b\\c.pdf` -> `c.pdf`
    ascii_name = unicodedata.normalize("NFKD", last).encode("ascii", "ignore").decode()
    stem = _UNSAFE.sub("-", Path(ascii_name).stem).strip("-._")[:80]
    return f"{stem or 'upload'}.pdf"


def check_pdf(data: bytes, limit_bytes: int) -> None:
    if len(data) > limit_bytes:
        raise ApiError(413, "too_large", f"the file has {len(data)} bytes; uploads are limited to {limit_bytes}")
    if not data.startswith(PDF_MAGIC):
        raise ApiError(415, "not_a_pdf", "the file does not start with `%PDF-`: only PDF documents are ingested")


@dataclass
class Job:
    id: str
    doc_id: str
    name: str
    path: Path
    state: str = "queued"  # queued, ingesting, loading, done, rejected, failed
    created: float = field(default_factory=time.time)
    started: float | None = None
    ended: float | None = None
    message: str | None = None  # why it was rejected or failed
    run_id: str | None = None  # the ingest run in the ledger (`interleaf runs`)

    @property
    def finished(self) -> bool:
        return self.state in ("done", "rejected", "failed")


class Jobs:
    """The upload queue: one ingest at a time in a child process."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.folder = state.root / UPLOADS
        self._jobs: dict[str, Job] = {}
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._config: Path | None = None
        self._current: subprocess.Popen[str] | None = None

    # -- submitting ----------------------------------------------------------------------------
    def submit(self, data: bytes, client_name: str | None) -> tuple[Job, bool]:
        """The job ingesting this file; False when the document is ingested already (no job runs)."""
        check_pdf(data, int(self.state.settings.serve.api.max_upload_mb * 1024 * 1024))
        doc_id = hashlib.sha256(data).hexdigest()
        name = safe_name(client_name)
        folder = self.folder / doc_id
        path = folder / name
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{uuid.uuid4().hex}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, path)
        job = Job(uuid.uuid4().hex[:16], doc_id, name, path)
        known = self.state.snapshot.documents.get(doc_id)
        with self._lock:
            self._jobs[job.id] = job
            self._forget_old()
        if known is not None:
            job.state, job.name, job.ended = "done", known.name, time.time()
            job.message = "already ingested"
            return job, False
        self._queue.put(job)
        self._start_worker()
        return job, True

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def active(self) -> list[Job]:
        return [j for j in self._jobs.values() if not j.finished]

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished]
        for job in sorted(finished, key=lambda j: j.created)[: max(0, len(finished) - _KEEP_JOBS)]:
            del self._jobs[job.id]

    # -- running ---------------------------------------------------------------------------------
    def _start_worker(self) -> None:
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="interleaf-ingest", daemon=True)
                self._worker.start()

    def stop(self) -> None:
        self._queue.put(None)
        current = self._current
        if current is not None and current.poll() is None:
            # the ingest's own children (page workers, Prefect's temporary server) share its group
            os.killpg(current.pid, signal.SIGTERM)
            try:
                current.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(current.pid, signal.SIGKILL)
        if self._config is not None:
            shutil.rmtree(self._config.parent, ignore_errors=True)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                self._run(job)
            except Exception as exc:  # the queue goes on; the job says what happened
                job.state, job.message = "failed", f"{type(exc).__name__}: {exc}"
            finally:
                job.ended = job.ended or time.time()

    def _settings_file(self) -> Path:
        """The server's settings as a config file, so the child ingests exactly as configured."""
        if self._config is None:
            folder = Path(tempfile.mkdtemp(prefix="interleaf-serve-"))
            self._config = folder / "settings.yaml"
            dumped = self.state.settings.model_dump(mode="json")
            self._config.write_text(yaml.safe_dump(dumped, sort_keys=False), encoding="utf-8")
        return self._config

    def _run(self, job: Job) -> None:
        job.state, job.started = "ingesting", time.time()
        command = [sys.executable, "-m", "interleaf.cli", "--warehouse", str(self.state.root)]
        command += ["--config", str(self._settings_file()), "ingest", str(job.path)]
        env = {**os.environ, "COLUMNS": "200"}
        self._current = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=_source_root(),
            start_new_session=True,  # one process group: stop() ends the ingest and all it started
        )
        output, _ = self._current.communicate()
        returncode = self._current.returncode
        self._current = None
        found = re.search(r"^run (\S+):", output, re.M)
        job.run_id = found.group(1) if found else None
        rejected = self.state.rejection(job.doc_id)
        if rejected is not None:
            job.state, job.message = "rejected", rejected
            return
        if returncode != 0:
            tail = " ".join(output.strip().splitlines()[-6:])
            job.state, job.message = "failed", f"interleaf ingest exited {returncode}: {tail}"[:2000]
            return
        job.state = "loading"
        self.state.refresh()
        if job.doc_id in self.state.snapshot.documents:
            job.state = "done"
            job.name = self.state.snapshot.documents[job.doc_id].name
        else:
            job.state, job.message = "failed", "the ingest ended but the document is not among the published ones"

    # -- progress --------------------------------------------------------------------------------
    def describe(self, job: Job) -> dict[str, Any]:
        stages = self.state.stage_progress(job.doc_id) if job.state in ("ingesting", "loading", "done") else {}
        done = sum(stages.values())
        fraction = 1.0 if job.state == "done" else (done / (len(stages) + 1) if stages else 0.0)
        return {
            "id": job.id,
            "object": "interleaf.job",
            "state": job.state,
            "doc_id": job.doc_id,
            "name": job.name,
            "stages": stages,
            "progress": round(fraction, 3),
            "message": job.message,
            "run_id": job.run_id,
            "created": job.created,
            "started": job.started,
            "ended": job.ended,
        }


def _source_root() -> str:
    """Where the child finds the same `interleaf` package as the server's process."""
    import interleaf

    return str(Path(interleaf.__file__).resolve().parent.parent)
