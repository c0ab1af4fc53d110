"""The block-by-block walk that ``FlatPrefix`` must equal, shared by its tests."""

from __future__ import annotations


def flat_walk(infos, chain: dict, parent: int):
    """Walk message summaries block by block, as the flat prefix's plain definition reads.

    Args:
        infos: ``MessageInfo`` summaries, the system prompt's first.
        chain: ``(parent id, block key) -> id``, extended in place with ``setdefault``.
        parent: the root's chain id.

    Returns:
        ``(cum, pos, pid, starts)``: cumulative tokens, lookback positions and chain ids per
        block, and each message's first block index.
    """
    cum, pos, pid, starts = [], [], [], []
    total, next_pos = 0, 0
    for info in infos:
        starts.append(len(cum))
        for key, tokens, offset in zip(info.keys, info.tokens, info.offsets):
            total += tokens
            parent = chain.setdefault((parent, key), len(chain))
            cum.append(total)
            pos.append(next_pos + offset)
            pid.append(parent)
        next_pos += info.positions
    return cum, pos, pid, starts
