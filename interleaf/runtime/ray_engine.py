"""Ray as the engine of the ingest (`executor.kind: ray`): Prefect's `RayTaskRunner` puts each
document's parse, describe and index units on the cluster's workers, and a parse spreads its page
ranges over the cluster with `ray_page_map` (so a 619-page manual is not one worker's work).

What a worker needs from the command that submitted its work travels in Ray's runtime
environment: the address of this run's Prefect server (a worker that found none would start its
own, on the same database file), this run's Prefect settings, and the path Interleaf is imported
from (a worker imports the submitting command's code, when that path exists on its node). The
warehouse is a path every worker writes to: on a cluster of several machines, a shared
filesystem mounted at the same path on each.

At a stop (interleaf/runtime/interrupt.py), the units still on the cluster are cancelled after the grace
period, the flow ends, and `ray.shutdown` stops a head this command started (the raylet first, which
ends its workers; each process gets 1 s after SIGTERM, then a kill) before the command's Prefect
server is stopped at its exit: no worker is left holding a request of that server as it stops. What
the workers print from the first signal on stays in Ray's logs (`quiet_driver`).

Ray is an extra (`pip install 'interleaf[ray]'`): nothing here imports it before it is used.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from interleaf.config import ExecutorConfig, StageResources
from interleaf.errors import ConfigError
from interleaf.runtime import interrupt
from interleaf.runtime.executor import PageLimits, past_deadline, timed_out, wait_s
from interleaf.stage import Lost

T = TypeVar("T")
R = TypeVar("R")

CODE_ROOT = Path(__file__).resolve().parents[2]  # holds interleaf/, pipeline/, flows/, warehouse/


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "executor.kind = 'ray' needs Ray: pip install 'interleaf[ray]' (make install-dev installs it)"
        ) from exc
    return ray


def worker_environment() -> dict[str, str]:
    """The environment variables a worker runs this command's tasks with."""
    from prefect.settings import get_current_settings

    # PREFECT_API_URL among them: the temporary server this command started names itself there
    env = {k: str(v) for k, v in get_current_settings().to_environment_variables(exclude_unset=True).items()}
    for name in ("PREFECT_HOME", "PREFECT_API_URL", "PREFECT_LOGGING_LEVEL", "INTERLEAF_WAREHOUSE"):
        if name in os.environ:
            env.setdefault(name, os.environ[name])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(CODE_ROOT), os.environ.get("PYTHONPATH")) if p)
    return env


# Ray stops a node's idle worker processes beyond its soft limit (by default one per CPU) after 1 s.
# A unit waiting on its runs of pages releases its CPU, and a second process runs the runs, so with
# one per CPU each document's parse and describe started fresh processes that imported Interleaf and
# loaded their models again. Two per CPU keeps both. The cost is memory, since each process keeps
# the models of what it ran (`make bench`'s Ray line gives the cluster's peak).
WORKERS_PER_CPU = 2


def node_environment(cpus: float) -> dict[str, str]:
    """What a node of `cpus` CPUs is started with (`ray start`, or the cluster a command starts)."""
    return {"RAY_num_workers_soft_limit": str(max(1, math.ceil(WORKERS_PER_CPU * cpus)))}


def task_runner(config: ExecutorConfig) -> Any:
    """A `RayTaskRunner` for `config`, which connects (or starts a cluster, with no address) when
    the flow begins: only then is this run's Prefect server up, whose address the workers need."""
    _ray()
    from prefect_ray import RayTaskRunner

    class InterleafRayTaskRunner(RayTaskRunner):
        def __enter__(self) -> InterleafRayTaskRunner:
            if self.address is None:  # a cluster started here (or one found running, which keeps its own)
                for name, value in node_environment(os.cpu_count() or 1).items():
                    os.environ.setdefault(name, value)
            self.init_kwargs = {
                **self.init_kwargs,
                "runtime_env": {"env_vars": worker_environment()},
                "log_to_driver": True,  # a worker's notes (a damaged part set aside) reach the terminal
                "configure_logging": False,
            }
            super().__enter__()
            interrupt.on_signal(quiet_driver)
            return self

    return InterleafRayTaskRunner(address=config.address)


def quiet_driver() -> None:
    """At the first signal: this driver stops copying its workers' output to the terminal, as logging
    is switched off (what a worker cut short by the stop prints is no news either). Ray keeps that
    output in its session's logs (`/tmp/ray/session_latest/logs` on the node), and the head this
    command may have started writes there only. The lines the driver held back to fold repeats are dropped too:
    `ray.shutdown` would print them after the command's last line. Through Ray's own module: no
    public call turns the copying off once `ray.init` turned it on."""
    from ray._private import ray_logging

    ray_logging.global_worker_stdstream_dispatcher.remove_handler("ray_print_logs")
    for held in (ray_logging.stdout_deduplicator, ray_logging.stderr_deduplicator):
        held.flush()


def remote_options(resources: StageResources) -> contextlib.AbstractContextManager[Any]:
    """What a unit submitted inside this block takes of a worker."""
    from prefect_ray.context import remote_options as options

    return options(num_cpus=resources.num_cpus, num_gpus=resources.num_gpus)


def cancel(futures: Iterable[Any]) -> None:
    """Stop the units of `futures` still running on the cluster. Their workers are killed (the only
    way to stop a task inside a C call such as OCR): what a unit wrote is temporary files, renamed
    only on commit, and its ledger row is closed `interrupted` once its process is seen gone."""
    ray = _ray()
    for future in futures:
        ray.cancel(future.wrapped_future, force=True)


def cluster_cpus() -> int:
    """The CPUs of the cluster this command is connected to."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1)))


def ray_page_map(
    resources: StageResources, on_result: Callable[[R], None] | None, limits: PageLimits
) -> Callable[[Callable[[T], R], Iterable[T]], Iterator[R | Lost]]:
    """`interleaf.runtime.executor.page_map` on the cluster: each item is a Ray task taking `resources`,
    results come back in order, a lost item (its worker died, ran past its time) is a `Lost` in its
    place and the others go on. The window of items in flight is twice the cluster's CPUs, so the
    clock of an item starts near when it runs. (No address-space cap: Ray's memory monitor kills a
    worker over the node's memory threshold, which comes back here as a lost item.)"""
    ray = _ray()

    def mapped(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R | Lost]:
        remote = ray.remote(num_cpus=resources.num_cpus, num_gpus=resources.num_gpus, max_retries=0)(_call)
        window_size = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        todo = deque(items)
        window: deque[tuple[T, Any]] = deque()
        try:
            while todo or window:
                while todo and len(window) < window_size and not past_deadline(limits.deadline):
                    item = todo.popleft()
                    window.append((item, remote.remote(fn, item)))
                if not window:
                    yield from (timed_out(limits) for _ in todo)
                    return
                item, ref = window.popleft()
                try:
                    result = ray.get(ref, timeout=wait_s(item, limits))
                except ray.exceptions.GetTimeoutError:
                    ray.cancel(ref, force=True)
                    interrupt.check()
                    if past_deadline(limits.deadline):
                        yield from (timed_out(limits) for _ in range(1 + len(window) + len(todo)))
                        return
                    yield Lost("hung", f"ran past {limits.item_timeout_s:g} s a page; its task was cancelled")
                    continue
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError) as exc:
                    interrupt.check()
                    yield Lost("crashed", f"its Ray worker died ({type(exc).__name__})")
                    continue
                interrupt.check()
                if on_result is not None:
                    on_result(result)
                yield result
        finally:  # a stop, a deadline, an error: nothing of this map is left running on the cluster
            for _, ref in window:
                ray.cancel(ref, force=True)

    return mapped


def _call(fn: Callable[[T], R], item: T) -> R:
    return fn(item)
