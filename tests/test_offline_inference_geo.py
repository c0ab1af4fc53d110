"""US-only inference: priced at 1.1x, and refused on the models older than Opus 4.6.

The reply of a request with ``inference_geo: "us"`` says so in its usage, and
:func:`mini_agent.core.pricing.cost_usd` prices that usage (the SDK's ``Usage`` or its dict)
at 1.1 times the global price, every token kind included; the offline API answers a 400 for
``inference_geo`` on an older model, as the API does.
"""

import anthropic
import pytest

from mini_agent.core.pricing import US_INFERENCE_MULTIPLIER, cost_usd, usages_cost_usd
from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain

OPUS = "claude-opus-4-6"
SYSTEM = [{"type": "text", "text": "You are a careful coding agent. " * 600,
           "cache_control": {"type": "ephemeral"}}]
ASK = [{"role": "user", "content": "Hello there"}]


def two_replies(model=OPUS, **kwargs):
    """The same request sent twice to one offline API: a cache write, then a cache read."""
    client = offline_client(ScriptedBrain(["Hi! " * 40, "Hi! " * 40]))
    return [client.messages.create(model=model, max_tokens=300, system=SYSTEM, messages=ASK,
                                   **kwargs) for _ in range(2)]


def test_us_inference_costs_one_point_one_times_the_global_price():
    us = two_replies(inference_geo="us")
    world = two_replies(inference_geo="global")
    assert [r.usage.inference_geo for r in us] == ["us", "us"]
    assert us[0].usage.cache_creation_input_tokens > 0 and us[1].usage.cache_read_input_tokens > 0
    for mine, base in zip(us, world):
        assert mine.usage.output_tokens == base.usage.output_tokens > 0
        assert cost_usd(mine.usage, OPUS) == cost_usd(base.usage, OPUS) * 1.1
        assert cost_usd(mine.usage.model_dump(), OPUS) == cost_usd(mine.usage, OPUS)
        assert cost_usd(mine.usage, OPUS, include_output=False) == \
            cost_usd(base.usage, OPUS, include_output=False) * US_INFERENCE_MULTIPLIER
    assert usages_cost_usd([r.usage for r in us], OPUS) == \
        cost_usd(us[0].usage, OPUS) + cost_usd(us[1].usage, OPUS)


def test_the_global_default_is_priced_as_before():
    default = two_replies()[0].usage
    assert default.inference_geo == "global"
    usage = default.model_dump()
    assert cost_usd(usage, OPUS) == cost_usd({k: v for k, v in usage.items()
                                              if k != "inference_geo"}, OPUS)
    # 1h of the price by hand: the write at 1.25x, the output at $25 per MTok
    assert cost_usd(usage, OPUS) == (
        usage["input_tokens"] + usage["cache_creation_input_tokens"] * 1.25) * 5 / 1e6 \
        + usage["output_tokens"] * 25 / 1e6


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-opus-4-5",
                                   "claude-haiku-4-5-20251001"])
@pytest.mark.parametrize("geo", ["us", "global"])
@pytest.mark.filterwarnings("ignore:The model 'claude-opus-4-5' is deprecated:DeprecationWarning")
def test_a_model_older_than_opus_4_6_refuses_inference_geo(model, geo):
    client = offline_client(ScriptedBrain(["Hi"]))
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=model, max_tokens=100, messages=ASK, inference_geo=geo)
    assert info.value.status_code == 400
    assert info.value.body["error"]["type"] == "invalid_request_error"
    assert info.value.body["error"]["message"].startswith("inference_geo:")
    # without the parameter the same model is served
    assert client.messages.create(model=model, max_tokens=100, messages=ASK).content
