"""Configuration precedence (defaults < YAML file < DRIVEMT_* environment < command line) and `config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runners.cli import app
from runners.config import ConfigError, explain_config, load_config


@pytest.fixture
def yaml_file(tmp_path: Path) -> Path:
    path = tmp_path / "drivemt.yaml"
    path.write_text("log_level: info\nembedder:\n  batch_size: 16\nllm:\n  samples: 3\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test from an environment with no DRIVEMT_ variables."""
    import os

    for name in list(os.environ):
        if name.startswith("DRIVEMT_"):
            monkeypatch.delenv(name)


def test_defaults_apply_without_any_source() -> None:
    """With no file, environment or option, every value is its default."""
    cfg = load_config()
    assert cfg.log_level == "info" and cfg.embedder.batch_size == 64 and cfg.llm.samples == 1


def test_file_beats_defaults(yaml_file: Path) -> None:
    """A YAML file's values replace the defaults, nested keys one by one."""
    cfg = load_config(yaml_file)
    assert cfg.embedder.batch_size == 16 and cfg.embedder.device == "cpu" and cfg.llm.samples == 3


def test_environment_beats_the_file(yaml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DRIVEMT_LOG_LEVEL=debug beats log_level: info in the file; a nested variable merges with the file's section."""
    monkeypatch.setenv("DRIVEMT_LOG_LEVEL", "debug")
    monkeypatch.setenv("DRIVEMT_EMBEDDER__DEVICE", "cuda")
    cfg = load_config(yaml_file)
    assert cfg.log_level == "debug"
    assert cfg.embedder.device == "cuda" and cfg.embedder.batch_size == 16


def test_command_line_beats_the_environment(yaml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An option given on the command line wins over the environment and the file."""
    monkeypatch.setenv("DRIVEMT_LOG_LEVEL", "debug")
    assert load_config(yaml_file, log_level="error").log_level == "error"
    assert load_config(yaml_file, log_level=None).log_level == "debug"  # an unset option is no override


def test_bad_files_and_values_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing file, a non-mapping file and an invalid value each name the problem."""
    with pytest.raises(ConfigError, match="nope.yaml"):
        load_config(tmp_path / "nope.yaml")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(tmp_path / "list.yaml")
    monkeypatch.setenv("DRIVEMT_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError, match="log_level"):
        load_config()


def test_explain_names_each_source_and_masks_secrets(yaml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each value is attributed to its source, and credentials in URLs never show."""
    monkeypatch.setenv("DRIVEMT_LOG_LEVEL", "debug")
    _, values = explain_config(yaml_file, nats_url="nats://alice:s3cret@localhost:4222")
    by_key = {v.key: v for v in values}
    assert by_key["log_level"].source == "environment (DRIVEMT_LOG_LEVEL)" and by_key["log_level"].value == "debug"
    assert by_key["embedder.batch_size"].source == f"file {yaml_file}"
    assert by_key["nats_url"].source == "command line" and "s3cret" not in str(by_key["nats_url"].value)
    assert by_key["seed"].source == "default"


def test_config_show_json_prints_the_effective_values(yaml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`drivemt config show --json` prints the effective values with their sources, no secret included."""
    monkeypatch.setenv("DRIVEMT_LOG_LEVEL", "debug")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    result = CliRunner().invoke(
        app, ["config", "show", "--json", "--config", str(yaml_file), "--nats-url", "nats://tok3n@localhost:1"]
    )
    assert result.exit_code == 0, result.output
    assert "sk-very-secret-value" not in result.stdout and "tok3n" not in result.stdout
    shown = json.loads(result.stdout)
    assert shown["values"]["log_level"] == "debug" and shown["values"]["embedder"]["batch_size"] == 16
    assert shown["sources"]["log_level"] == "environment (DRIVEMT_LOG_LEVEL)"
    assert shown["secrets"]["OPENAI_API_KEY"] == "set"


def test_an_agent_configured_in_part_keeps_its_own_defaults(tmp_path: Path) -> None:
    """`agents: {sim_runner: {copies: 2}}` keeps the simulator's one handler call at a time and its lack of a handler
    deadline (the generic defaults replaced them: two calls in flight, and an hour's limit)."""
    cfg_file = tmp_path / "drivemt.yaml"
    cfg_file.write_text("agents:\n  sim_runner:\n    copies: 2\n  judge:\n    concurrency: 4\n")
    agents = load_config(cfg_file).agents
    assert (agents.sim_runner.copies, agents.sim_runner.concurrency, agents.sim_runner.handler_timeout_s) == (
        2,
        1,
        None,
    )
    assert (agents.judge.concurrency, agents.judge.handler_timeout_s) == (4, None)
    assert agents.m_agent.handler_timeout_s == 3600.0 and agents.validator.concurrency == 1
