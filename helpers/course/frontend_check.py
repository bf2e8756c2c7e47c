"""Lesson 00's widget check: does JupyterLab's widget front end match the kernel's ipywidgets?

The explorers (lessons 04-07) render only when the kernel's ``ipywidgets`` (and the ``jupyterlab_widgets``
range it declares) and the enabled extension ``@jupyter-widgets/jupyterlab-manager`` agree, else a cell
prints ``Error displaying widget``. ``check_widget_frontend`` reads this kernel's environment."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from jupyter_core.paths import jupyter_config_path, jupyter_path
from packaging.specifiers import SpecifierSet

MANAGER = "@jupyter-widgets/jupyterlab-manager"
FRONTEND_MAJOR = {"8": "5", "7": "3"}  # ipywidgets major -> the jupyterlab-manager major that speaks it


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _required_range() -> str | None:
    for requirement in metadata.requires("ipywidgets") or []:
        name, _, rest = requirement.partition("~=")
        if name.strip().lower().replace("-", "_") == "jupyterlab_widgets" and rest:
            return "~=" + rest.split(";")[0].strip()
    return None


def _frontend() -> str | None:
    for folder in jupyter_path("labextensions"):
        package = Path(folder, *MANAGER.split("/"), "package.json")
        if package.is_file():
            return json.loads(package.read_text(encoding="utf-8"))["version"]
    return None


def _disabled() -> bool:
    configs = [Path(folder, "labconfig", "page_config.json") for folder in jupyter_config_path()]
    found = [json.loads(c.read_text("utf-8")).get("disabledExtensions", {}) for c in configs if c.is_file()]
    return any(d.get(MANAGER) if isinstance(d, dict) else MANAGER in d for d in found)


def check_widget_frontend() -> list[str]:
    """Compare the kernel's ipywidgets with JupyterLab's widget extension: print each finding and, when
    something is wrong, the fix. Returns the problems, one sentence a mismatch (``[]``: widgets render)."""
    kernel, lab_widgets = _version("ipywidgets"), _version("jupyterlab_widgets")
    required = _required_range() if kernel else None
    frontend, enabled = _frontend(), not _disabled()
    checks = [
        (kernel is None, "ipywidgets is not installed in the kernel's environment"),
        (lab_widgets is None, "jupyterlab_widgets (the front end's Python package) is not installed"),
        (lab_widgets is not None and required and lab_widgets not in SpecifierSet(required),
         f"jupyterlab_widgets {lab_widgets} is outside ipywidgets' range {required}"),
        (frontend is None, f"JupyterLab has no {MANAGER} extension in this environment"),
        (bool(frontend and kernel) and frontend.split(".")[0] != FRONTEND_MAJOR.get(kernel.split(".")[0]),
         f"the front end {MANAGER} {frontend} does not speak ipywidgets {kernel}"),
        (not enabled, f"the extension {MANAGER} is disabled in JupyterLab")]
    problems = [problem for failed, problem in checks if failed]
    print(f"kernel: ipywidgets {kernel}; needs jupyterlab_widgets {required}, found {lab_widgets}\n"
          f"front end: {MANAGER} {frontend or 'missing'}, {'enabled' if enabled else 'DISABLED'}")
    print("\n".join(f"❌ {problem}" for problem in problems) if problems else
          "✅ Widgets will render: the front end matches the kernel.")
    if problems:
        wanted = f'"jupyterlab_widgets{required}"' if required else "jupyterlab_widgets"
        print(f"Fix: in the environment that runs JupyterLab, run `pip install {wanted}` "
              f"(or `jupyter labextension enable {MANAGER}` if it is only disabled), then restart "
              "JupyterLab and reload the page.")
    return problems
