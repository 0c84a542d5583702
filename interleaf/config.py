"""Typed settings: pydantic models hold the shape and the defaults (configs/default.yaml is written
from them by interleaf/config_reference.py); a YAML file and `--set` give the values."""

from __future__ import annotations

import difflib
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from interleaf.describe.config import DescribeConfig
from interleaf.errors import ConfigError
from interleaf.evaluate.config import EvaluateConfig
from interleaf.expand.config import ExpandConfig
from interleaf.generate.config import GenerateConfig
from interleaf.index.config import IndexConfig
from interleaf.parse.config import ParseConfig
from interleaf.retrieve.config import RetrieveConfig
from interleaf.serve.config import ApiConfig
from interleaf.strict import Strict

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.yaml"
MODEL_PRESETS = DEFAULT_CONFIG.with_name("models.yaml")


class ServeConfig(Strict):
    inbox: str = "inbox"
    cron: str = "*/15 * * * *"
    host: str = "127.0.0.1"  # the local Prefect server listens on loopback only
    port: int = Field(4200, ge=1024, le=65535)
    api: ApiConfig = ApiConfig()  # `interleaf serve`: the HTTP API and web page


class StageResources(Strict):
    """What one unit of a stage takes of a Ray worker (Ray's `num_cpus` / `num_gpus`)."""

    num_cpus: float = Field(1.0, ge=0)
    num_gpus: float = Field(0.0, ge=0)


PAGES = "pages"  # the resources key of each run of pages a stage sends to the page workers


class ExecutorConfig(Strict):
    """Where the ingest's units run: `local` (this machine: threads, and parse.workers page
    processes) or `ray` (a Ray cluster, through prefect-ray; interleaf/runtime/ray_engine.py)."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None  # ray: null starts a cluster for the command; "auto"; "host:port"; "ray://host:10001"
    # ray: what one unit takes of a worker, by stage name (`describe`), by a family of stages
    # (`index` for every `index:<retriever>`), or `pages` for each run of pages; others take 1 CPU
    resources: dict[str, StageResources] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ray_options_on_ray(self) -> ExecutorConfig:
        if self.kind == "local":
            set_here = [name for name in self.model_fields_set if name != "kind"]
            changed = [
                name
                for name in set_here
                if getattr(self, name) != type(self).model_fields[name].get_default(call_default_factory=True)
            ]
            if changed:
                raise ValueError(f"{', '.join(sorted(changed))}: read by kind 'ray' only, and kind is 'local'")
        return self

    def for_stage(self, stage: str) -> StageResources:
        """A unit's resources: by its stage's name, else by the stage's family (`index:bm25` ->
        `index`), else one CPU."""
        return self.resources.get(stage) or self.resources.get(stage.partition(":")[0]) or StageResources()

    def check_resources(self, stages: list[str]) -> None:
        """Refuse a `resources` key that names no stage of the flow (a typo would ask for nothing)."""
        known = {PAGES, *stages, *(s.partition(":")[0] for s in stages)}
        if unknown := sorted(set(self.resources) - known):
            raise ConfigError(
                f"executor.resources: {', '.join(unknown)} names no stage of the ingest; "
                f"it has {', '.join(sorted(known))}"
            )


class Settings(Strict):
    warehouse: str | None = None  # --warehouse and $INTERLEAF_WAREHOUSE take precedence
    executor: ExecutorConfig = ExecutorConfig()
    parse: ParseConfig = ParseConfig()
    describe: DescribeConfig = DescribeConfig()
    index: IndexConfig = IndexConfig()
    expand: ExpandConfig = ExpandConfig()
    retrieve: RetrieveConfig = RetrieveConfig()
    generate: GenerateConfig = GenerateConfig()
    evaluate: EvaluateConfig = EvaluateConfig()
    serve: ServeConfig = ServeConfig()

    @model_validator(mode="after")
    def _memory_budget_where_it_holds(self) -> Settings:
        if self.parse.memory_budget_mb is None:
            return self
        if self.executor.kind != "local":
            raise ValueError("parse.memory_budget_mb: read by executor kind 'local' only (a Ray node has its own)")
        if self.describe.ocr.backend != "rapidocr":
            raise ValueError(
                f"parse.memory_budget_mb: budgets RapidOCR's text detection, and describe.ocr.backend "
                f"is {self.describe.ocr.backend!r}"
            )
        return self


def set_dotted(tree: dict[str, Any], dotted: str, value: Any, item: str) -> str:
    """Put `value` at `dotted` in a raw config. A list's item (`index.retrievers`) is named by its
    `name` or its position: `index.retrievers.minilm.precision`. Returns the key with list items by
    position, as a validation error locates it."""
    keys = dotted.split(".")
    node: Any = tree
    at: list[str] = []  # the key resolved so far
    for depth, key in enumerate(keys):
        if isinstance(node, list):
            slot: int | str = _item_position(node, key, ".".join(at), item)
        elif isinstance(node, dict):
            slot = key
        else:
            raise ConfigError(f"--set {item}: {'.'.join(at)} is a value ({node!r}), not a section with keys")
        at.append(str(slot))
        if depth == len(keys) - 1:
            node[slot] = value
        else:
            if isinstance(node, dict) and node.get(slot) is None:  # absent, or a section left null
                node[slot] = {}
            node = node[slot]
    return ".".join(at)


def _item_position(items: list[Any], key: str, where: str, item: str) -> int:
    names = [x.get("name") for x in items if isinstance(x, dict)]
    if key in names:
        return names.index(key)
    if key.isdigit() and int(key) < len(items):
        return int(key)
    listed = ", ".join(str(n) for n in names if n) or "none"
    raise ConfigError(
        f"--set {item}: {where} has no item {key!r}; name one ({listed}) or give its position (0 to {len(items) - 1})"
    )


def model_overrides(name: str) -> list[str]:
    """`key=value` overrides of a model preset in configs/models.yaml (`make e2e MODEL=...`)."""
    presets = yaml.safe_load(MODEL_PRESETS.read_text()) or {}
    if name not in presets:
        raise ConfigError(f"unknown model preset {name!r}; presets in {MODEL_PRESETS}: {', '.join(presets)}")
    return [f"{key}={value}" for key, value in presets[name].items()]


def load_settings(path: str | Path | None = None, overrides: list[str] | None = None) -> Settings:
    """Read a YAML config, apply `key.sub=value` overrides (values parsed as YAML), validate. A bad
    value is a ConfigError of one line naming the key, where it came from and what it accepts."""
    config_path = Path(path) if path else DEFAULT_CONFIG
    try:
        raw = yaml.safe_load(config_path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{config_path}: cannot read config: {' '.join(str(exc).split())}") from exc
    given: dict[str, str] = {}  # dotted key -> the --set item that gave it
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r} is not of the form key.sub=value")
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or "cannot be parsed"
            raise ConfigError(f"--set {item}: the value is not valid YAML ({problem})") from exc
        given[set_dotted(raw, key.strip(), parsed, item)] = item
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError("; ".join(_explain(error, config_path, given, raw) for error in exc.errors())) from exc


def _user_loc(loc: tuple[Any, ...], raw: Any) -> tuple[list[str], list[str]]:
    """An error's location as `--set` gives it (list items by position) and as it is shown (items
    by name). Both leave out the tag pydantic adds after a list item of a tagged union (the
    retriever's kind): `index.retrievers.1.dense.precision` is `index.retrievers.minilm.precision`."""
    given: list[str] = []
    shown: list[str] = []
    node = raw
    for i, part in enumerate(loc):
        tag = i and isinstance(loc[i - 1], int) and isinstance(node, dict) and part == node.get("kind")
        if tag and part not in node:
            continue
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            name = node.get("name") if isinstance(node, dict) else None
        else:
            node = node.get(part) if isinstance(node, dict) else None
            name = None
        given.append(str(part))
        shown.append(str(name or part))
    return given, shown


def _explain(error: Any, config_path: Path, given: dict[str, str], raw: Any) -> str:
    """One pydantic error as `where: key = value: what it accepts`."""
    loc = [str(part) for part in error["loc"]]
    at, shown = _user_loc(tuple(error["loc"]), raw)
    dotted, key = ".".join(at), ".".join(shown)
    related = (v for k, v in given.items() if dotted == k or dotted.startswith(k + ".") or k.startswith(dotted + "."))
    if not dotted:  # a check across sections (Settings' own): the --set items its message names
        related = (v for k, v in given.items() if k in error["msg"])
    item = next(related, None)
    where = f"--set {item}" if item else str(config_path)
    if error["type"] == "extra_forbidden":
        parent = _model_at(loc[:-1])
        names = sorted(parent.model_fields) if parent else []
        close = difflib.get_close_matches(loc[-1], names, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        owner = ".".join(shown[:-1]) or "the config"
        return f"{where}: unknown key {key}{hint}; {owner} accepts: {', '.join(names)}"
    if error["type"] == "value_error":  # a model's own check: its message says what is wrong
        return f"{where}: {key + ': ' if key else ''}{error['msg'].removeprefix('Value error, ')}"
    value = repr(error.get("input"))
    value = value if len(value) <= 60 else value[:57] + "..."
    if error["type"] == "literal_error":
        return f"{where}: {key} = {value} is not accepted; it must be {error['ctx']['expected']}"
    accepts = _type_name(_annotation_at(loc))
    return f"{where}: {key} = {value} is not accepted; it takes {accepts} ({error['msg'].lower()})"


def _union_member(annotation: Any, tag: str) -> type[BaseModel] | None:
    """The member of a tagged union (a `kind` Literal) whose tag is `tag`."""
    for arg in get_args(annotation):
        for member in get_args(arg) or (arg,):
            kind = getattr(member, "model_fields", {}).get("kind")
            if kind is not None and get_args(kind.annotation) == (tag,):
                return member
    return None


def _model_at(loc: list[str]) -> type[BaseModel] | None:
    annotation = _annotation_at(loc) if loc else Settings
    return _model_of(annotation)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):  # Optional[...], list[...], unions
        model = _model_of(arg)
        if model is not None:
            return model
    return None


def _annotation_at(loc: list[str]) -> Any:
    """The declared type at a dotted location (None when the path leaves the models). A part after
    a list item may be a tagged union's tag (pydantic's location names the member it tried)."""
    current: Any = Settings
    for part in loc:
        if part.isdigit():
            args = get_args(current)
            current = args[0] if args else None
            continue
        tagged = _union_member(current, part)
        if tagged is not None:
            current = tagged
            continue
        model = _model_of(current)
        if model is None or part not in model.model_fields:
            return None
        current = model.model_fields[part].annotation
    return current


def _type_name(annotation: Any) -> str:
    """`list[int]`, `int | None`, `BM25Config | DenseConfig`: a declared type as a reader writes it."""
    if annotation is None:
        return "a value of another type"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin in (Union, types.UnionType):
        return " | ".join("None" if a is type(None) else _type_name(a) for a in args)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(a) for a in args)}]"
    return getattr(annotation, "__name__", str(annotation))
