"""publish_task: point the views at this run's outputs and refresh the on-disk DuckDB catalog."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from tasks.context import RunContext
from tasks.describe_task import publish_describe
from tasks.parse_task import publish_parse
from warehouse import Warehouse
from warehouse.catalog import write_catalog_file


def publish_documents(ctx: RunContext) -> None:
    """Point the views at this run's parse and describe outputs, and refresh the catalog file."""
    publish_parse(ctx)
    publish_describe(ctx)
    write_catalog_file(Warehouse(ctx.warehouse))


@task(name="publish", cache_policy=NO_CACHE)
def publish_task(ctx: RunContext) -> None:
    publish_documents(ctx)
