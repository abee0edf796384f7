"""The Feishu channel against a local webhook that checks what Feishu checks: signatures, the 20 KB limit,
the rate limit, and every answer code; faults after the body went out become ``uncertain``, never a resend."""

from __future__ import annotations

import time

import pytest
from pydantic import SecretStr

from prdigest.deliver import Message, Parts
from prdigest.deliver.failure import MaybeDelivered, RecipientRejected
from prdigest.deliver.feishu import FeishuChannel, address_problem, encode, sign
from prdigest.kernel.config import FeishuBot, Settings
from prdigest.kernel.errors import ConfigError, DeliveryError
from prdigest.readers.file import Reader
from tests.servers.feishu_server import FeishuServer
from tests.servers.smtp_server import free_port

SECRET = "feishu-s1gning-secret"


@pytest.fixture
def server():
    with FeishuServer() as s:
        yield s


def card(n: int, text: str = "x") -> dict:
    return {"msg_type": "interactive", "card": {"header": {"title": {"tag": "plain_text", "content": f"c{n}"}},
                                                "elements": [{"tag": "markdown", "content": text}]}}


def message(cards: list[dict], group: str = "kernels-group") -> Message:
    return Message(reader=Reader(id="kern", name="Kernels", feishu=group), variant="v", medium="feishu",
                   recipient=group, payload=cards)


def channel(bots: dict[str, tuple[str, str | None]], **kwargs) -> FeishuChannel:
    kwargs.setdefault("backoff", 0.05)
    return FeishuChannel({g: FeishuBot(url=SecretStr(u), secret=SecretStr(s) if s else None)
                          for g, (u, s) in bots.items()}, timeout=kwargs.pop("timeout", 5), **kwargs)


def test_a_signed_thread_of_cards_is_posted_in_order(server) -> None:
    url = server.add_bot("kernels-group", secret=SECRET)
    first = channel({"kernels-group": (url, SECRET)}).push(message([card(1), card(2), card(3)]))
    posts = server.posts("kernels-group")
    assert [p["card"]["header"]["title"]["content"] for p in posts] == ["c1", "c2", "c3"]
    assert all(p["timestamp"].isdigit() and p["sign"] for p in posts) and first.startswith("2026")


def test_the_signature_is_feishus_hmac_over_an_empty_message() -> None:
    # Pinned from the documented recipe (key "1599360473\nSEC", message b""); the server re-derives it per request.
    assert sign("SEC", 1599360473) == "4JWgcpNmrcsrGNgV/GWd+prGAlJRbFPZbsD5UJ6/bmE="


def test_a_wrong_secret_fails_with_the_reason_and_never_shows_the_secret_or_the_url(server) -> None:
    url = server.add_bot("kernels-group", secret=SECRET)
    with pytest.raises(RecipientRejected) as err:
        channel({"kernels-group": (url, "not-the-secret")}).push(message([card(1)]))
    text = str(err.value)
    assert "19021" in text and "DIGEST_FEISHU_KERNELS_GROUP_SECRET" in text and "kernels-group" in text
    assert "not-the-secret" not in text and url.rsplit("/", 1)[1] not in text and not server.posts("kernels-group")


@pytest.mark.parametrize("setup, code, words", [
    ({"keyword": "周报"}, 19024, "keyword"),
    ({"allowed_ip": False}, 19022, "IP address"),
])
def test_a_keyword_or_ip_refusal_fails_with_its_reason(server, setup, code, words) -> None:
    url = server.add_bot("g", **setup)
    with pytest.raises(RecipientRejected, match=rf"code {code} .*{words}"):
        channel({"g": (url, None)}).push(message([card(1)], "g"))


def test_an_unknown_webhook_token_fails_naming_the_variable(server) -> None:
    server.add_bot("g")
    with pytest.raises(RecipientRejected, match=r"19001.*DIGEST_FEISHU_G_URL"):
        channel({"g": (server.url + "/open-apis/bot/v2/hook/nope", None)}).push(message([card(1)], "g"))


@pytest.mark.parametrize("kind, value", [("ratelimit", None), ("429", None), ("5xx", 502)])
def test_a_rate_limit_or_a_5xx_is_retried_with_backoff(server, kind, value) -> None:
    url = server.add_bot("g", secret=SECRET)
    server.fault("ok")
    server.fault(kind, times=2, value=value)
    channel({"g": (url, SECRET)}).push(message([card(1), card(2)], "g"))
    assert [p["card"]["header"]["title"]["content"] for p in server.posts("g")] == ["c1", "c2"]
    assert len(server.calls) == 4


def test_a_rate_limit_that_lasts_leaves_the_rest_pending_with_the_accepted_part_recorded(server) -> None:
    url = server.add_bot("g")
    server.fault("ok")
    server.fault("ratelimit", times=10)
    points: list[dict] = []
    with pytest.raises(DeliveryError, match="rate limited .* stays pending") as err:
        channel({"g": (url, None)}, retries=2).push(message([card(1), card(2)], "g"),
                                                    Parts(None, lambda p, first: points.append(p)))
    assert not isinstance(err.value, (MaybeDelivered, RecipientRejected))
    assert [p["done"] for p in points] == [1] and len(server.posts("g")) == 1


def test_a_resumed_thread_sends_only_the_remaining_cards(server) -> None:
    url = server.add_bot("g")
    first = channel({"g": (url, None)}).push(message([card(1), card(2), card(3)], "g"),
                                             Parts({"done": 2, "first": "log-1", "total": 3}, lambda p, f: None))
    assert first == "log-1"
    assert [p["card"]["header"]["title"]["content"] for p in server.posts("g")] == ["c3"]


def test_a_thread_rendered_differently_since_its_first_cards_is_not_resumed(server) -> None:
    url = server.add_bot("g")
    with pytest.raises(RecipientRejected, match="2 of 4 cards .* now renders as 3"):
        channel({"g": (url, None)}).push(message([card(1), card(2), card(3)], "g"),
                                         Parts({"done": 2, "first": "log-1", "total": 4}, lambda p, f: None))
    assert server.calls == []


def test_a_reset_after_the_body_is_uncertain_not_resent(server) -> None:
    url = server.add_bot("g")
    server.fault("reset")
    with pytest.raises(MaybeDelivered, match="may have been posted"):
        channel({"g": (url, None)}).push(message([card(1)], "g"))
    assert len(server.posts("g")) == 1 and len(server.calls) == 1  # it reached the group; no second POST


def test_a_timeout_waiting_for_the_answer_is_uncertain(server) -> None:
    url = server.add_bot("g")
    server.fault("late", value=1.5)
    with pytest.raises(MaybeDelivered):
        channel({"g": (url, None)}, timeout=0.5).push(message([card(1)], "g"))
    assert len(server.posts("g")) == 1


def test_nobody_listening_is_pending_not_uncertain() -> None:
    url = f"http://127.0.0.1:{free_port()}/open-apis/bot/v2/hook/x"
    with pytest.raises(DeliveryError, match="cannot connect") as err:
        channel({"g": (url, None)}).push(message([card(1)], "g"))
    assert not isinstance(err.value, MaybeDelivered)


def test_a_body_over_20_kb_is_refused_by_the_webhook(server) -> None:
    url = server.add_bot("g")
    big = card(1, "字" * 7000)  # 21 KB of UTF-8
    assert len(encode(big)) > 20 * 1024
    with pytest.raises(RecipientRejected, match="over Feishu's 20 KB"):
        channel({"g": (url, None)}).push(message([big], "g"))
    assert server.calls == []  # refused before sending: the server would answer 9499


@pytest.mark.slow
def test_the_channel_keeps_a_bot_under_five_requests_a_second(server) -> None:
    url = server.add_bot("g")
    start = time.monotonic()
    channel({"g": (url, None)}, retries=0).push(message([card(i) for i in range(12)], "g"))
    assert time.monotonic() - start >= 2.0  # 12 requests at 5/s
    assert [c.code for c in server.calls] == [0] * 12  # the server never had to refuse one


def test_a_reader_whose_group_has_no_webhook_is_named_with_the_variable() -> None:
    reader = Reader(id="kern", name="Kernels", feishu="kernels-group")
    problem = address_problem(reader, "kernels-group", Settings(feishu_bots={}))
    assert "reader 'kern'" in problem and "DIGEST_FEISHU_KERNELS_GROUP_URL" in problem
    bot = FeishuBot(url=SecretStr("https://open.feishu.cn/open-apis/bot/v2/hook/t"))
    assert address_problem(reader, "kernels-group", Settings(feishu_bots={"kernels-group": bot})) is None


def test_settings_read_each_group_bot_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_URL", "https://open.feishu.cn/open-apis/bot/v2/hook/t0k")
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", SECRET)
    monkeypatch.setenv("DIGEST_FEISHU_LARK_TEAM_URL", "https://open.larksuite.com/open-apis/bot/v2/hook/t1k")
    bots = Settings().feishu_bots
    assert sorted(bots) == ["kernels-group", "lark-team"] and bots["lark-team"].secret is None
    assert bots["kernels-group"].secret.get_secret_value() == SECRET and SECRET not in repr(bots)


def test_check_refuses_a_webhook_that_is_not_a_url() -> None:
    with pytest.raises(ConfigError, match="DIGEST_FEISHU_G_URL is not an http"):
        channel({"g": ("open.feishu.cn/hook", None)}).check()


def test_no_log_line_shows_the_webhook_token_or_the_secret(server, caplog) -> None:
    import logging

    url = server.add_bot("g", secret=SECRET)
    token = url.rsplit("/", 1)[1]
    with caplog.at_level(logging.DEBUG):
        channel({"g": (url, SECRET)}).push(message([card(1)], "g"))
        with pytest.raises(RecipientRejected):
            channel({"g": (url, "wrong-secret")}).push(message([card(2)], "g"))
    assert "HTTP Request: POST" in caplog.text  # httpx logged each request ...
    assert token not in caplog.text and SECRET not in caplog.text and "wrong-secret" not in caplog.text  # ... redacted
