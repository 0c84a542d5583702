"""The command line's shared parts: the Typer app and its global options, the two consoles, the
environment every command runs in (Prefect quiet and offline), and how errors and runs are printed.
Commands live in `interleaf/cli/__init__.py` (ingest, ask, answer, sql, runs, serve) and
`interleaf/cli/evaluation.py` (eval, export)."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from interleaf.cli.output import error_line, make_console
from interleaf.config import Settings, load_settings, model_overrides
from interleaf.errors import InterleafError
from interleaf.runtime import interrupt
from warehouse.store import resolve_root

console = make_console(stderr=True)
out = make_console()  # piped or redirected: lines as long as their content, not folded to 80 columns


def quiet_prefect() -> None:
    """Prefect's banner and telemetry off however the CLI is started (not only from the Makefile's
    environment): its SDK telemetry starts when prefect is imported (DO_NOT_TRACK), its temporary
    server's analytics and its "Starting temporary server" lines when a flow runs. Set when this
    module loads, before any command imports prefect; an explicit setting in the environment wins."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


quiet_prefect()


class State:
    warehouse: Path
    settings: Settings


state = State()


def quiet_libraries() -> None:
    # Prefect's log handler passes on every library's DEBUG records inside a flow run
    for name in ("bm25s", "httpx", "urllib3", "matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.WARNING)


def prefect_environment(root: Path) -> None:
    """Prefect keeps its own database; keep it beside the warehouse, quiet and offline."""
    os.environ.setdefault("PREFECT_HOME", str(root.parent / ".prefect"))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # Prefect gives its temporary server 20 s to start; a loaded 2-core machine can need more.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_LOCAL_STORAGE_PATH", str(root.parent / ".prefect" / "storage"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)


# The commands that run flows: Ctrl-C and SIGTERM stop them cleanly (interleaf/runtime/interrupt.py).
# `serve` keeps uvicorn's own handling; the quick ones keep Python's.
LONG_COMMANDS = {"ingest", "run", "answer", "ask", "eval"}

# The app's options, given before the command (`interleaf --warehouse DIR ingest PATH`) or after it
# (`interleaf ingest PATH --warehouse DIR`): a script appends them where it likes.
GLOBAL_PANEL = "Global options (before or after the command)"
GLOBAL_OPTIONS = ("warehouse", "config", "set_", "model")


class GlobalOptionsGroup(TyperGroup):
    """The app's group: every command takes `main`'s options too (copies of them, under their own
    heading in its --help), and reads the settings once its own arguments are parsed: the group's
    callback runs before they are, so it cannot."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        shared = [p for p in self.params if p.name in GLOBAL_OPTIONS]
        for name, command in self.commands.items():
            command.params.extend(copy.copy(p) for p in shared)
            command.invoke = _configured(name, command.invoke)  # type: ignore[method-assign]


def _configured(name: str, invoke: Callable[[typer.Context], Any]) -> Callable[[typer.Context], Any]:
    def configured(ctx: typer.Context) -> Any:
        after = {key: ctx.params.pop(key, None) for key in GLOBAL_OPTIONS}  # the command's function has none
        configure(ctx, name, after)
        return invoke(ctx)

    return configured


app = typer.Typer(
    cls=GlobalOptionsGroup,
    add_completion=False,
    no_args_is_help=True,
    help="`interleaf`: ingest, query and rerun from the command line.",
)


@app.callback()
def main(
    warehouse: Annotated[
        str | None,
        typer.Option(
            help="Warehouse folder (else: the config's warehouse, $INTERLEAF_WAREHOUSE, warehouse/data)",
            rich_help_panel=GLOBAL_PANEL,
        ),
    ] = None,
    config: Annotated[
        str | None, typer.Option(help="YAML config (default configs/default.yaml)", rich_help_panel=GLOBAL_PANEL)
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Override a config value: parse.backend=mineru (repeatable; after the command: applied last)",
            rich_help_panel=GLOBAL_PANEL,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="A model preset from configs/models.yaml, e.g. qwen2.5-vl-7b", rich_help_panel=GLOBAL_PANEL),
    ] = None,
) -> None:
    """Its options are read by `configure`, once the command has parsed its own (they may follow it)."""


def merged_options(before: dict[str, Any], after: dict[str, Any], command: str) -> dict[str, Any]:
    """The global options given before and after the command as one: `--set` items in the order given
    (a key set on both sides: the later wins, as within one side); any other option on both sides
    must have the same value, or which one was meant is unclear."""
    chosen: dict[str, Any] = {"set_": [*(before.get("set_") or []), *(after.get("set_") or [])]}
    for key in GLOBAL_OPTIONS:
        if key == "set_":
            continue
        first, second = before.get(key), after.get(key)
        if first is not None and second is not None and first != second:
            option = "--" + key.rstrip("_")
            raise InterleafError(f"{option} given before `{command}` ({first}) and after it ({second}): give it once")
        chosen[key] = second if second is not None else first
    return chosen


def configure(ctx: typer.Context, command: str, after: dict[str, Any]) -> None:
    """Settings and warehouse from the global options, and the environment the command runs in."""
    try:
        given = merged_options(ctx.find_root().params, after, command)
        overrides = (model_overrides(given["model"]) if given["model"] else []) + given["set_"]
        state.settings = load_settings(given["config"], overrides)
    except InterleafError as exc:
        console.print(error_line(exc), soft_wrap=True)
        raise typer.Exit(2) from exc
    state.warehouse = resolve_root(given["warehouse"] or state.settings.warehouse)
    prefect_environment(state.warehouse)
    quiet_libraries()
    if command in LONG_COMMANDS:
        interrupt.arm()
        if command != "ingest":  # run_ingest does it, for the scheduled ingest too
            from warehouse import Warehouse
            from warehouse.ledger import close_dead_runs

            close_dead_runs(Warehouse(state.warehouse))


def fail(exc: Exception) -> typer.Exit:
    console.print(error_line(exc), soft_wrap=True)
    return typer.Exit(1)


def write_text_atomic(path: Path, text: str) -> None:
    from warehouse.store import atomic_write_bytes

    atomic_write_bytes(path, text.encode())


def print_query_run(run: Any) -> None:
    ran = sum(r.status == "ok" for r in run.results)
    out.print(
        f"run {run.run_id}: question set {run.qset.qset_id} ({len(run.qset.rows)} questions, {run.qset.source}) — "
        f"{ran} stage runs, {run.seconds:.1f}s" + ("" if run.flow_started else " (everything stored: nothing ran)")
    )
    print_skipped(run)


def print_skipped(run: Any) -> None:
    """The questions not asked (unknown document, none named in doc scope, unreadable line), and why."""
    for question_id, reason in run.qset.rejects:
        out.print(f"skipped{f' {question_id}' if question_id else ''}: {reason}", markup=False, highlight=False)
