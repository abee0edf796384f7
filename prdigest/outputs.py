"""The output folder of ``digest run --out DIR`` (DESIGN.md): digest.json, email/, slack/, outbox/."""

from __future__ import annotations

import json
from pathlib import Path

from prdigest.delivery.outbox import write_atomic
from prdigest.models import Edition


def write_digest_json(out: Path, edition: Edition) -> Path:
    """``DIR/digest.json``: the edition and all its entries, each with its review status."""
    path = out / "digest.json"
    data = edition.model_dump(mode="json")
    data["name"] = edition.name
    data["week"] = edition.week
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))
    return path


def write_variant(out: Path, key: str, *, html: str, text: str, slack: list[dict]) -> list[Path]:
    """``DIR/email/<variant>.html``, ``DIR/email/<variant>.txt`` and ``DIR/slack/<variant>.json``."""
    paths = [out / "email" / f"{key}.html", out / "email" / f"{key}.txt", out / "slack" / f"{key}.json"]
    write_atomic(paths[0], html.encode("utf-8"))
    write_atomic(paths[1], text.encode("utf-8"))
    write_atomic(paths[2], json.dumps(slack, ensure_ascii=False, indent=2).encode("utf-8"))
    return paths
