"""Typed settings: pydantic models hold the shape, YAML in configs/ holds the values."""

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


class ExecutorConfig(Strict):
    """Where the ingest's units run: `local` (this machine: threads, and parse.workers page
    processes) or `ray` (a Ray cluster, through prefect-ray; interleaf/ray_engine.py)."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None  # ray: null starts a cluster for the command; "auto"; "host:port"; "ray://host:10001"
    parse: StageResources = StageResources()  # a document's parse unit (its whole-document work)
    pages: StageResources = StageResources()  # each run of parse.pages_per_chunk pages of a parse
    describe: StageResources = StageResources()
    index: StageResources = StageResources()

    @model_validator(mode="after")
    def _ray_options_on_ray(self) -> ExecutorConfig:
        if self.kind == "local":
            set_here = [name for name in self.model_fields_set if name != "kind"]
            changed = [name for name in set_here if getattr(self, name) != type(self).model_fields[name].default]
            if changed:
                raise ValueError(f"{', '.join(sorted(changed))}: read by kind 'ray' only, and kind is 'local'")
        return self

    def resources(self, stage: str) -> StageResources:
        """A stage's resources by its name (the index stages are `index:<retriever>`)."""
        return getattr(self, stage.partition(":")[0])


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


def _set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
    tree[leaf] = value


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
        _set_dotted(raw, key.strip(), parsed)
        given[key.strip()] = item
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError("; ".join(_explain(error, config_path, given) for error in exc.errors())) from exc


def _explain(error: Any, config_path: Path, given: dict[str, str]) -> str:
    """One pydantic error as `where: key = value: what it accepts`."""
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc)
    item = next((given[k] for k in given if key == k or key.startswith(k + ".") or k.startswith(key + ".")), None)
    where = f"--set {item}" if item else str(config_path)
    if error["type"] == "extra_forbidden":
        parent = _model_at(loc[:-1])
        names = sorted(parent.model_fields) if parent else []
        close = difflib.get_close_matches(loc[-1], names, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        owner = ".".join(loc[:-1]) or "the config"
        return f"{where}: unknown key {key}{hint}; {owner} accepts: {', '.join(names)}"
    if error["type"] == "value_error":  # a model's own check: its message says what is wrong
        return f"{where}: {key}: {error['msg'].removeprefix('Value error, ')}"
    value = repr(error.get("input"))
    value = value if len(value) <= 60 else value[:57] + "..."
    if error["type"] == "literal_error":
        return f"{where}: {key} = {value} is not accepted; it must be {error['ctx']['expected']}"
    accepts = _type_name(_annotation_at(loc))
    return f"{where}: {key} = {value} is not accepted; it takes {accepts} ({error['msg'].lower()})"


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
    """The declared type at a dotted location (None when the path leaves the models)."""
    current: Any = Settings
    for part in loc:
        if part.isdigit():
            args = get_args(current)
            current = args[0] if args else None
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
