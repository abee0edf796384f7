"""The outbox channel: writes the exact messages SMTP and Slack would carry, for an editor to look at."""

from __future__ import annotations

import json
import os
import tempfile
from email import policy
from pathlib import Path

from prdigest.delivery import Message
from prdigest.errors import DeliveryError


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class OutboxChannel:
    """``DIR/outbox/<reader-id>.eml`` and ``DIR/outbox/<reader-id>.slack.json``."""

    name = "outbox"

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def push(self, message: Message) -> str:
        try:
            if message.medium == "email":
                assert message.email is not None
                path = self.directory / f"{message.reader.id}.eml"
                write_atomic(path, message.email.as_bytes(policy=policy.SMTP))
            else:
                path = self.directory / f"{message.reader.id}.slack.json"
                payloads = [
                    {"channel": message.reader.slack, **{k: v for k, v in p.items() if k != "thread"},
                     **({"thread_ts": "<ts of the first message>"} if p.get("thread") else {})}
                    for p in message.slack
                ]
                write_atomic(path, json.dumps(payloads, ensure_ascii=False, indent=2).encode("utf-8"))
        except OSError as exc:
            raise DeliveryError(f"outbox {self.directory}: cannot write {message.reader.id}'s "
                                f"{message.medium} message: {exc.strerror or exc}") from exc
        return str(path)

    def flush(self) -> None:
        """Files are written synchronously: nothing to flush."""

    def close(self) -> None:
        """Nothing to release."""
