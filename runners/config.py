"""drivemt's configuration, and the one module that reads environment variables.

Sources, later ones winning: defaults, a YAML config file (``--config``), ``DRIVEMT_*`` environment
variables (nested keys joined by ``__``: ``DRIVEMT_LLM__PROVIDER=openai``), then command-line options.
API keys come from the environment only (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``QDRANT_API_KEY``
or the variable a model's ``api_key_env`` names) and never enter the config hash. NATS credentials are
``bus.auth`` (``DRIVEMT_BUS__AUTH__PASSWORD`` and friends), with ``NATS_TOKEN`` and ``NATS_CREDS`` filling
an unset token or ``.creds`` file, as the nats command-line tool reads them.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
import yaml
from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from bus.connection import BusSettings, ConsumerSettings, redact_url
from bus.subjects import DEFAULT_NAMESPACE
from runners.simulators.beamng.settings import BeamNGSettings, beamng_settings_from_env
from tools.common.llm import LLMSettings, ModelConfig
from tools.common.models import config_hash
from tools.errors import DrivemtError
from tools.mt.settings import GenerationSettings, MTJudgeSettings

__all__ = [
    "AgentSettings",
    "ConfigError",
    "ConfigValue",
    "ConversationSettings",
    "DrivemtConfig",
    "api_key_for",
    "explain_config",
    "load_config",
    "qdrant_api_key",
    "secrets_status",
]


_YAML_FILE: ContextVar[Path | None] = ContextVar("drivemt_config_file", default=None)
"""The YAML file of the configuration being loaded (set by :func:`load_config` around construction)."""


class ConfigError(DrivemtError):
    """A configuration file or value that cannot be used."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"configuration {source}: {reason}")


class AgentSettings(BaseModel):
    """How one agent type runs in a daemon."""

    enabled: bool = Field(default=True, description="Run this agent in this daemon.")
    copies: int = Field(default=1, ge=0, le=64, description="Instances in this process (more processes scale further).")
    concurrency: int = Field(default=2, ge=1, le=256, description="Handler calls (or batches) in flight per instance.")
    consumer: ConsumerSettings = Field(default_factory=ConsumerSettings)
    handler_timeout_s: float | None = Field(
        default=3600.0,
        gt=0,
        description=(
            "Seconds one handler call may run before it is abandoned and its event set aside as a dead letter with "
            "the reason (null: no limit). The agents whose one call can legitimately take hours (a whole dataset's "
            "augmentation or judging, diffusion on a CPU, long simulations, which have their own time limit per run) "
            "have none by default."
        ),
    )


_AGENT_DEFAULTS: dict[str, dict[str, Any]] = {
    "m_agent": {},
    "validator": {"concurrency": 1},
    "crash_extractor": {"concurrency": 1},
    "sim_planner": {"concurrency": 1},
    "sim_runner": {"concurrency": 1, "handler_timeout_s": None},
    "judge": {"concurrency": 2, "handler_timeout_s": None},
    "tl_augmenter": {"concurrency": 1, "handler_timeout_s": None},
    "t_agent": {"concurrency": 2},
    "f_agent": {"concurrency": 2, "handler_timeout_s": None},
    "validity_checker": {"concurrency": 2},
}
"""Each agent type's own defaults, under whatever a configuration sets for it (``{copies: 3}`` keeps the rest)."""


def _agent(key: str, description: str | None = None) -> Any:
    return Field(default_factory=lambda: AgentSettings(**_AGENT_DEFAULTS[key]), description=description)


class AgentsSettings(BaseModel):
    """Settings per agent type."""

    m_agent: AgentSettings = _agent("m_agent")
    validator: AgentSettings = _agent("validator")
    crash_extractor: AgentSettings = _agent("crash_extractor")
    sim_planner: AgentSettings = _agent("sim_planner")
    sim_runner: AgentSettings = _agent(
        "sim_runner", "copies = simulator processes on this machine (each one warm MetaDrive engine)."
    )
    judge: AgentSettings = _agent("judge")
    tl_augmenter: AgentSettings = _agent("tl_augmenter")
    t_agent: AgentSettings = _agent("t_agent")
    f_agent: AgentSettings = _agent("f_agent")
    validity_checker: AgentSettings = _agent("validity_checker")

    @model_validator(mode="before")
    @classmethod
    def _over_own_defaults(cls, data: Any) -> Any:
        """An agent's settings given in part keep that agent's own defaults for the rest (not the generic ones)."""
        if not isinstance(data, dict):
            return data
        return {k: {**_AGENT_DEFAULTS.get(k, {}), **v} if isinstance(v, dict) else v for k, v in data.items()}


class ValidationSettings(BaseModel):
    """Acceptance of MR candidates."""

    min_score: float = Field(
        default=0.6, ge=0.0, le=1.0, description="Least score (1 - hallucination) to accept an MR."
    )
    min_confidence: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Least confidence to accept an MR of the offline reasoner: the mean of the parser's confidence, "
        "the support of the most similar development rules' reference MRs (retrieval) and the checks' score. "
        "Stricter leaves fewer MRs for test generation.",
    )


class EmbedderSettings(BaseModel):
    """The MiniLM embedder."""

    device: str = Field(default="cpu", description="Torch device.")
    batch_size: int = Field(default=64, ge=1, description="Texts per forward pass.")
    semantic_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Least similarity for a nearest-label match."
    )


class ConversationSettings(BaseModel):
    """The agents' messages on the bus (``<ns>.agents.messages.<agent>``, the terminal UI's conversation)."""

    enabled: bool = Field(
        default=False,
        description="The M-Agent, Validator, crash extractor and T-Agent publish one agents.message (2 KB at most) per "
        "input item: model prompt and answer excerpts and tool calls, or an offline path's decision and why.",
    )


_NATS_ENV = {"bus.auth.token": "NATS_TOKEN", "bus.auth.creds_file": "NATS_CREDS"}
"""Settings that NATS's own environment variables fill when nothing else sets them."""


class DrivemtConfig(BaseSettings):
    """Everything a daemon or command needs."""

    model_config = SettingsConfigDict(env_prefix="DRIVEMT_", env_nested_delimiter="__", extra="forbid")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Sources, the first winning: command line > ``DRIVEMT_*`` environment > YAML file > defaults."""
        yaml_file = _YAML_FILE.get()
        if yaml_file is None:
            return (init_settings, env_settings)
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=yaml_file))

    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("drivemt")),
        description="JetStream store, Qdrant store, daemon state and run artefacts.",
    )
    nats_url: str | None = Field(default=None, description="Existing NATS server or cluster; embedded server if unset.")
    qdrant_url: str | None = Field(default=None, description="Qdrant server; local mode under the data dir if unset.")
    memory: Literal["own", "bus"] = Field(
        default="own",
        description="Where this process finds the MR memory: 'own' opens Qdrant (the local folder, or --qdrant-url) "
        "and serves it on the bus; 'bus' calls the process that owns it (workers without a store).",
    )
    artifacts: Literal["local", "bus"] = Field(
        default="local",
        description="Where artefacts (case frames, run records, pictures, datasets, reports) live: 'local' in the "
        "runs folder; 'bus' in the NATS JetStream Object Store (<NAMESPACE>_artifacts, the runs folder as a cache), "
        "for workers on machines that share no file system.",
    )
    namespace: str = Field(default=DEFAULT_NAMESPACE, description="First token of every subject.")
    ontology_files: list[Path] = Field(
        default_factory=list, description="User ontology files extending the packaged one."
    )
    lexicon_file: Path | None = Field(default=None, description="A traffic lexicon replacing the packaged one.")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    generation: GenerationSettings = Field(
        default_factory=GenerationSettings, description="How AutoMT follow-ups are drawn (classical or diffusers)."
    )
    mt_judge: MTJudgeSettings = Field(
        default_factory=MTJudgeSettings, description="The driving models the Judge runs on follow-ups, and its band."
    )
    bus: BusSettings = Field(default_factory=BusSettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    beamng: BeamNGSettings = Field(
        default_factory=BeamNGSettings,
        description="BeamNG.tech install or host; without one, BeamNG runs write scenario files and report an error.",
    )
    artifacts_dir: Path | None = Field(
        default=None, description="Run artefacts (reports, pictures, GIFs); <data_dir>/runs when unset."
    )
    heartbeat_interval_s: float = Field(default=5.0, gt=0, description="Seconds between agent heartbeats.")
    shutdown_grace_s: float = Field(
        default=20.0, ge=0, description="Seconds in-flight work may take to finish on stop."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(default="info")
    log_format: Literal["json", "console"] = Field(default="json", description="json for machines, console for people.")
    seed: int = Field(default=0, description="Seed recorded in provenance (the rule pipeline is deterministic).")

    @model_validator(mode="after")
    def _nats_credentials_from_environment(self) -> DrivemtConfig:
        """``NATS_TOKEN`` and ``NATS_CREDS`` fill an unset ``bus.auth.token`` and ``bus.auth.creds_file``."""
        auth = self.bus.auth
        updates: dict[str, Any] = {}
        if auth.token is None and (token := os.environ.get(_NATS_ENV["bus.auth.token"])):
            updates["token"] = SecretStr(token)
        if auth.creds_file is None and (creds := os.environ.get(_NATS_ENV["bus.auth.creds_file"])):
            updates["creds_file"] = Path(creds)
        if updates:
            self.bus = self.bus.model_copy(update={"auth": auth.model_copy(update=updates)})
        return self

    @property
    def qdrant_path(self) -> Path:
        """Local-mode Qdrant folder."""
        return self.data_dir / "qdrant"

    @property
    def jetstream_dir(self) -> Path:
        """Embedded server's JetStream folder."""
        return self.data_dir / "jetstream"

    @property
    def state_file(self) -> Path:
        """Where a daemon records its embedded server and its own pid."""
        return self.data_dir / "daemon.json"

    @property
    def runs_dir(self) -> Path:
        """Run artefacts, one folder per batch."""
        return self.artifacts_dir or self.data_dir / "runs"

    def simulator_options(self) -> dict[str, Any]:
        """BeamNG.tech settings for simulator workers, ``BNG_HOME``/``BNG_USER``/``BNG_HOST``/``BNG_PORT`` filling gaps.

        Raises:
            BeamNGConfigError: A ``BNG_*`` variable whose value does not fit.
        """
        return beamng_settings_from_env(os.environ, self.beamng).model_dump(mode="json")

    @property
    def hash(self) -> str:
        """Hash of the settings that change results (paths and URLs excluded)."""
        return config_hash(
            self.model_dump(
                mode="json",
                include={"namespace", "ontology_files", "lexicon_file", "llm", "validation", "embedder", "seed"},
            )
        )


def _check_yaml(path: Path) -> None:
    """Refuse a config file that cannot be read or is not a mapping, with a clear message."""
    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), str(exc)) from exc
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigError(str(path), "expected a mapping at the top level")


def load_config(path: Path | None = None, **overrides: Any) -> DrivemtConfig:
    """Build the configuration: defaults < YAML file < ``DRIVEMT_*`` environment < command line.

    Args:
        path: YAML config file, or ``None``.
        **overrides: Values from the command line (``None`` values are ignored).

    Raises:
        ConfigError: If the file cannot be read or a value is invalid.
    """
    if path is not None:
        _check_yaml(path)
    token = _YAML_FILE.set(Path(path) if path is not None else None)
    try:
        return DrivemtConfig(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise ConfigError(str(path) if path else "(environment and options)", problems) from exc
    finally:
        _YAML_FILE.reset(token)


@dataclass(frozen=True)
class ConfigValue:
    """One effective setting and where it came from."""

    key: str
    value: Any
    source: str


_SECRET_WORDS = ("password", "secret", "token", "api_key")


def _masked(key: str, value: Any) -> Any:
    """A value safe to show: secret-named keys hidden, credentials in URLs masked."""
    leaf = key.rsplit(".", 1)[-1].lower()
    if value is None:
        return None
    if any(w in leaf for w in _SECRET_WORDS) and not leaf.endswith("_env"):
        return "***"
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, list):
        return [redact_url(v) if isinstance(v, str) else v for v in value]
    return value


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: data}


def _provided(keys: dict[str, Any], key: str) -> str | None:
    """The provided key that sets ``key`` (itself, or an enclosing mapping given whole), if any."""
    parts = key.split(".")
    for n in range(len(parts), 0, -1):
        k = ".".join(parts[:n])
        if k in keys:
            return k
    return None


def explain_config(path: Path | None = None, **overrides: Any) -> tuple[DrivemtConfig, list[ConfigValue]]:
    """The effective configuration and, for every setting, where it came from (secrets masked).

    Sources, later ones winning: ``default``, ``file <path>``, ``environment (DRIVEMT_...)``, ``command line``.

    Raises:
        ConfigError: As :func:`load_config`.
    """
    cfg = load_config(path, **overrides)
    cli = _flatten({k: v for k, v in overrides.items() if v is not None})
    env = _flatten(EnvSettingsSource(DrivemtConfig)())
    file = _flatten(YamlConfigSettingsSource(DrivemtConfig, yaml_file=path)()) if path is not None else {}
    prefix = str(DrivemtConfig.model_config.get("env_prefix", ""))
    delimiter = str(DrivemtConfig.model_config.get("env_nested_delimiter", "__"))
    out = []
    for key, value in _flatten(cfg.model_dump(mode="json")).items():
        if (k := _provided(cli, key)) is not None:
            source = "command line"
        elif (k := _provided(env, key)) is not None:
            source = f"environment ({prefix}{k.upper().replace('.', delimiter)})"
        elif _provided(file, key) is not None:
            source = f"file {path}"
        elif key in _NATS_ENV and value is not None and os.environ.get(_NATS_ENV[key]):
            source = f"environment ({_NATS_ENV[key]})"
        else:
            source = "default"
        out.append(ConfigValue(key=key, value=_masked(key, value), source=source))
    return cfg, out


def secrets_status() -> dict[str, bool]:
    """Which secret-bearing environment variables are set (their values are never shown)."""
    names = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "QDRANT_API_KEY", "NATS_CREDS", "NATS_TOKEN"]
    return {n: bool(os.environ.get(n)) for n in names}


def api_key_for(model: ModelConfig) -> str | None:
    """The API key of a model, from the environment variable it names (or its provider's default)."""
    env = model.key_env
    return os.environ.get(env) if env else None


def qdrant_api_key() -> str | None:
    """Qdrant server API key from ``QDRANT_API_KEY``."""
    return os.environ.get("QDRANT_API_KEY")
