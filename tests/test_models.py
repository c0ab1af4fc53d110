"""The model table must not rot: the default model is current, and every model is priced.

Fails when the installed SDK marks ``DEFAULT_MODEL`` deprecated or drops it from its model
list, when the default is missing from the kit's table, or when the SDK lists a model the
kit cannot price or limit.
"""

import datetime
import re
import typing
import warnings

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


def _end_of_life(text: str) -> datetime.date:
    """``"November 30th, 2026"`` (the SDK's wording) -> a date."""
    return datetime.datetime.strptime(re.sub(r"(\d)(st|nd|rd|th)", r"\1", text),
                                      "%B %d, %Y").date()


def test_models_past_their_end_of_life_are_retired_and_no_others():
    as_of = datetime.date.fromisoformat(models.MODELS_AS_OF)
    for model_id, when in DEPRECATED_MODELS.items():
        gone = _end_of_life(when) < as_of
        assert models.model_spec(model_id).retired == gone, (
            f"{model_id} reaches end-of-life on {when}; the table says retired="
            f"{models.model_spec(model_id).retired} as of {models.MODELS_AS_OF}")
    assert not models.model_spec(models.DEFAULT_MODEL).retired
    assert models.model_spec("claude-sonnet-4-5").retired   # end of life 2026-11-30
    assert not models.model_spec("claude-sonnet-4-6").retired


@pytest.mark.parametrize("model_id, status", [
    ("claude-sonnet-5-5", 200), ("claude-sonnet-4-6", 200),
    ("claude-sonnet-4-5", 404), ("claude-sonnet-4-5-20250929", 404),
    ("claude-mythos-preview", 404), ("claude-nonexistent-9", 404)])
def test_offline_answers_a_retired_or_unknown_model_with_the_apis_404(model_id, status):
    import anthropic

    from mini_agent.offline import offline_client
    client = offline_client(max_retries=0)
    if status == 200:
        reply = client.messages.create(model=model_id, max_tokens=50,
                                       messages=[{"role": "user", "content": "hi"}])
        assert reply.model == model_id
        return
    for call, extra in ((client.messages.create, {"max_tokens": 50}),
                        (client.messages.count_tokens, {})):
        with warnings.catch_warnings():   # the SDK warns of a deprecated id first
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(anthropic.NotFoundError) as caught:
                call(model=model_id, messages=[{"role": "user", "content": "hi"}], **extra)
        assert caught.value.status_code == 404
        assert caught.value.body["error"] == {"type": "not_found_error",
                                              "message": f"model: {model_id}"}


def test_a_malformed_body_is_a_400_before_the_model_is_looked_up():
    import anthropic

    from mini_agent.offline import offline_client
    with pytest.raises(anthropic.BadRequestError):
        offline_client(max_retries=0).messages.create(
            model="claude-nonexistent-9", max_tokens=50,
            messages=[{"role": "assistant", "content": "hi"}, {"role": "user", "content": 7}])
