"""The outbox channel: writes the exact messages the real channels would carry, for an editor to look at."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from prdigest.deliver import Message, Parts
from prdigest.deliver.failure import ChannelUnavailable
from prdigest.kernel.errors import DeliveryError
from prdigest.kernel.writes import write_atomic

#: What a published file (the archive, digest.json, renderings, the outbox) is: readable by the web server
#: or the colleague that serves it. mkstemp creates 0600, and a rename keeps it (nginx as www-data: 403).


#: Turns a message into (file name, bytes); one per medium, from the medium registry.
OutboxFile = Callable[[Message], tuple[str, bytes]]


class OutboxChannel:
    """``DIR/outbox/<reader-id>.<suffix>``, one file per reader and medium, written atomically."""

    name = "outbox"
    #: Pushes are local writes: the delivery loop records a few rows' starts in one commit, writes their files,
    #: and records their outcomes in one commit (prdigest.deliver.run), instead of two commits per file.
    batches = True

    def __init__(self, directory: Path, files: dict[str, OutboxFile]) -> None:
        self.directory = directory
        self.files = files
        # Path text, for each message's file: no Path made per message (pathlib interns every name it parses:
        # 11,549 files at 10,000 readers grew the interpreter's table of interned strings, issue 38).
        self._folder = str(directory)

    def check(self) -> None:
        """Nothing to connect to: the folder is created on the first write."""

    def push(self, message: Message, parts: Parts | None = None) -> str:
        name, data = self.files[message.medium.removeprefix("outbox-")](message)
        path = os.path.join(self._folder, name)
        if os.path.dirname(os.path.realpath(path)) != os.path.realpath(self._folder):
            raise DeliveryError(f"outbox {self.directory}: refusing to write '{name}' outside the outbox")
        try:
            write_atomic(path, data)
        except OSError as exc:
            raise ChannelUnavailable(f"outbox {self.directory}: cannot write {message.reader.id}'s "
                                     f"{message.medium} message: {exc.strerror or exc}") from exc
        return path

    def flush(self) -> None:
        """Files are written synchronously: nothing to flush."""

    def close(self) -> None:
        """Nothing to release."""
