"""``digest resend EDITION --uncertain``: send again, on purpose, the messages that may have reached their
readers (the ledger's ``uncertain`` rows), rebuilt from the run's ``digest.json`` and the readers file.

An e-mail keeps the Message-ID of its first attempt, so a mail client that already has it drops the copy;
a Slack thread resumes after the parts the ledger recorded as posted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from prdigest.config import Settings
from prdigest.delivery.ledger import Key, Ledger
from prdigest.delivery.run import DeliveryReport, deliver, plan_deliveries
from prdigest.errors import ConfigError
from prdigest.media import ComposeContext, MediaRegistry, RenderContext, link_hosts_for
from prdigest.models import Edition

#: Keys digest.json adds to the edition's own fields.
_DERIVED = ("name", "week", "key")


@dataclass
class Resent:
    """What ``digest resend`` did: the report of the rows it sent again, and the rows it could not rebuild."""

    edition: str
    report: DeliveryReport = field(default_factory=DeliveryReport)
    #: (reader, medium, why): uncertain rows left as they are.
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


def load_edition(out: Path, asked: str) -> Edition:
    """The edition a run wrote to ``out/digest.json``."""
    path = out / "digest.json"
    if not path.is_file():
        raise ConfigError(f"{path}: not found: give --out the output folder of the run of {asked} "
                          "(the one holding its digest.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        for name in _DERIVED:
            data.pop(name, None)
        return Edition.model_validate(data)
    except (ValueError, ValidationError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        where = ".".join(str(p) for p in first["loc"]) if first else ""
        raise ConfigError(f"{path}: not a digest.json pr-digest can read ({where + ': ' if where else ''}"
                          f"{first['msg'] if first else exc})") from None


def resend_uncertain(asked: str, *, out: Path, settings: Settings, media: MediaRegistry, readers_of,
                     only: Iterable[str] = ()) -> Resent:
    """Send the uncertain rows of edition ``asked`` (its key, name or exact identity) again, each once.

    ``readers_of(repo)`` gives the readers file and the repo's vocabulary (``(ReadersFile, Vocabulary)``);
    ``only``: reader ids to limit it to. The channels are checked before anything is sent.
    """
    from prdigest.selfservice.links import link_kinds, linker
    from prdigest.services import sender
    from prdigest.variants import plan_variants

    edition = load_edition(out, asked)
    ledger = Ledger.open(settings.state)
    try:
        key = ledger.resolve(asked)
        if key is None:
            raise ConfigError(f"--state {settings.state}: no deliveries recorded for {asked}; "
                              f"editions in the ledger: {', '.join(ledger.editions()[:10]) or 'none'}")
        if key != edition.key:
            raise ConfigError(f"{out / 'digest.json'} is {edition.name} ({edition.key}), not {asked} ({key}): "
                              "give --out the output folder of that edition's run")
        rows = ledger.rows(key)
        wanted = set(only)
        unknown = sorted(wanted - {r.reader for r in rows.values()})
        if unknown:
            raise ConfigError(f"--reader {', '.join(unknown)}: no delivery of {edition.name} to this reader "
                              "in the ledger")
        uncertain = {k: r for k, r in rows.items() if r.status == "uncertain" and (not wanted or r.reader in wanted)}
        result = Resent(edition.name)
        if not uncertain:
            return result
        readers, vocabulary = readers_of(edition.repo)
        delivered = [m for m in media if m.name in {medium for _, medium in uncertain}]
        channels = {m.name: m.channel(settings) for m in delivered}
        for channel in {id(c): c for c in channels.values()}.values():
            channel.check()
        variants, _ = plan_variants(edition, readers.readers, vocabulary)
        # As the first send rendered it: the run's archive URL (a thread resumed after its recorded parts must
        # be rendered as it was) and the reader's own links (digest web, or DIGEST_UNSUBSCRIBE_URL).
        context = RenderContext(link_hosts=link_hosts_for(settings.github_url), site_url=settings.site_url,
                                reader_links=link_kinds(settings))
        rendered = [(v.readers, {m.name: m.render(edition, v, context) for m in delivered}) for v in variants]
        compose = ComposeContext(edition=edition, sender=sender(settings),
                                 unsubscribe_template=settings.unsubscribe_url, links=linker(settings, edition.repo))
        chosen = [d for d in plan_deliveries(rendered, delivered, compose) if d.key in uncertain]
        found: set[Key] = {d.key for d in chosen}
        for reader, medium in sorted(set(uncertain) - found):
            result.skipped.append((reader, medium, "not in the readers file any more, or its filter selects "
                                                   "nothing now: left uncertain"))
        ledger.reopen_uncertain(key, found)
        result.report = deliver(edition.id, chosen, channels, ledger)
        return result
    finally:
        ledger.close()
