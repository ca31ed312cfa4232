"""LLM providers: configuration and autogen model clients.

``offline`` (the default) uses no model at all. ``openai`` uses ``OpenAIChatCompletionClient``, also
for any OpenAI-compatible server (Ollama, vLLM, a llama.cpp server) through ``base_url``;
``anthropic`` uses ``AnthropicChatCompletionClient``. ``replay`` replays recorded answers through
autogen's ``ReplayChatCompletionClient``: it exists for tests and demos of the LLM path and says so.
API keys are read from the environment by ``runners.config`` and passed in here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.errors import LLMConfigurationError

__all__ = ["LLMSettings", "ModelConfig", "build_model_client", "crash_extractor_model", "describer_model"]

Provider = Literal["openai", "anthropic", "replay"]

_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class ModelConfig(BaseModel):
    """One model."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = Field(description="openai (also OpenAI-compatible URLs), anthropic, or replay (tests).")
    model: str = Field(min_length=1, description="Model name, e.g. gpt-4o-mini or claude-sonnet-4-20250514.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible server URL (Ollama, vLLM, llama.cpp).")
    api_key_env: str | None = Field(
        default=None, description="Environment variable holding the key (provider default if unset)."
    )
    temperature: float = Field(default=0.1, ge=0.0, le=2.0, description="Sampling temperature (AutoMT used 0.1).")
    model_info: dict[str, Any] | None = Field(
        default=None,
        description="autogen ModelInfo for models autogen does not know (OpenAI-compatible servers), "
        "e.g. {vision: false, function_calling: true, json_output: true, structured_output: true, family: unknown}.",
    )
    replay_file: Path | None = Field(default=None, description="replay only: JSON list of recorded answers.")
    timeout_s: float = Field(
        default=180.0, gt=0, description="Seconds one request may take before it fails (and is tried again)."
    )
    max_retries: int = Field(default=2, ge=0, le=10, description="Tries again after a failed or timed-out request.")

    @property
    def label(self) -> str:
        """``provider:model``, as results record it."""
        return f"{self.provider}:{self.model}"

    @property
    def key_env(self) -> str | None:
        """The environment variable the key comes from."""
        return self.api_key_env or _DEFAULT_KEY_ENV.get(self.provider)


class LLMSettings(BaseModel):
    """Which reasoner each step uses."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["offline", "openai", "anthropic", "replay"] = Field(
        default="offline",
        description="offline = ontology-grounded extraction, no model; otherwise the provider of 'model'.",
    )
    model: str | None = Field(default=None, description="Shorthand: one model as parser and validator.")
    base_url: str | None = Field(default=None, description="Shorthand: OpenAI-compatible server URL for 'model'.")
    model_info: dict[str, Any] | None = Field(
        default=None, description="Shorthand: autogen ModelInfo for 'model' when autogen does not know it."
    )
    timeout_s: float = Field(default=180.0, gt=0, description="Shorthand: seconds one request to 'model' may take.")
    max_retries: int = Field(default=2, ge=0, le=10, description="Shorthand: tries again after a failed request.")
    parsers: list[ModelConfig] = Field(default_factory=list, description="Parallel rule parsers (AutoMT used three).")
    validator: ModelConfig | None = Field(default=None, description="The model answering the validation questions.")
    include_offline_parser: bool = Field(default=True, description="Also propose the offline parser's candidates.")
    samples: int = Field(default=1, ge=1, le=10, description="Self-check samples per validation question.")
    crash_extractor: ModelConfig | Literal["offline"] | None = Field(
        default=None,
        description="The model reading crash reports (SAFE; vision-capable models also get the sketch); 'offline' "
        "keeps the rules (offline:crash-rules). Unset: the shorthand llm.model, else llm.validator, when llm.provider "
        "is not offline; otherwise offline.",
    )
    describer: ModelConfig | Literal["offline"] | None = Field(
        default=None,
        description="The vision model describing driving cases (AutoMT's T-Agent); 'offline' keeps image statistics "
        "(offline:image-statistics). Unset: the shorthand llm.model, else llm.validator, when llm.provider "
        "is not offline; otherwise offline.",
    )

    @model_validator(mode="after")
    def _expand_shorthand(self) -> LLMSettings:
        fields = type(self).model_fields
        shorthand_only = ("base_url", "model_info", "timeout_s", "max_retries")
        given = [k for k in shorthand_only if getattr(self, k) != fields[k].default]  # (a full dump has defaults)
        if given and not self.model:
            raise ValueError(
                f"llm.{given[0]} belongs to the shorthand llm.model, which is not set "
                "(give it on each model under llm.parsers / llm.validator instead)"
            )
        if self.provider != "offline" and not self.parsers:
            if not self.model:
                raise ValueError(f"llm.provider {self.provider!r} needs llm.model (or llm.parsers)")
            one = self.shorthand()
            self.parsers = [one]
            if self.validator is None:
                self.validator = one
        return self

    def shorthand(self) -> ModelConfig:
        """The one model the shorthand (``provider``, ``model``, ``base_url``, ``model_info``, ``timeout_s``,
        ``max_retries``) names."""
        if self.provider == "offline" or not self.model:
            raise ValueError("the llm shorthand needs a provider other than offline and a model")
        return ModelConfig(
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            model_info=self.model_info,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
        )

    @property
    def uses_llm(self) -> bool:
        """Whether any step calls a model."""
        return bool(self.parsers) or self.validator is not None


def build_model_client(config: ModelConfig, *, api_key: str | None = None) -> Any:
    """An autogen ``ChatCompletionClient`` for a model.

    Args:
        config: The model.
        api_key: Its key (read from the environment by the caller); not needed for replay or keyless local servers.

    Raises:
        LLMConfigurationError: If the provider is unknown, a key is missing, or a replay file is unreadable.
    """
    if config.provider == "openai":
        from autogen_ext.models.openai import OpenAIChatCompletionClient

        if not api_key and not config.base_url:
            raise LLMConfigurationError(f"{config.label} needs an API key in ${config.key_env} (or a base_url)")
        kwargs: dict[str, Any] = {
            "model": config.model,
            "temperature": config.temperature,
            "timeout": config.timeout_s,
            "max_retries": config.max_retries,
        }
        if config.base_url:
            kwargs["base_url"] = config.base_url
        kwargs["api_key"] = api_key or "not-needed"
        if config.model_info:
            kwargs["model_info"] = config.model_info
        try:
            return OpenAIChatCompletionClient(**kwargs)
        except ValueError as exc:  # unknown model without model_info
            raise LLMConfigurationError(
                f"{config.label}: {exc}; give model_info for this model (llm.model_info with the shorthand)"
            ) from exc
    if config.provider == "anthropic":
        from autogen_ext.models.anthropic import AnthropicChatCompletionClient

        if not api_key:
            raise LLMConfigurationError(f"{config.label} needs an API key in ${config.key_env}")
        kwargs = {
            "model": config.model,
            "temperature": config.temperature,
            "api_key": api_key,
            "timeout": config.timeout_s,
            "max_retries": config.max_retries,
        }
        if config.model_info:
            kwargs["model_info"] = config.model_info
        try:
            return AnthropicChatCompletionClient(**kwargs)
        except ValueError as exc:
            raise LLMConfigurationError(f"{config.label}: {exc}") from exc
    if config.provider == "replay":
        from autogen_ext.models.replay import ReplayChatCompletionClient

        if config.replay_file is None:
            raise LLMConfigurationError(f"{config.label}: the replay provider needs replay_file")
        try:
            answers = json.loads(Path(config.replay_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LLMConfigurationError(f"{config.label}: cannot read replay file {config.replay_file}: {exc}") from exc
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise LLMConfigurationError(f"{config.label}: replay file must be a JSON list of strings")
        info = config.model_info or {
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "structured_output": True,
            "family": "unknown",
        }
        return ReplayChatCompletionClient(answers, model_info=info)  # type: ignore[arg-type]
    raise LLMConfigurationError(f"unknown provider {config.provider!r}")


def describer_model(llm: LLMSettings) -> ModelConfig | None:
    """The model the T-Agent describes cases with, or None for the offline describer (same rule as the crash
    extractor's: ``llm.describer``, else the shorthand model or the validator when a provider is set)."""
    chosen = llm.describer
    if chosen == "offline":
        return None
    if isinstance(chosen, ModelConfig):
        return chosen
    if llm.provider == "offline":
        return None
    if llm.model:
        return llm.shorthand()
    return llm.validator


def crash_extractor_model(llm: LLMSettings) -> ModelConfig | None:
    """The model the CrashExtractor uses, or None for the offline extractor.

    ``llm.crash_extractor`` when given (``offline`` forces the rules); else, when ``llm.provider`` is not
    ``offline``, the shorthand ``llm.model`` or, without one, ``llm.validator``; else none. A plain
    """
    chosen = llm.crash_extractor
    if chosen == "offline":
        return None
    if isinstance(chosen, ModelConfig):
        return chosen
    if llm.provider == "offline":
        return None
    if llm.model:
        return llm.shorthand()
    return llm.validator
