"""The state store's verdict calibrations (table ``calibrations``): each fit kept with its repo, when it was made,
from what and on how many labels; a run of the repo uses the latest (prdigest/draft/calibration.py)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from prdigest.draft.calibration import Calibration
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.storage import Store

MIGRATIONS = [
    """CREATE TABLE calibrations (
         repo TEXT NOT NULL,
         created_at TEXT NOT NULL,
         labels INTEGER NOT NULL,
         source TEXT NOT NULL,
         model TEXT NOT NULL,
         PRIMARY KEY (repo, created_at)
       )""",
]


def save(store: Store, repo: str, calibration: Calibration) -> Calibration:
    """Keep ``calibration`` as ``repo``'s latest; returns it with its timestamp."""
    store.migrate("calibration", MIGRATIONS)
    now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    store.execute("INSERT INTO calibrations (repo, created_at, labels, source, model) VALUES (?, ?, ?, ?, ?)",
                  (repo, now, calibration.labels, calibration.source,
                   json.dumps(calibration.to_json(), sort_keys=True, separators=(",", ":"))))
    calibration.created_at = now
    return calibration


def latest(store: Store, repo: str) -> Calibration | None:
    """``repo``'s latest calibration, or None when it has none."""
    store.migrate("calibration", MIGRATIONS)
    row = store.execute("SELECT created_at, model FROM calibrations WHERE repo = ? ORDER BY created_at DESC LIMIT 1",
                        (repo,)).fetchone()
    if row is None:
        return None
    try:
        return Calibration.from_json(json.loads(row[1]), created_at=str(row[0]))
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the state store's calibration of {repo} ({row[0]}) cannot be read ({exc}): fit it "
                          f"again with digest calibrate --repo {repo}, or run with --no-calibration") from None
