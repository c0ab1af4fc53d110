"""``role: "system"`` mid-conversation, through the SDK: per model, as the API answers.

Opus 4.8 and later Opus models take a system message right after a user message; the other
models answer 400 ``Unexpected role "system"`` (ASSUMPTIONS in
``mini_agent/core/system_messages.py``). The same calls run online with
``MINI_AGENT_ONLINE_TESTS=1``.
"""

import os

import anthropic
import pytest

from mini_agent.core.models import MODELS
from mini_agent.core.system_messages import (FIRST_SYSTEM, MID_CONVERSATION_SYSTEM_MODELS,
                                             UNEXPECTED_SYSTEM_ROLE, accepts_system_messages,
                                             system_messages_problem)
from mini_agent.offline import ScriptedBrain, offline_client

OPUS = "claude-opus-4-8"
SONNET = "claude-sonnet-5-5"
MID = [{"role": "user", "content": "Hello"},
       {"role": "system", "content": "From now on, answer in French."},
       {"role": "assistant", "content": "Bonjour."},
       {"role": "user", "content": "And now?"}]

ONLINE = os.environ.get("MINI_AGENT_ONLINE_TESTS") == "1" and bool(
    os.environ.get("ANTHROPIC_API_KEY", "").strip())


@pytest.fixture(params=["offline", pytest.param("online", marks=[
    pytest.mark.online, pytest.mark.skipif(not ONLINE, reason="online tests need "
                                           "MINI_AGENT_ONLINE_TESTS=1 and ANTHROPIC_API_KEY")])])
def client(request):
    """The default offline client, and the real API when online tests are enabled."""
    if request.param == "online":
        return anthropic.Anthropic(max_retries=0)
    return offline_client(ScriptedBrain(["D'accord."]), max_retries=0)


def refusal(client, **kwargs):
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(max_tokens=16, **kwargs)
    assert info.value.body["error"]["type"] == "invalid_request_error"
    return info.value.body["error"]["message"]


def test_a_model_that_takes_the_role_answers(client):
    reply = client.messages.create(model=OPUS, max_tokens=16, messages=MID)
    assert reply.stop_reason == "end_turn"


def test_a_system_message_last_after_the_user_message_is_taken_too(client):
    reply = client.messages.create(model=OPUS, max_tokens=16, messages=MID[:2])
    assert reply.stop_reason == "end_turn"


def test_the_default_sonnet_refuses_the_role(client):
    assert refusal(client, model=SONNET, messages=MID) == UNEXPECTED_SYSTEM_ROLE


def test_a_system_message_first_must_be_the_top_level_field(client):
    message = refusal(client, model=OPUS, messages=[MID[1], *MID[:1]])
    assert message.startswith(FIRST_SYSTEM)


def test_a_system_message_after_the_assistant_is_misplaced(client):
    message = refusal(client, model=OPUS, messages=[*MID[:1], MID[2], MID[1], MID[3]])
    assert message.startswith("messages.2")


def test_the_rest_of_the_conversation_is_still_checked_without_it(client):
    message = refusal(client, model=OPUS, messages=[
        *MID[:2], {"role": "assistant", "content": []}, MID[3]])
    assert message.startswith("messages.1: all messages must have non-empty content")


def test_every_model_of_the_table_is_decided_and_the_accepting_ones_exist():
    assert MID_CONVERSATION_SYSTEM_MODELS <= set(MODELS)
    decided = {m: accepts_system_messages(m) for m in MODELS}
    assert sorted(m for m, yes in decided.items() if yes) == sorted(MID_CONVERSATION_SYSTEM_MODELS)
    assert accepts_system_messages("claude-opus-4-8-20260520")      # a dated id
    assert not accepts_system_messages("claude-opus-4-7")


def test_problem_texts_name_the_index():
    assert system_messages_problem([*MID[:1], MID[1], MID[1]], OPUS) == (
        "messages.2: a system message must come immediately after a user message")
    assert system_messages_problem([*MID[:1], {"role": "system", "content": " "}], OPUS) == (
        "messages.1.content: a system message holds non-empty text blocks only")
    assert system_messages_problem(MID, OPUS) is None
    assert system_messages_problem("not a list", SONNET) is None
