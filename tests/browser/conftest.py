"""Fixtures for the real-browser tests: one JupyterLab server and one Chromium page per run.

The server runs on 127.0.0.1 at a free port, without a token, over a temporary copy of the
repository's ``notebooks/`` and ``exercises/`` as a student has them, without ``solutions/``
(grading walks up from the notebook to the folder holding ``exercises/``), with its settings and workspaces in that
temporary folder too: Lab's autosave and workspace files never touch the repository, and the
test checks that the repository's notebooks are byte-identical afterwards. News and update
checks are off. Chromium is Debian's ``/usr/bin/chromium``, driven by Playwright with
``executable_path`` (Playwright never downloads a browser here).

Missing Chromium or Playwright: the tests fail under CI (``CI`` set, as ``.ci/run`` does) and
are skipped otherwise, with the command that installs what is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("MINI_AGENT_CHROMIUM", "/usr/bin/chromium"))
COPIED_FOLDERS = ("notebooks", "exercises")   # a student's copy: no solutions/
SERVER_START_SECONDS = 60
SUMMARY: dict = {"artifacts": None, "lines": []}
"""What the terminal summary prints: the screenshots' folder and one timing line per notebook."""
LAB_SETTINGS = {
    # no news feed, no update check: nothing asks for the internet, no pop-up covers a notebook
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}


def _missing_tools() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is absent (as root: apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where screenshots go: ``$MINI_AGENT_BROWSER_ARTIFACTS`` or a new temporary folder."""
    folder = Path(os.environ.get("MINI_AGENT_BROWSER_ARTIFACTS")
                  or tempfile.mkdtemp(prefix="mini-agent-browser-"))
    folder.mkdir(parents=True, exist_ok=True)
    SUMMARY["artifacts"] = folder
    return folder


@pytest.fixture(scope="session")
def browser_summary() -> list[str]:
    """Lines for the end of the run (per notebook: timings, charts, controls)."""
    return SUMMARY["lines"]


def pytest_terminal_summary(terminalreporter):
    """Print where the screenshots are and how long each notebook took, even without -s."""
    if SUMMARY["artifacts"] is None:
        return
    terminalreporter.section("browser")
    for line in SUMMARY["lines"]:
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"screenshots: {SUMMARY['artifacts']}")


@pytest.fixture(scope="session")
def lab_server():
    """Start JupyterLab over a temporary copy of the notebooks; yield (base URL, copy root).

    Stops the server (and its kernels) at the end, then checks the repository's notebooks did
    not change.
    """
    reason = _missing_tools()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    before = _tree_digest(REPO / "notebooks")
    workdir = Path(tempfile.mkdtemp(prefix="mini-agent-lab-"))
    root = workdir / "kit"
    for name in COPIED_FOLDERS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, root / name)
    settings = workdir / "settings"
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    port = _free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--port-retries=0", "--IdentityProvider.token=",
               "--ServerApp.password=", f"--ServerApp.root_dir={root}",
               f"--LabApp.user_settings_dir={settings}",
               f"--LabApp.workspaces_dir={workdir / 'workspaces'}", "--LabApp.news_url=",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(workdir / "config"))
    log = open(workdir / "lab.log", "wb")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/api/status", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start: "
                                       + (workdir / "lab.log").read_text()[-2000:])
                time.sleep(0.25)
        yield base_url, root
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
    assert _tree_digest(REPO / "notebooks") == before, "the repository's notebooks changed"


@pytest.fixture(scope="session")
def lab_page(lab_server):
    """One Chromium page for all notebooks; yields (page, console errors list)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        console_errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
        page.on("pageerror", lambda e: console_errors.append(f"page error: {e}"))
        try:
            yield page, console_errors
        finally:
            browser.close()

