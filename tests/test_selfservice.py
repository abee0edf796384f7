"""Reader self-service without HTTP: signed tokens, preferences applied to readers, the choices in the state
store (SQLite and a real PostgreSQL), and the next edition honouring them (EditionPipeline into a temp dir)."""

from __future__ import annotations

import email
import json
import re
from email import policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Verdict
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.readers.file import Reader
from prdigest.readers.selfservice import (
    BadLink,
    LinkSigner,
    Preferences,
    ReaderChoices,
    ReaderRef,
    apply,
    linker,
    web_base,
)
from prdigest.readers.selfservice.links import PREFERENCES_SLOT, UNSUBSCRIBE_SLOT
from prdigest.state.store import StateLocation, open_store

SECRET = "test-secret-0123456789-abcdefghij"
REPO = "vllm-project/vllm"
A, B = ReaderRef(REPO, "lin"), ReaderRef(REPO, "kernels-team")


def test_a_token_names_its_reader_and_purpose_only() -> None:
    signer = LinkSigner(SECRET)
    token = signer.token(A, "unsubscribe")
    assert signer.reader(token, "unsubscribe") == A
    with pytest.raises(BadLink):  # an unsubscribe token is no preferences token
        signer.reader(token, "preferences")
    with pytest.raises(BadLink):  # signed with another secret
        LinkSigner("another-secret-0123456789-abcdefgh").reader(token, "unsubscribe")


@pytest.mark.parametrize("forged", [
    "", "x", "WyJ2bGxtLXByb2plY3QvdmxsbSIsImxpbiJd",  # the payload alone, unsigned
    "WyJ2bGxtLXByb2plY3QvdmxsbSIsImtlcm5lbHMtdGVhbSJd.AAAAAAAAAAAAAAAAAAAAAAAAAAA", "a" * 5000,
])
def test_forged_tokens_are_refused(forged: str) -> None:
    with pytest.raises(BadLink):
        LinkSigner(SECRET).reader(forged, "unsubscribe")


def test_a_signature_does_not_carry_over_to_another_readers_payload() -> None:
    signer = LinkSigner(SECRET)
    payload_b = signer.token(B, "unsubscribe").split(".")[0]
    signature_a = signer.token(A, "unsubscribe").split(".")[1]
    with pytest.raises(BadLink):
        signer.reader(f"{payload_b}.{signature_a}", "unsubscribe")
    # One character changed anywhere: refused.
    token = signer.token(A, "preferences")
    for i in range(0, len(token), 7):
        altered = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]
        with pytest.raises(BadLink):
            signer.reader(altered, "preferences")


def test_the_csrf_field_is_bound_to_the_readers_token() -> None:
    signer = LinkSigner(SECRET)
    token_a, token_b = signer.token(A, "preferences"), signer.token(B, "preferences")
    field = signer.csrf(token_a)
    assert signer.check_csrf(token_a, field)
    assert not signer.check_csrf(token_b, field)
    assert not signer.check_csrf(token_a, None)
    assert not signer.check_csrf(token_a, field[:-2] + "xx")


@pytest.mark.parametrize("web_url, secret, problem", [
    ("https://digest.example.com/r", None, "DIGEST_WEB_SECRET is not"),
    ("https://digest.example.com/r", "short", "at least 32"),
    ("https://digest.example.com/r", "a" * 16, "at least 32"),  # the audit's secret: 16 of one letter
    ("https://digest.example.com/r", "a" * 64, "1 different kinds"),  # long, but one letter
    ("https://digest.example.com/r", "ab" * 32, "2 different kinds"),
    ("https://digest.example.com/r", "0123456789" + "x" * 30, "guessable"),  # a run, then one letter repeated
    ("ftp://digest.example.com", SECRET, "not the public http(s) URL"),
    ("https://digest.example.com/r?x=1", SECRET, "not the public http(s) URL"),
])
def test_web_settings_problems_are_one_clear_line(web_url: str, secret: str | None, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(").replace(")", r"\)")) as err:
        web_base(Settings(web_url=web_url, web_secret=secret))
    assert "\n" not in str(err.value)
    if secret:
        assert secret not in str(err.value)


def _spellings(token: str) -> list[str]:
    """Other spellings base64 accepts for ``token``: padding, and the unused low bits of each part's last
    character (itsdangerous decodes them all to the same bytes)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    payload, signature = token.split(".")
    out = {token + "=", token + "==", payload + "=." + signature, payload + "==." + signature}
    for part, rebuild in ((payload, lambda x: f"{x}.{signature}"), (signature, lambda x: f"{payload}.{x}")):
        spare = (6 - (len(part) * 6) % 8) % 6 if len(part) % 4 else 0  # unused bits in the last character
        base = alphabet.index(part[-1]) & ~((1 << spare) - 1)
        out |= {rebuild(part[:-1] + alphabet[base + low]) for low in range(1 << spare)}
    out.discard(token)
    return sorted(out)


def test_a_token_has_one_spelling() -> None:
    """The audit's 59 spellings of one link, each counted apart by the rate limit: only the one signing makes
    verifies now (issue 30)."""
    signer = LinkSigner(SECRET)
    token = signer.token(A, "unsubscribe")
    others = _spellings(token)
    assert len(others) >= 4
    for other in others:
        with pytest.raises(BadLink):
            signer.reader(other, "unsubscribe")
    assert signer.reader(token, "unsubscribe") == A


def test_a_rotated_secret_still_verifies_the_links_already_sent() -> None:
    old, new = SECRET, "rotated-secret-9876543210-zyxwvutsrq"
    sent = LinkSigner(old).token(A, "preferences")
    form = LinkSigner(old).csrf(sent)
    rotated = LinkSigner(new, (old,))
    assert rotated.reader(sent, "preferences") == A and rotated.check_csrf(sent, form)
    fresh = rotated.token(A, "preferences")
    assert fresh != sent and LinkSigner(new).reader(fresh, "preferences") == A  # new links: the new secret only
    with pytest.raises(BadLink):
        LinkSigner(old).reader(fresh, "preferences")
    with pytest.raises(BadLink):  # without the previous secret, the old link is dead (what rotation broke)
        LinkSigner(new).reader(sent, "preferences")
    # From the settings: DIGEST_WEB_SECRET_PREVIOUS, several separated by spaces.
    third = "third-secret-abcdefghij-0123456789"
    _, signer = web_base(Settings(web_url="https://digest.example.com/r", web_secret=new,
                                  web_secret_previous=f"{third} {old}"))
    assert signer.reader(sent, "preferences") == A and signer.token(A, "preferences") == fresh
    with pytest.raises(ConfigError, match="DIGEST_WEB_SECRET_PREVIOUS is 16 characters"):
        web_base(Settings(web_url="https://digest.example.com/r", web_secret=new, web_secret_previous="a" * 16))


def test_links_prefer_digest_web_and_fall_back_to_the_teams_own_url() -> None:
    reader = Reader(id="lin", name="Lin", email="lin@example.com")
    web = linker(Settings(web_url="https://digest.example.com/r/", web_secret=SECRET), REPO)(reader)
    assert web.unsubscribe.startswith("https://digest.example.com/r/u/")
    assert web.preferences.startswith("https://digest.example.com/r/p/")
    signer = LinkSigner(SECRET)
    assert signer.reader(web.unsubscribe.rsplit("/", 1)[1], "unsubscribe") == ReaderRef(REPO, "lin")
    own = linker(Settings(unsubscribe_url="https://lists.example.com/u?r={reader}&l=1"), REPO)(reader)
    assert (own.unsubscribe, own.preferences) == ("https://lists.example.com/u?r=lin&l=1", None)
    html = own.fill(f'<a href="{UNSUBSCRIBE_SLOT}">x</a>', for_html=True)
    assert html == '<a href="https://lists.example.com/u?r=lin&amp;l=1">x</a>'
    assert linker(Settings(), REPO) is None


VOCAB = Vocabulary.open()  # open: any name goes; a known set is tested with apply(..., known)


def test_preferences_override_the_file_and_drop_what_became_impossible() -> None:
    reader = Reader(id="k", name="K", email="k@example.com", slack="U0KAAAAAA", subsystems=("kernels", "moe"),
                    exclude=("docs",))
    narrowed = apply(reader, Preferences(subsystems=("moe",), min_verdict=Verdict.DEEP_READ, media=("email",)),
                     frozenset({"kernels", "moe", "rocm"}))
    assert (narrowed.subsystems, narrowed.min_verdict, narrowed.email, narrowed.slack, narrowed.exclude) == (
        ("moe",), Verdict.DEEP_READ, "k@example.com", None, ("docs",))
    # Subsystems the rules no longer name, or media the reader no longer has: the file's values stay.
    kept = apply(reader, Preferences(subsystems=("gone",), media=("feishu",)), frozenset({"kernels", "moe"}))
    assert (kept.subsystems, kept.email, kept.slack) == (("kernels", "moe"), "k@example.com", "U0KAAAAAA")
    assert apply(reader, Preferences()) is reader
    # A shared channel is never left out by a reader's choice (only by the readers file).
    team = reader.model_copy(update={"slack": "#k"})
    assert apply(team, Preferences(media=("email",))).slack == "#k"


def test_a_readers_own_budget_overrides_the_files_and_is_bounded() -> None:
    from pydantic import ValidationError

    from prdigest.readers.selfservice.form import NUMBER_FIELDS

    reader = Reader(id="k", name="K", email="k@example.com", budget=5)
    assert apply(reader, Preferences(budget=2)).budget == 2 and "budget" in NUMBER_FIELDS
    for bad in (0, 21):
        with pytest.raises(ValidationError):
            Preferences(budget=bad)


def _choices_roundtrip(location: str) -> None:
    with open_store(location) as store:
        choices = ReaderChoices(store)
        readers = [Reader(id="lin", name="Lin", email="lin@example.com"),
                   Reader(id="old", name="Old", email="old@example.com")]
        choices.record_roster(REPO, readers, VOCAB, "en")
        choices.record_roster(REPO, readers[:1], VOCAB, "en")  # 'old' left the readers file
        assert choices.profile(REPO, "lin") == readers[0]
        assert choices.profile(REPO, "old") is None
        assert choices.profile("other/repo", "lin") is None
        choices.set_preferences(REPO, "lin", Preferences(min_verdict=Verdict.SKIM))
        choices.set_unsubscribed(REPO, "lin", True)
        got = choices.choice(REPO, "lin")
        assert got.unsubscribed and got.preferences == Preferences(min_verdict=Verdict.SKIM)
        choices.set_unsubscribed(REPO, "lin", False)  # resubscribed: the preferences stay
        assert choices.choice(REPO, "lin").preferences.min_verdict is Verdict.SKIM
        assert not choices.choice("other/repo", "lin").unsubscribed
        assert list(choices.all_choices()) == [(REPO, "lin")]


def test_choices_roundtrip_in_sqlite(tmp_path: Path) -> None:
    _choices_roundtrip(str(tmp_path / "state.sqlite"))


@pytest.mark.slow
def test_choices_roundtrip_in_postgresql(pg_url: str) -> None:
    _choices_roundtrip(pg_url)


#: Two editions from the sample week: its first three days, then the rest (the next edition).
WINDOWS = {"one": ("2026-11-16", "2026-11-19"), "two": ("2026-11-19", "2026-11-23")}


def _run(tmp_path: Path, out: str, settings: Settings) -> dict[str, Path]:
    """The edition ``out`` (see WINDOWS) into ``tmp_path/out``; its outbox files by name."""
    since, until = WINDOWS[out]
    options = RunOptions(out=str(tmp_path / out), language="en", since=since, until=until)
    services = build_services(options, settings, default_media(), site=None)
    try:
        EditionPipeline(services).run()
    finally:
        services.close()
    return {p.name: p for p in (tmp_path / out / "outbox").iterdir()}


def _entries(eml: Path) -> int:
    """How many PRs a message lists, from its subject ("… deep reads of N PRs")."""
    subject = email.message_from_bytes(eml.read_bytes(), policy=policy.default)["Subject"]
    return int(re.search(r"of (\d+) PRs?", subject).group(1))


def test_the_next_edition_honours_an_unsubscribe_and_narrowed_preferences(tmp_path: Path) -> None:
    settings = Settings(state=tmp_path / "state.sqlite", web_url="https://digest.example.com", web_secret=SECRET)
    # The same week before and after the readers' choices: the first run in a state database of its own (in one
    # database the week would be delivered already, and a delivered edition is never sent again).
    before = _run(tmp_path, "one", settings.model_copy(update={"state": StateLocation.parse(tmp_path / "0.sqlite")}))
    assert {"lin.eml", "kernels-team.eml"} <= set(before)
    with open_store(settings.state) as store:
        choices = ReaderChoices(store)
        choices.set_unsubscribed(REPO, "kernels-team", True)
        choices.set_preferences(REPO, "lin", Preferences(subsystems=("rocm",), media=("email",)))
    after = _run(tmp_path, "two", settings)
    # Unsubscribed without naming a medium (the form): the e-mail stops, the team's shared channels do not.
    assert "kernels-team.eml" not in after and "kernels-team.slack.json" in after
    # Lin kept e-mail only, but her Slack address is a channel others share (#vllm-digest): it stays.
    assert "lin.slack.json" in before and "lin.slack.json" in after
    digest = json.loads((tmp_path / "two" / "digest.json").read_text(encoding="utf-8"))
    published = [e for e in digest["entries"] if e["status"] in ("approved", "edited")]
    assert 0 < _entries(after["lin.eml"]) < len(published)  # Lin follows everything in the readers file
    # Every message carries the reader's own signed links, in the headers and both bodies.
    msg = email.message_from_bytes(after["lin.eml"].read_bytes(), policy=policy.default)
    unsub = msg["List-Unsubscribe"].strip("<>")
    assert LinkSigner(SECRET).reader(unsub.rsplit("/u/", 1)[1], "unsubscribe") == ReaderRef(REPO, "lin", "email")
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    assert unsub in text and unsub in html and "/p/" in text
    assert UNSUBSCRIBE_SLOT not in html + text and PREFERENCES_SLOT not in html + text
    # digest readers shows the choices to the editors.
    from flows.cli import app

    shown = CliRunner().invoke(app, ["readers", "--state", str(settings.state)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "UNSUBSCRIBED" in shown.output and "rocm" in shown.output


def test_a_run_with_digest_web_url_but_no_secret_stops_before_collecting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DIGEST_WEB_SECRET"):
        build_services(RunOptions(out=str(tmp_path)), Settings(state=tmp_path / "s.sqlite",
                                                               web_url="https://digest.example.com"),
                       default_media())
    assert not (tmp_path / "s.sqlite").exists()
