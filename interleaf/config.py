"""Typed settings: pydantic models hold the shape, YAML in configs/ holds the values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from interleaf.describe.config import DescribeConfig
from interleaf.errors import ConfigError
from interleaf.evaluate.config import EvaluateConfig
from interleaf.expand.config import ExpandConfig
from interleaf.generate.config import GenerateConfig
from interleaf.index.config import IndexConfig
from interleaf.parse.config import ParseConfig
from interleaf.retrieve.config import RetrieveConfig
from interleaf.strict import Strict

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.yaml"
MODEL_PRESETS = DEFAULT_CONFIG.with_name("models.yaml")


class ServeConfig(Strict):
    inbox: str = "inbox"
    cron: str = "*/15 * * * *"
    host: str = "127.0.0.1"  # the local Prefect server listens on loopback only
    port: int = Field(4200, ge=1024, le=65535)


class Settings(Strict):
    warehouse: str | None = None  # --warehouse and $INTERLEAF_WAREHOUSE take precedence
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
    """Read a YAML config, apply `key.sub=value` overrides (values parsed as YAML), validate."""
    config_path = Path(path) if path else DEFAULT_CONFIG
    try:
        raw = yaml.safe_load(config_path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{config_path}: cannot read config: {exc}") from exc
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"override {item!r} is not of the form key.sub=value")
        _set_dotted(raw, key.strip(), yaml.safe_load(value))
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{config_path}: {exc}") from exc
