"""Who holds a claim in the delivery ledger: a deliverer's id (``host#scope:pid:random``), and whether a
deliverer of this host has ended (so its claims need not wait for their lease to run out).

A host name alone does not say which processes a PID names: two containers often share one host name (a
Kubernetes pod's, a compose service's) with PIDs of their own. So the id carries a scope: the kernel's boot
id and this process's PID namespace. Only a deliverer of the same scope is judged by its PID.
"""

from __future__ import annotations

import hashlib
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
def _scope() -> str:
    """8 hex digits naming this kernel boot and PID namespace ("" parts where /proc does not tell)."""
    parts = []
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            parts.append(handle.read().strip())
    except OSError:
        parts.append(uuid.uuid4().hex)  # unknown: a scope of its own, so no other process is judged by PID
    try:
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        parts.append("")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:8]


#: This process's host and scope: ``host#scope``. ':' and '#' never occur in a host name.
_WHERE = f"{socket.gethostname().replace(':', '-').replace('#', '-')}#{_scope()}"


def new_owner() -> str:
    """A deliverer's id: ``host#scope:pid:random``, so that a crashed deliverer of this host, boot and PID
    namespace is recognised, and one of another container with the same host name is not mistaken for it."""
    owner = f"{_WHERE}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    with _LIVE_LOCK:
        _LIVE.add(owner)
    return owner


def end_owner(owner: str) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(owner)


def owner_gone(owner: str) -> bool:
    """Whether ``owner`` is a deliverer of this host, boot and PID namespace that is certainly no longer
    running. Any other (another container with this host name, an id of an older version) waits for its lease."""
    where, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if where != _WHERE or not pid_text.isdigit():
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
