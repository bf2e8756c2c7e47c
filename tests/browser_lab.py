"""JupyterLab in a real browser, for ``test_browser.py``.

``Lab`` serves a *copy* of the lessons (so autosaved outputs never reach the committed notebooks)
from this Python (the project's venv) on a free port with a token. Everything JupyterLab and the
kernels write goes to a temporary folder: settings, workspaces, runtime files, the course's runtime
folder (Milvus Lite, history files). ``LabPage`` drives one browser tab through the lab with
Playwright: open a lesson, Run All from the menu, wait for the kernel, read outputs, move a slider,
switch theme, take screenshots. The browser is the system's Chromium (Debian's ``chromium``
package); Playwright never downloads one.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# Flags that work on machines with a closed network (no GPU, no sandbox as root, no background
# connections to Google's hosts). Playwright gives every launch a new empty profile.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

# User settings written before the lab starts: no update check or news pop-up over the page.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "checkForUpdates": False, "fetchNews": "false"},
    "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": THEMES["light"]},
}

ERROR_TEXTS = ("Traceback (most recent call last)", "Error displaying widget")


def find_chromium() -> tuple[str | None, str]:
    """The system's Chromium: ``$CHROMIUM`` if set, else ``chromium`` / ``chromium-browser`` on
    PATH. Returns (path, "") or (None, the reason in one line)."""
    if os.environ.get("CHROMIUM"):
        path = os.environ["CHROMIUM"]
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path, ""
        return None, f"CHROMIUM={path} is not an executable file"
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path, ""
    return None, "Chromium not found (apt-get install chromium, or set CHROMIUM=/path/to/chromium)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A JupyterLab server over a temporary copy of ``notebooks``.

    Args:
        notebooks: the folder to copy and serve as the lab's root (like ``make lab``).
        workdir: an empty temporary folder for the copy, the logs and every settings folder.
        env: the environment for the server and its kernels (the tests' offline environment).
    """

    def __init__(self, notebooks: Path, workdir: Path, env: dict[str, str]) -> None:
        self.root = workdir / "notebooks"
        shutil.copytree(notebooks, self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        self.workdir = workdir
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "jupyterlab.log"
        settings = workdir / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(values), encoding="utf-8")
        self.env = {
            **env,
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(workdir / "lab-workspaces"),
            "JUPYTER_CONFIG_DIR": str(workdir / "jupyter-config"),
            "JUPYTER_DATA_DIR": str(workdir / "jupyter-data"),
            "JUPYTER_RUNTIME_DIR": str(workdir / "jupyter-runtime"),
            "IPYTHONDIR": str(workdir / "ipython"),
            "MPLCONFIGDIR": str(workdir / "matplotlib"),
            "PYTHONUNBUFFERED": "1",
        }
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Lab:
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
            "--ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}", "--ServerApp.port_retries=0",
            "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")
        self.log = self.log_path.open("w")
        self.process = subprocess.Popen(command, cwd=self.root, env=self.env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status")
                return self
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(f"JupyterLab did not answer within 90 s:\n{self.log_tail()}")

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            try:
                self.shutdown_kernels()
            except (urllib.error.URLError, ConnectionError):
                pass
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(self.url + path, method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut every kernel down (Milvus Lite's folder is locked until its kernel exits)."""
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"

    def log_tail(self, lines: int = 30) -> str:
        self.log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


# JavaScript run in the page: the notebook's state as the user sees it.
_STATE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim());
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  return {prompts, status: indicator ? indicator.getAttribute('data-status') : null};
}"""


class LabPage:
    """One browser tab in the lab. ``page`` is a Playwright ``Page``."""

    def __init__(self, page, lab: Lab) -> None:
        self.page = page
        self.lab = lab

    def open(self, name: str, timeout: float = 60) -> None:
        """Open a notebook and wait until its kernel is connected and idle."""
        self.page.goto(self.lab.notebook_url(name))
        self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(
            timeout=timeout * 1000)
        self.page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"\|\s*Idle")).first.wait_for(
            timeout=timeout * 1000)
        self.wait_idle(timeout, require_run=False)

    def state(self) -> dict:
        return self.page.evaluate(_STATE_JS) or {"prompts": [], "status": None}

    def menu(self, *labels: str) -> None:
        """Click through the main menu, e.g. ``menu("Run", "Run All Cells")``."""
        self.page.locator(".lm-MenuBar-item").filter(
            has_text=re.compile(rf"^{re.escape(labels[0])}$")).click()
        for label in labels[1:]:
            self.page.locator(".lm-Menu:visible .lm-Menu-item").filter(
                has=self.page.locator(".lm-Menu-itemLabel",
                                      has_text=re.compile(rf"^{re.escape(label)}$"))).first.click()

    def run_all(self, timeout: float) -> float:
        """Run → Run All Cells, then wait until every code cell ran and the kernel is idle.
        Returns the seconds it took. The menu item is tried again if no cell started (it does
        nothing while the kernel is still connecting)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        began = time.monotonic()
        for _attempt in range(3):
            self.menu("Run", "Run All Cells")
            try:
                self.page.wait_for_function(
                    "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                    ".jp-CodeCell .jp-InputPrompt')].some(p => /[*0-9]/.test(p.textContent))",
                    timeout=15_000)
                break
            except PlaywrightTimeout:
                self.page.keyboard.press("Escape")
        else:
            raise TimeoutError("Run → Run All Cells started no cell (3 tries)")
        self.wait_idle(timeout, require_run=True)
        return time.monotonic() - began

    def wait_idle(self, timeout: float, require_run: bool) -> None:
        """Wait until the kernel is idle and no cell is queued (``[*]``); with ``require_run``,
        also until the run has ended (every code cell numbered, or it stopped on an error)."""
        deadline = time.monotonic() + timeout
        stable = 0
        state: dict = {}
        while time.monotonic() < deadline:
            state = self.state()
            prompts = state["prompts"]
            busy = state["status"] != "idle" or any("*" in p for p in prompts)
            ran = any(re.search(r"\d", p) for p in prompts)
            if not busy and (ran or not require_run):
                stable += 1
                if stable >= 3:  # idle for three polls in a row: the queue is empty
                    return
            else:
                stable = 0
            self.page.wait_for_timeout(500)
        raise TimeoutError(f"kernel still busy after {timeout:.0f} s: {state}")

    def cells_not_run(self) -> int:
        """Code cells without an execution count after a run (a run stops at an error)."""
        return sum(not re.search(r"\d", p) for p in self.state()["prompts"])

    def errors(self) -> list[str]:
        """Texts of outputs that show an error: a traceback (stderr or error output) or a widget
        that failed to render."""
        texts = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output")
        found = []
        for text in texts.all_inner_texts():
            if any(marker in text for marker in ERROR_TEXTS):
                found.append(text.strip()[:2000])
        return found

    def kernel_log_errors(self) -> list[str]:
        """Errors in JupyterLab's Log Console for the current notebook (View → Show Log Console):
        output the kernel sent outside any cell, such as a traceback from a widget's callback.
        Returns the last line of each traceback (``SomeError: message``)."""
        self.menu("View", "Show Log Console")
        panel = self.page.locator(".jp-LogConsolePanel").first
        panel.wait_for(timeout=10_000)
        self.page.wait_for_timeout(500)
        errors = []
        for block in panel.inner_text().split("Traceback (most recent call last)")[1:]:
            last = [line.strip() for line in block.splitlines()
                    if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b", line.strip())]
            errors.append(last[-1][:500] if last else "a traceback (see the Log Console)")
        return errors

    def saved_error_outputs(self, name: str, timeout: float = 30) -> list[str]:
        """Save the notebook (its toolbar's save button) and return the error outputs in the
        saved file: ``ename: evalue`` of every output of type ``error``. This catches an error
        whose rendering shows no "Traceback" line (a SyntaxError, say)."""
        path = self.lab.root / name
        before = path.stat().st_mtime_ns
        self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                          "[data-command='docmanager:save']").first.click()
        deadline = time.monotonic() + timeout
        while path.stat().st_mtime_ns == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} was not saved within {timeout:.0f} s")
            self.page.wait_for_timeout(250)
        self.page.wait_for_timeout(250)  # let the write finish
        notebook = json.loads(path.read_text(encoding="utf-8"))
        return [f"{output.get('ename')}: {output.get('evalue')}"
                for cell in notebook["cells"] for output in cell.get("outputs", [])
                if output.get("output_type") == "error"]

    def code_cell(self, source_snippet: str):
        """The code cell whose source contains ``source_snippet`` (exactly one)."""
        cells = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").filter(
            has=self.page.locator(".jp-InputArea-editor", has_text=source_snippet))
        count = cells.count()
        if count != 1:
            raise AssertionError(f"{count} code cells contain {source_snippet!r}, expected 1")
        return cells

    def slider(self, cell, label: str):
        """The ipywidgets slider in ``cell``'s output whose description is ``label``."""
        sliders = cell.locator(".jp-OutputArea .widget-slider").filter(
            has=self.page.locator(".widget-label", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")))
        sliders.first.wait_for(timeout=30_000)
        return sliders.first

    @staticmethod
    def view_html(cell) -> str:
        """What the explorer shows: the HTML of every HTML widget in the cell's output (not the
        controls, so a slider's own readout is not counted as a change)."""
        return "\n".join(cell.locator(".jp-OutputArea .widget-html-content").evaluate_all(
            "nodes => nodes.map(n => n.innerHTML)"))

    def view_after_change(self, cell, before: str, timeout: float = 10) -> str:
        """The explorer's view once it differs from ``before``, or as it is after ``timeout``
        seconds (a busy machine may take a while to replay)."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.view_html(cell)
            if now != before or time.monotonic() > deadline:
                return now
            self.page.wait_for_timeout(250)

    def move_slider(self, cell, label: str, keys: list[str], timeout: float = 30) -> tuple[str, str]:
        """Press ``keys`` on a slider's handle (as a keyboard user would) and wait until the
        slider's readout changed and the kernel is idle. Returns (readout before, after)."""
        slider = self.slider(cell, label)
        readout = slider.locator(".widget-readout")
        before = readout.text_content().strip()
        handle = slider.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        for key in keys:
            handle.press(key)
        # Sliders with continuous_update=False send the value when the handle is released: blur.
        handle.evaluate("node => node.blur()")
        self.page.wait_for_function(
            "([node, before]) => node.textContent.trim() !== before", arg=[readout.element_handle(), before],
            timeout=timeout * 1000)
        self.wait_idle(timeout, require_run=False)
        return before, readout.text_content().strip()

    def change_theme(self, theme: str) -> None:
        """Settings → Theme → ``theme`` (a name of THEMES), and wait for the page to switch."""
        self.menu("Settings", "Theme", THEMES[theme])
        wanted = "true" if theme == "light" else "false"
        self.page.wait_for_function(
            f"() => document.body.dataset.jpThemeLight === '{wanted}'", timeout=15_000)
        self.page.wait_for_timeout(300)  # let the new colours paint

    def screenshot(self, path: Path, cell=None) -> None:
        """A screenshot of the window as the learner sees it, scrolled to ``cell`` when given;
        then of the cell's whole output (``<path>-explorer.png``), with the window made tall
        enough to hold it (JupyterLab scrolls inside a panel, so a plain element screenshot
        would be cut at the window's bottom)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if cell is not None:
            cell.evaluate("node => node.scrollIntoView({block: 'start'})")
            self.page.wait_for_timeout(200)
        self.page.screenshot(path=str(path))
        if cell is None:
            return
        output = cell.locator(".jp-OutputArea").first
        viewport = self.page.viewport_size
        height = output.evaluate("node => node.scrollHeight")
        self.page.set_viewport_size({"width": viewport["width"],
                                     "height": min(viewport["height"] + height, 8000)})
        try:
            self.page.wait_for_timeout(300)
            output.evaluate("node => node.scrollIntoView({block: 'start'})")
            output.screenshot(path=str(path.with_name(path.stem + "-explorer.png")))
        finally:
            self.page.set_viewport_size(viewport)
