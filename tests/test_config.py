"""The model constant must not rot: it is overridable and not deprecated by the installed SDK."""

from anthropic._data import DEPRECATED_MODELS

from mini_agent.harness import config


def test_default_model_is_not_deprecated_by_installed_sdk():
    assert config.DEFAULT_MODEL not in DEPRECATED_MODELS, (
        f"{config.DEFAULT_MODEL} reaches end-of-life on {DEPRECATED_MODELS.get(config.DEFAULT_MODEL)}"
        "; pick a current model in mini_agent/harness/config.py")


def test_deprecation_table_is_the_one_we_check():
    # the check above is only meaningful if the SDK still ships a non-empty table
    assert len(DEPRECATED_MODELS) > 0


def test_model_env_override(monkeypatch):
    monkeypatch.setenv("MINI_AGENT_MODEL", "claude-test-model")
    assert config.model_name() == "claude-test-model"
    monkeypatch.setenv("MINI_AGENT_MODEL", "  ")
    assert config.model_name() == config.DEFAULT_MODEL
    monkeypatch.delenv("MINI_AGENT_MODEL")
    assert config.model_name() == config.DEFAULT_MODEL


def test_is_online_reads_the_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert config.is_online() is False
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert config.is_online() is True
