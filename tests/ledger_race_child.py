"""One deliverer process of the race tests (``python -m tests.ledger_race_child SPEC_JSON``): delivers one
edition to N readers by e-mail and Slack through the shared ledger, starting at a given wall-clock time,
and prints its report's counts as JSON. Real smtplib and slack-sdk against the parent's local servers."""

from __future__ import annotations

import json
import ssl
import sys
import time
from collections import Counter

from pydantic import SecretStr

from prdigest.deliver.run import deliver
from prdigest.deliver.slack import SlackChannel
from prdigest.deliver.smtp import SmtpChannel
from tests.delivery_support import SENDER, planned, race_edition, race_readers
from tests.factories import open_ledger


def main(spec: dict) -> None:
    edition = race_edition()
    deliveries = planned(edition, race_readers(spec["readers"]), sender=SENDER)
    channels = {
        "email": SmtpChannel(host="127.0.0.1", port=spec["smtp_port"], user=spec["smtp_user"],
                             password=SecretStr(spec["smtp_password"]), sender=SENDER, timeout=30,
                             ssl_context=ssl.create_default_context(cafile=spec["cert"])),
        "slack": SlackChannel(token=SecretStr(spec["slack_token"]), base_url=spec["slack_url"]),
    }
    ledger = open_ledger(spec["state"])
    try:
        while time.time() < spec["start_at"]:
            time.sleep(0.005)
        report = deliver(edition.id, deliveries, channels, ledger)
    finally:
        ledger.close()
    print(json.dumps(Counter(r.outcome.value for r in report.results)))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
