"""The outbox channel: writes the exact messages the real channels would carry, for an editor to look at."""

from __future__ import annotations

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

    def check(self) -> None:
        """Nothing to connect to: the folder is created on the first write."""

    def push(self, message: Message, parts: Parts | None = None) -> str:
        name, data = self.files[message.medium.removeprefix("outbox-")](message)
        path = self.directory / name
        if path.resolve().parent != self.directory.resolve():
            raise DeliveryError(f"outbox {self.directory}: refusing to write '{name}' outside the outbox")
        try:
            write_atomic(path, data)
        except OSError as exc:
            raise ChannelUnavailable(f"outbox {self.directory}: cannot write {message.reader.id}'s "
                                     f"{message.medium} message: {exc.strerror or exc}") from exc
        return str(path)

    def flush(self) -> None:
        """Files are written synchronously: nothing to flush."""

    def close(self) -> None:
        """Nothing to release."""
