"""helpers.course.frontend_check: lesson 00's widget front-end check, on this environment and on faults."""

from __future__ import annotations

import json
import re
from importlib import metadata

from helpers.course import frontend_check
from helpers.course.frontend_check import MANAGER, check_widget_frontend


def test_this_environment_matches(capsys):
    problems = check_widget_frontend()
    out = capsys.readouterr().out
    assert problems == []
    found = re.search(r"kernel: ipywidgets (\S+); needs jupyterlab_widgets (\S+), found (\S+)\n"
                      rf"front end: {MANAGER} (\S+), enabled\n", out)
    assert found, out
    ipywidgets, required, lab_widgets, frontend = found.groups()
    assert ipywidgets == metadata.version("ipywidgets")
    assert lab_widgets == metadata.version("jupyterlab_widgets")
    assert required.startswith("~=3.0") and frontend.startswith("5.")
    assert "✅ Widgets will render" in out and "Fix:" not in out


def test_front_end_too_old_for_the_kernel(monkeypatch, capsys):
    versions = {"ipywidgets": "8.1.9", "jupyterlab_widgets": "1.1.7"}
    monkeypatch.setattr(frontend_check, "_version", versions.get)
    monkeypatch.setattr(frontend_check, "_required_range", lambda: "~=3.0.17")
    monkeypatch.setattr(frontend_check, "_frontend", lambda: "3.1.0")
    problems = check_widget_frontend()
    out = capsys.readouterr().out
    assert len(problems) == 2
    assert "jupyterlab_widgets 1.1.7 is outside ipywidgets' range ~=3.0.17" in out
    assert f"{MANAGER} 3.1.0 does not speak ipywidgets 8.1.9" in out
    assert 'run `pip install "jupyterlab_widgets~=3.0.17"`' in out


def test_disabled_extension_is_reported(monkeypatch, tmp_path, capsys):
    labconfig = tmp_path / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": {MANAGER: True}}))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    problems = check_widget_frontend()
    out = capsys.readouterr().out
    assert problems == [f"the extension {MANAGER} is disabled in JupyterLab"]
    assert f"{MANAGER} 5." in out and ", DISABLED\n" in out
    assert f"jupyter labextension enable {MANAGER}" in out


def test_missing_front_end(monkeypatch, capsys):
    monkeypatch.setattr(frontend_check, "_frontend", lambda: None)
    assert check_widget_frontend() == [f"JupyterLab has no {MANAGER} extension in this environment"]
    assert f"front end: {MANAGER} missing, enabled" in capsys.readouterr().out
