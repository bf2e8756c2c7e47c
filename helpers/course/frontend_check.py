"""Lesson 00's widget check: does JupyterLab's widget front end match the kernel's ipywidgets?

The explorers in lessons 04-07 are ipywidgets. They render only when two halves agree:

* the **kernel** half, the Python package ``ipywidgets`` (8.x), which needs the Python package
  ``jupyterlab_widgets`` in the version range it declares (``jupyterlab_widgets~=3.0.x``);
* the **front end** half, the JupyterLab extension ``@jupyter-widgets/jupyterlab-manager`` that
  ``jupyterlab_widgets`` installs (5.x for ipywidgets 8), which must not be disabled.

When they disagree the explorer cells print ``Error displaying widget`` or a bare text such as
``TruncationExplorer(...)`` instead of sliders. ``check_widget_frontend`` reads the installed
packages' metadata and JupyterLab's extension folders and settings (no subprocess, no network):
it checks the environment this kernel runs in, which is the one ``make lab`` serves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

MANAGER = "@jupyter-widgets/jupyterlab-manager"
# ipywidgets major version -> the jupyterlab-manager (front end) major version that speaks its protocol
FRONTEND_MAJOR = {8: 5, 7: 3}


@dataclass
class WidgetCheck:
    """What ``check_widget_frontend`` found. ``ok`` is True when nothing needs fixing."""

    ipywidgets: str | None
    jupyterlab_widgets: str | None
    required: str | None  # the jupyterlab_widgets range ipywidgets declares
    frontend: str | None  # version of the JupyterLab extension found on disk
    frontend_path: str | None
    enabled: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


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


def _in_range(version: str, spec: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return version in SpecifierSet(spec)


def _frontend() -> tuple[str | None, str | None]:
    from jupyter_core.paths import jupyter_path

    for folder in jupyter_path("labextensions"):
        package = Path(folder, *MANAGER.split("/"), "package.json")
        if package.is_file():
            return json.loads(package.read_text(encoding="utf-8"))["version"], str(package.parent)
    return None, None


def _disabled() -> bool:
    from jupyter_core.paths import jupyter_config_path

    for folder in jupyter_config_path():
        config = Path(folder, "labconfig", "page_config.json")
        if config.is_file():
            disabled = json.loads(config.read_text(encoding="utf-8")).get("disabledExtensions", {})
            if (disabled.get(MANAGER) if isinstance(disabled, dict) else MANAGER in disabled):
                return True
    return False


def check_widget_frontend(verbose: bool = True) -> WidgetCheck:
    """Compare the kernel's ipywidgets with JupyterLab's widget extension; print the verdict.

    Args:
        verbose: print one line per finding and, when something is wrong, the fix.

    Returns:
        A ``WidgetCheck``; ``.ok`` is False with ``.problems`` naming each mismatch.
    """
    kernel, lab_widgets = _version("ipywidgets"), _version("jupyterlab_widgets")
    required = _required_range() if kernel else None
    frontend, where = _frontend()
    result = WidgetCheck(kernel, lab_widgets, required, frontend, where, enabled=not _disabled())
    if kernel is None:
        result.problems.append("ipywidgets is not installed in the kernel's environment")
    if lab_widgets is None:
        result.problems.append("jupyterlab_widgets (the front end's Python package) is not installed")
    elif required and not _in_range(lab_widgets, required):
        result.problems.append(f"jupyterlab_widgets {lab_widgets} is outside ipywidgets' range {required}")
    if frontend is None:
        result.problems.append(f"JupyterLab has no {MANAGER} extension in this environment")
    elif kernel and int(frontend.split(".")[0]) != FRONTEND_MAJOR.get(int(kernel.split(".")[0])):
        result.problems.append(f"the front end {MANAGER} {frontend} does not speak ipywidgets {kernel}")
    if not result.enabled:
        result.problems.append(f"the extension {MANAGER} is disabled in JupyterLab")
    if verbose:
        print(f"kernel: ipywidgets {kernel}; needs jupyterlab_widgets {required}, found {lab_widgets}")
        print(f"front end: {MANAGER} {frontend or 'missing'}, "
              f"{'enabled' if result.enabled else 'DISABLED'}")
        if result.ok:
            print("✅ Widgets will render: the front end matches the kernel.")
        for problem in result.problems:
            print("❌", problem)
        if not result.ok:
            wanted = f'"jupyterlab_widgets{required}"' if required else "jupyterlab_widgets"
            print(f"Fix: in the environment that runs JupyterLab, run `pip install {wanted}` "
                  f"(or `jupyter labextension enable {MANAGER}` if it is only disabled), then restart "
                  "JupyterLab and reload the page.")
    return result
