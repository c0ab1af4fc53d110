"""The thinking modes a model takes, through the real SDK client over the offline API.

A model that thinks only adaptively refuses budgeted thinking with the API's 400, and takes
``{"type": "disabled"}`` (public reports of today's API: clients send it to turn thinking
off on those models, pydantic/pydantic-ai#8206, elidickinson/pi-claude-bridge#29); an older
model takes budgeted thinking and refuses adaptive.
"""

import anthropic
import pytest

from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain

ASK = [{"role": "user", "content": "Hello there"}]
BUDGET = {"type": "enabled", "budget_tokens": 2048}


def create(model, thinking):
    client = offline_client(ScriptedBrain(["Hi"]))
    return client.messages.create(model=model, max_tokens=4000, messages=ASK,
                                  thinking=thinking)


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-opus-4-7", "claude-fable-5"])
def test_an_adaptive_only_model_refuses_a_thinking_budget(model):
    with pytest.raises(anthropic.BadRequestError) as info:
        create(model, BUDGET)
    assert info.value.status_code == 400
    assert info.value.body["error"] == {
        "type": "invalid_request_error",
        "message": '"thinking.type.enabled" is not supported for this model. Use '
                   '"thinking.type.adaptive" and "output_config.effort" to control '
                   'thinking behavior.'}


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-opus-4-7", "claude-fable-5"])
@pytest.mark.parametrize("thinking", [{"type": "disabled"}, {"type": "adaptive"}])
def test_an_adaptive_only_model_takes_adaptive_and_disabled(model, thinking):
    assert create(model, thinking).content[0].text == "Hi"


def test_an_older_model_takes_a_budget_and_refuses_adaptive():
    assert create("claude-haiku-4-5", BUDGET).content[0].text == "Hi"
    with pytest.raises(anthropic.BadRequestError) as info:
        create("claude-haiku-4-5", {"type": "adaptive"})
    assert info.value.body["error"]["message"] == \
        "adaptive thinking is not supported on this model."
