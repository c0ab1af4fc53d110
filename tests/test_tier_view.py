"""Tests for mini_agent.core.tier_view: the view for given tiers equals building it plainly."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from mini_agent.core.exchange_memo import ExchangeMemo, split_exchanges
from mini_agent.core.masking import mask_old_observations
from mini_agent.core.tier_forms import (COLD, COLD_INDEX_HEADER, HOT, TIERS, TIMELINE_HEADER,
                                        WARM_A, WARM_B, segment_id)
from mini_agent.core.tier_view import render_tiers, scan_sums
from mini_agent.core.history_scan import scan_for
from mini_agent.core.messages import content_blocks, text_block
from mini_agent.core.timeline import cold_label, fold_exchange
from mini_agent.core.tokens import approx_tokens, token_memo
from strategies import histories, hostile_histories

T0 = 1_767_225_600.0


def _plain(history, tiers, times):
    """The view, parts and view tokens, each tier form built by its plain function."""
    ranges = split_exchanges(history)
    body, lines, index, cold = [], [], [], []
    tokens = dict.fromkeys(TIERS, 0)
    tokens[HOT] = approx_tokens(history[:1])
    for k, ((s, e), tier) in enumerate(zip(ranges, tiers)):
        part, segment = history[s:e], segment_id(k + 1)
        if tier == HOT:
            body += part
            tokens[HOT] += approx_tokens(part)
        elif tier == WARM_A:
            masked = mask_old_observations(part, keep=0)
            body += masked
            tokens[WARM_A] += approx_tokens(masked)
        elif tier == WARM_B:
            lines.append(fold_exchange(part, segment=segment, time_seconds=times[s]))
            tokens[WARM_B] += approx_tokens(lines[-1])
        else:
            index.append(f"{segment}: {cold_label(part)}")
            tokens[COLD] += approx_tokens(index[-1])
            cold.append((segment, cold_label(part), times[s], part))
    texts = ([COLD_INDEX_HEADER + "\n" + "\n".join(index)] if index else []) + \
        ([TIMELINE_HEADER + "\n" + "\n".join(lines)] if lines else [])
    head = history[0]
    if texts:
        head = {"role": head["role"], "content": [*content_blocks(head),
                                                  *map(text_block, texts)]}
    view = [head, *body]
    return view, {"tokens": tokens, "timeline": lines, "cold_index": index,
                  "cold": cold}, approx_tokens(view)


@settings(max_examples=80, deadline=None)
@given(st.one_of(histories(max_turns=7), hostile_histories(max_turns=12)),
       st.lists(st.lists(st.sampled_from(TIERS), max_size=14), min_size=1, max_size=4),
       st.sampled_from(["none", "memo", "scan"]))
def test_render_equals_building_the_view_plainly_request_after_request(history, requests, how):
    """One memo through growing histories, as a policy keeps it, with Hot runs anywhere."""
    times = [T0 + 60 * i for i in range(len(history))]
    before = copy.deepcopy(history)
    memo = ExchangeMemo()
    with token_memo() if how != "none" else _nothing():
        for n, tiers in enumerate(requests):
            h = history[:max(1, len(history) * (n + 1) // len(requests))]
            if how == "scan":
                scan_for(h)
            ranges = memo.update(h)
            tiers = (tiers + [HOT] * len(ranges))[:len(ranges)]
            sums = scan_sums(h)
            assert (sums is not None) == (how == "scan")
            got = render_tiers(h, ranges, tiers, times, memo, sums)
            assert got == _plain(h, tiers, times)
            assert got[2] == approx_tokens(got[0])
    assert history == before


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
