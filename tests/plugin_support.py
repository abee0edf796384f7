"""An installed distribution as an installer leaves it, for plugin tests: a ``<name>-0.1.dist-info`` folder with
``METADATA`` and ``entry_points.txt`` in a folder that goes on ``sys.path`` (or PYTHONPATH for a subprocess)."""

from __future__ import annotations

from pathlib import Path


def install_distribution(site: Path, name: str, entry_points: dict[str, dict[str, str]]) -> Path:
    """Declare ``entry_points`` (group → entry point name → ``module:attribute``) for a distribution ``name``
    in ``site``; returns ``site``. The modules themselves are the caller's to put there."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "\n".join(f"[{group}]\n" + "".join(f"{n} = {target}\n" for n, target in names.items())
                  for group, names in entry_points.items()), encoding="utf-8")
    return site
