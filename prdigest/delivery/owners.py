"""Who holds a claim in the delivery ledger: a deliverer's id (``host:pid:random``), and whether a
deliverer of this host has ended (so its claims need not wait for their lease to run out)."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from datetime import datetime, timezone


def stamp(moment: datetime) -> str:
    """An instant as fixed-width UTC text, so that text comparison in SQL is time order on both dialects."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


#: Owners alive in this process (a deliverer of this process whose id is missing here has ended).
_LIVE: set[str] = set()
_LIVE_LOCK = threading.Lock()
_HOST = socket.gethostname()


def new_owner() -> str:
    """A deliverer's id: ``host:pid:random``, so that a crashed deliverer of this host is recognised."""
    owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    with _LIVE_LOCK:
        _LIVE.add(owner)
    return owner


def end_owner(owner: str) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(owner)


def owner_gone(owner: str) -> bool:
    """Whether ``owner`` is a deliverer of this host that is certainly no longer running."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        with _LIVE_LOCK:
            return owner not in _LIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
