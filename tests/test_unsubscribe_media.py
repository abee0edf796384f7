"""Unsubscribing stops the medium the link came in, never a channel others share: the e-mail's one-click link
stops that reader's e-mail and not their team's Slack channel; a Slack direct message's link stops the DM and
not the e-mail. Real runs into the outbox, then real one-click POSTs to `digest web` (uvicorn, httpx)."""

from __future__ import annotations

import email
import json
import re
from email import policy
from pathlib import Path

import httpx
from typer.testing import CliRunner

from flows.cli import app
from flows.web.app import create_app
from prdigest.readers.selfservice import LinkSigner, ReaderChoices, ReaderRef
from prdigest.state.store import open_store
from tests.test_web import PUBLIC, SECRET, run_edition
from tests.web_support import LiveApp

REPO = "vllm-project/vllm"
READERS = """\
readers:
  - {id: team, name: Kernels team, email: kernels@example.com, slack: "#vllm-kernels"}
  - {id: dm, name: Lin, email: lin@example.com, slack: U0123ABCD}
  - {id: old, name: Old link, email: old@example.com, slack: "#digest-all"}
"""


def run(root: Path, out: str) -> set[str]:
    """The edition ``out`` into the outbox, as tests/test_web.py runs it: the files written."""
    return {p.name for p in run_edition(root, out).iterdir()}


def token_of(url: str) -> str:
    return url.rsplit("/u/", 1)[1]


def test_each_unsubscribe_stops_its_own_medium_and_never_a_shared_channel(tmp_path: Path) -> None:
    """Failed before the fix: the e-mail's one-click link also stopped the team's Slack channel."""
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    first = run(tmp_path, "one")
    assert {"team.eml", "team.slack.json", "dm.eml", "dm.slack.json", "old.eml", "old.slack.json"} <= first
    outbox = tmp_path / "one" / "outbox"
    mail = email.message_from_bytes((outbox / "team.eml").read_bytes(), policy=policy.default)
    team_unsub = token_of(mail["List-Unsubscribe"].strip("<>"))
    dm_slack = json.loads((outbox / "dm.slack.json").read_text(encoding="utf-8"))
    (dm_unsub,) = re.findall(re.escape(PUBLIC) + r"/u/([\w.-]+)", json.dumps(dm_slack[-1]["blocks"][-1]))
    signer = LinkSigner(SECRET)
    assert signer.reader(team_unsub, "unsubscribe") == ReaderRef(REPO, "team", "email")
    assert signer.reader(dm_unsub, "unsubscribe") == ReaderRef(REPO, "dm", "slack")
    legacy = signer.token(ReaderRef(REPO, "old"), "unsubscribe")  # a link sent before links named their medium
    store = open_store(tmp_path / "state.sqlite")
    try:
        with LiveApp(create_app(store, signer)) as live, httpx.Client(base_url=live.url, timeout=30) as client:
            for token in (team_unsub, dm_unsub, legacy):
                done = client.post(f"/u/{token}", content=b"List-Unsubscribe=One-Click",
                                   headers={"Content-Type": "application/x-www-form-urlencoded"})
                assert done.status_code == 200
            again = client.get(f"/u/{team_unsub}", params={"lang": "en"})  # says so when asked again
            assert again.status_code == 200 and "You are already unsubscribed" in again.text
            # The unsubscribe page leads to the preferences link of the same medium.
            prefs = signer.token(ReaderRef(REPO, "team", "email"), "preferences")
            assert f"../p/{prefs}?" in again.text
        choices = ReaderChoices(store)
        assert choices.choice(REPO, "team").unsubscribed_media == ("email",)
        assert choices.choice(REPO, "dm").unsubscribed_media == ("slack",)
        assert choices.choice(REPO, "old").unsubscribed and not choices.choice(REPO, "old").unsubscribed_media
    finally:
        store.close()
    second = run(tmp_path, "two")
    assert "team.eml" not in second and "team.slack.json" in second  # the team's channel still gets it
    assert "dm.slack.json" not in second and "dm.eml" in second  # Lin's DM stops, her e-mail does not
    assert "old.eml" not in second and "old.slack.json" in second  # an old link: personal media only
    shown = CliRunner().invoke(app, ["readers", "--readers", str(tmp_path / "readers.yaml"), "--state",
                                     str(tmp_path / "state.sqlite")], env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    assert "UNSUBSCRIBED (email)" in shown.output and "UNSUBSCRIBED (slack)" in shown.output


def prefs_of(url_text: str) -> str:
    (token,) = set(re.findall(re.escape(PUBLIC) + r"/p/([\w.-]+)", url_text))
    return token


def test_no_preferences_link_switches_off_a_shared_channel_or_unsubscribes_from_one(tmp_path: Path) -> None:
    """Failed before the fix: the preferences token named the reader only, its form offered every medium, and
    the e-mail's link (or the channel's, which everyone in it holds) could leave the team's channel out."""
    from tests.test_web import csrf_of

    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    run(tmp_path, "one")
    outbox = tmp_path / "one" / "outbox"
    mail = email.message_from_bytes((outbox / "team.eml").read_bytes(), policy=policy.default)
    by_mail = prefs_of(mail.get_body(("plain",)).get_content())
    # A channel's messages carry no reader links; a link that names the channel (as a later medium or a
    # forwarded message might carry) is still held by everyone there, so it is checked the same way.
    assert "/p/" not in (outbox / "team.slack.json").read_text(encoding="utf-8")
    signer = LinkSigner(SECRET)
    by_channel = signer.token(ReaderRef(REPO, "team", "slack"), "preferences")
    assert signer.reader(by_mail, "preferences") == ReaderRef(REPO, "team", "email")
    assert signer.reader(by_channel, "preferences") == ReaderRef(REPO, "team", "slack")
    store = open_store(tmp_path / "state.sqlite")
    try:
        with LiveApp(create_app(store, signer)) as live, httpx.Client(base_url=live.url, timeout=30) as client:
            # The e-mail's form: the shared channel is no box to untick; a crafted post leaving it out keeps it.
            page = client.get(f"/p/{by_mail}", params={"lang": "en"}).text
            assert 'name="media" value="slack"' not in page
            saved = client.post(f"/p/{by_mail}", data={"csrf": csrf_of(page), "action": "save",
                                                        "min_verdict": "skim", "media": "email"})
            assert saved.status_code == 303
            # The channel's form: no media at all, and no unsubscribe (everyone in the channel holds the link).
            page = client.get(f"/p/{by_channel}", params={"lang": "en"}).text
            assert 'name="media"' not in page and 'value="unsubscribe"' not in page
            csrf = csrf_of(page)
            refused = client.post(f"/p/{by_channel}", data={"csrf": csrf, "action": "unsubscribe"})
            assert refused.status_code == 400
            saved = client.post(f"/p/{by_channel}", data={"csrf": csrf, "action": "save", "min_verdict": "skim",
                                                           "media": "slack"})
            assert saved.status_code == 303
        # Stored before the fix, or posted by hand: choices that leave the shared channel out keep it all the same.
        from prdigest.readers.selfservice import Preferences
        ReaderChoices(store).set_preferences(REPO, "dm", Preferences(media=("slack",)))
        ReaderChoices(store).set_preferences(REPO, "old", Preferences(media=("email",)))
        choice = ReaderChoices(store).choice(REPO, "team")
        assert not choice.unsubscribed and not choice.unsubscribed_media
    finally:
        store.close()
    second = run(tmp_path, "two")
    assert {"team.eml", "team.slack.json", "old.eml", "old.slack.json", "dm.slack.json"} <= second
    assert "dm.eml" not in second  # a personal medium can still be left out by its own reader
