"""The model table must not rot: the default model is current, and every model is priced.

Fails when the installed SDK marks ``DEFAULT_MODEL`` deprecated or drops it from its model
list, when the default is missing from the kit's table, or when the SDK lists a model the
kit cannot price or limit.
"""

import typing

import pytest
from anthropic._data import DEPRECATED_MODELS
from anthropic.types import Model

from mini_agent.core import models
from mini_agent.core.pricing import cost_usd, model_price

SDK_MODELS = [m for m in typing.get_args(typing.get_args(Model)[0])]


def test_sdk_model_list_is_the_one_we_check():
    assert "claude-sonnet-5-5" in SDK_MODELS and len(SDK_MODELS) > 10


def test_default_model_is_current_in_the_installed_sdk():
    assert models.DEFAULT_MODEL in SDK_MODELS, f"{models.DEFAULT_MODEL} is not in the SDK"
    assert models.DEFAULT_MODEL not in DEPRECATED_MODELS, (
        f"{models.DEFAULT_MODEL} reaches end-of-life on "
        f"{DEPRECATED_MODELS.get(models.DEFAULT_MODEL)}; pick a current model")
    assert models.DEFAULT_MODEL in models.MODELS


def test_default_model_is_the_current_sonnet():
    assert models.DEFAULT_MODEL == "claude-sonnet-5-5"


@pytest.mark.parametrize("model_id", SDK_MODELS)
def test_every_sdk_model_has_a_row(model_id):
    spec = models.model_spec(model_id)
    assert spec.input_usd_per_mtok > 0 and spec.output_usd_per_mtok > 0
    assert spec.context_window_tokens >= 200_000
    assert spec.max_output_tokens >= 64_000
    assert spec.min_cacheable_tokens in (512, 1024, 2048, 4096)


@pytest.mark.parametrize("model_id, input_usd, output_usd", [
    ("claude-opus-4-7", 5.0, 25.0), ("claude-opus-4-8", 5.0, 25.0),
    ("claude-opus-5", 5.0, 25.0), ("claude-opus-5-5", 4.0, 20.0),
    ("claude-sonnet-5", 2.0, 10.0), ("claude-sonnet-5-5", 2.0, 10.0),
    ("claude-sonnet-4-6", 3.0, 15.0), ("claude-fable-5-1", 10.0, 50.0),
    ("claude-haiku-4-5", 1.0, 5.0), ("claude-haiku-4-5-20251001", 1.0, 5.0)])
def test_prices_are_exact_per_id(model_id, input_usd, output_usd):
    price = model_price(model_id)
    assert (price.input_usd_per_mtok, price.output_usd_per_mtok) == (input_usd, output_usd)


@pytest.mark.parametrize("model_id, read_usd", [
    ("claude-sonnet-4-6", 0.30), ("claude-opus-5", 0.50), ("claude-fable-5", 1.00),
    ("claude-fable-5-1", 0.25), ("claude-mythos-5-1", 0.25), ("claude-opus-5-5", 0.20)])
def test_cache_read_price_follows_the_model(model_id, read_usd):
    cost = cost_usd({"cache_read_input_tokens": 1_000_000}, model_id)
    assert cost == pytest.approx(read_usd)


def test_an_unknown_id_is_not_priced_by_prefix():
    with pytest.raises(KeyError):
        model_price("claude-opus-4-9")


@pytest.mark.parametrize("model_id, window", [
    ("claude-sonnet-5-5", 1_000_000), ("claude-sonnet-4-6", 1_000_000),
    ("claude-haiku-4-5", 200_000), ("claude-opus-4-5", 200_000)])
def test_context_windows(model_id, window):
    assert models.model_spec(model_id).context_window_tokens == window
