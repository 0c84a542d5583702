"""interleaf/runtime/lazy_module.py and interleaf/pdf/mupdf.py: the command's process imports PyMuPDF and
OpenCV only if it reads a page itself, which an ingest on `local` never does."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

from interleaf.runtime.lazy_module import OnFirstUse
from tests.conftest import REPO
from tests.support.prefect_home import cli_env

# Runs the CLI in this script's process, then says which of the two modules that process imported,
# and Prefect's server modules, which a command whose Prefect API is named needs no more than one
# that starts a temporary server (interleaf/runtime/prefect_server.py).
_INGEST_AND_REPORT = """
import atexit, sys
unwanted = ("pymupdf", "cv2", "prefect.server.api.server")
atexit.register(lambda: print("imported:", sorted(n for n in unwanted if n in sys.modules)))
if __name__ == "__main__":
    sys.argv = ["interleaf", *sys.argv[1:]]
    from interleaf.cli import run
    run()
"""


def test_an_ingest_never_imports_pymupdf_or_cv2_in_the_commands_process(tmp_path: Path, corpus: Path) -> None:
    """Parse's page count, title and outline are read in a page worker (parse/facts.py), the runner's
    checks before the flow too; describe's readings were already. A scanned page (OCR, ruling lines
    by OpenCV) and a text page with figures cover both modules in the workers."""
    script = tmp_path / "ingest_and_report.py"
    script.write_text(_INGEST_AND_REPORT)
    warehouse = tmp_path / "warehouse"
    docs = [str(corpus / "docs" / name) for name in ("scanned-table.pdf", "figures-example.pdf")]
    proc = subprocess.run(
        [sys.executable, str(script), "ingest", *docs],
        cwd=REPO,
        env=cli_env(warehouse),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 parsed, 0 unchanged, 0 rejected, 0 failed" in proc.stdout, proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "imported: []", proc.stdout


def test_a_bad_file_is_still_rejected_before_the_flow_with_its_reason(tmp_path: Path, corpus: Path) -> None:
    """The runner's checks read the file in a page worker now: a file that is no PDF still ends as a
    reject naming it and the reason, beside a good one that is parsed."""
    warehouse = tmp_path / "warehouse"
    not_a_pdf = tmp_path / "notes.pdf"
    not_a_pdf.write_text("plain text, not a PDF")
    proc = subprocess.run(
        [sys.executable, "-m", "interleaf.cli", "ingest", str(not_a_pdf), str(corpus / "docs" / "scanned-table.pdf")],
        cwd=REPO,
        env=cli_env(warehouse),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "1 parsed, 0 unchanged, 1 rejected, 0 failed" in proc.stdout, proc.stdout + proc.stderr
    assert "not a PDF: no %PDF- header" in proc.stdout, proc.stdout


def test_the_stand_in_imports_once_and_configures_once_under_threads() -> None:
    configured: list[ModuleType] = []
    stand_in = OnFirstUse("colorsys", configured.append)
    assert "not imported yet" in repr(stand_in)
    results: list[tuple[float, float, float]] = []
    threads = [threading.Thread(target=lambda: results.append(stand_in.rgb_to_hsv(1.0, 0.0, 0.0))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [(0.0, 1.0, 1.0)] * 8
    assert [module.__name__ for module in configured] == ["colorsys"]
    assert configured[0] is sys.modules["colorsys"]
    assert "imported" in repr(stand_in) and "not" not in repr(stand_in)
