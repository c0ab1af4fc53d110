#!/bin/sh
# PreToolUse/PostToolUse hook: append every payload (one JSON line) to a log file.
# Log path: $MINI_AGENT_HOOK_LOG, else $CLAUDE_PROJECT_DIR/.mini-agent/tool_calls.jsonl.
# Prints nothing and exits 0, so it never changes the run.
log="${MINI_AGENT_HOOK_LOG:-${CLAUDE_PROJECT_DIR:-.}/.mini-agent/tool_calls.jsonl}"
mkdir -p "$(dirname "$log")" || exit 1
{ cat; echo; } >> "$log"
