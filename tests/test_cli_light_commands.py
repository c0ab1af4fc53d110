"""Commands that run no agent start without the anthropic SDK, as the command line's doc says
("``grade``, ``evaluate`` and the others start without the SDK")."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = ("import io, sys; from mini_agent.cli import main; "
         "main(sys.argv[1:], out=io.StringIO()); print('anthropic' in sys.modules)")


@pytest.mark.parametrize("argv", [["sessions"], ["make-exercises", "--check"]])
def test_a_command_that_runs_no_agent_does_not_import_the_sdk(tmp_path, argv):
    # `mini-agent sessions` imports harness.session, which imports the loop and the SDK:
    # 2.5 s of CPU against 0.3 s for `analyze` on the shared machine
    if argv == ["sessions"]:
        argv = argv + ["--sessions-dir", str(tmp_path)]
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
