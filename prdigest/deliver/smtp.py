"""Email over SMTP: STARTTLS, implicit TLS or plain, with AUTH; one connection reused for every message."""

from __future__ import annotations

import logging
import smtplib
import socket
import ssl
import time
from email.message import EmailMessage
from email.utils import parseaddr

from pydantic import SecretStr

from prdigest.deliver import Message, Parts
from prdigest.deliver.email_message import check_from
from prdigest.deliver.failure import ChannelUnavailable, MaybeDelivered, RecipientRejected, redact
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, DeliveryError

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}


def _reply(code: int | None, text: bytes | str | None) -> str:
    """An SMTP reply as one printable line: ``550 5.1.1 no such user``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return " ".join(f"{code or ''} {text or ''}".split())[:300]


class _Phases:
    """Tells whether the current message's body (with its final dot) went out: a failure after that may
    follow the server's acceptance (a 250 that never reached us), a failure before it cannot."""

    body_out = False
    _data_replies = 0

    def data(self, msg):  # smtplib's signature
        self._data_replies = 1
        try:
            return super().data(msg)
        finally:
            self._data_replies = 0

    def getreply(self):
        # Inside data(): the first reply answers DATA itself (354); the second comes after the body.
        if self._data_replies == 1:
            self._data_replies = 2
        elif self._data_replies == 2:
            self.body_out = True
        return super().getreply()


class _SMTP(_Phases, smtplib.SMTP):
    pass


class _SMTP_SSL(_Phases, smtplib.SMTP_SSL):
    pass


class SmtpChannel:
    """Sends each reader's email over one SMTP session, reconnecting when the server drops it.

    ``push`` returns the Message-ID once the server has answered 250 to DATA; a recipient or message
    the server refuses with 5xx raises :class:`RecipientRejected`; an unreachable server or a rejected
    login raises :class:`ChannelUnavailable`; a 4xx reply raises a plain (transient) ``DeliveryError``.
    A session dropped before the body went out is reopened and the message sent on it; once the body went
    out, no answer (a timeout, a reset) raises :class:`MaybeDelivered`: it is never sent again by itself.
    """

    name = "smtp"

    def __init__(
        self,
        *,
        host: str,
        sender: str,
        port: int | None = None,
        security: str = "starttls",
        user: str | None = None,
        password: SecretStr | None = None,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        idle_probe: float = 20.0,
    ) -> None:
        if security not in DEFAULT_PORTS:
            raise ConfigError(f"DIGEST_SMTP_SECURITY '{security}': use starttls, ssl or none")
        self.host = host
        self.port = port or DEFAULT_PORTS[security]
        self.security = security
        self.user = user
        self._password = password
        self.sender = sender
        self.envelope_from = parseaddr(sender)[1]
        self.timeout = timeout
        self._ssl_context = ssl_context
        #: Seconds of idleness after which a NOOP checks the session before the next message.
        self.idle_probe = idle_probe
        self._conn: smtplib.SMTP | None = None
        self._last_used = 0.0
        #: How many sessions were opened (one unless the server dropped us).
        self.connections = 0

    @classmethod
    def from_settings(cls, settings: Settings, *, ssl_context: ssl.SSLContext | None = None) -> "SmtpChannel":
        """The channel the ``DIGEST_SMTP_*`` and ``DIGEST_FROM`` settings describe (no I/O yet)."""
        # Every missing or mismatched setting at once, so one round of fixing is enough.
        problems = []
        if not settings.smtp_host:
            problems.append("DIGEST_SMTP_HOST is not set: name the SMTP server to deliver e-mail "
                            "(or use --deliver outbox)")
        if not settings.from_address:
            problems.append("DIGEST_FROM is not set: give the From address of the digest, "
                            "e.g. 'pr-digest <digest@example.com>'")
        has_password = settings.smtp_password is not None and settings.smtp_password.get_secret_value() != ""
        if settings.smtp_user and not has_password:
            problems.append(f"DIGEST_SMTP_USER is '{settings.smtp_user}' but DIGEST_SMTP_PASSWORD is not set")
        if has_password and not settings.smtp_user:
            problems.append("DIGEST_SMTP_PASSWORD is set but DIGEST_SMTP_USER is not: set both or neither")
        if problems or not settings.smtp_host or not settings.from_address:
            raise ConfigError("; ".join(problems))
        sender = check_from(settings.from_address)
        if settings.smtp_user and settings.smtp_security == "none":
            log.warning("DIGEST_SMTP_SECURITY=none: the SMTP password for user '%s' crosses the network "
                        "unencrypted; use starttls or ssl unless %s is a local relay",
                        settings.smtp_user, settings.smtp_host)
        return cls(host=settings.smtp_host, port=settings.smtp_port, security=settings.smtp_security,
                   user=settings.smtp_user or None, password=settings.smtp_password if has_password else None,
                   sender=sender, ssl_context=ssl_context)

    @property
    def where(self) -> str:
        return f"SMTP server {self.host}:{self.port}"

    def _secrets(self) -> tuple[str, ...]:
        return (self._password.get_secret_value(),) if self._password else ()

    def check(self) -> None:
        """Preflight: connect, negotiate TLS and log in before the first message (ConfigError if not)."""
        self.close()
        try:
            self._connect()
        except ChannelUnavailable as exc:
            raise ConfigError(str(exc)) from exc

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def _connect(self) -> None:
        """Open a session: TLS as configured, then AUTH when a user is set."""
        conn: _SMTP | _SMTP_SSL | None = None
        hint = ""
        try:
            if self.security == "ssl":
                conn = _SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self._context())
            else:
                conn = _SMTP(self.host, self.port, timeout=self.timeout)
            # Without TCP_NODELAY every message waits ~40 ms on Nagle + delayed ACK (DATA is written in
            # several TLS records, then we wait for the reply): measured 17 → see BENCHMARKS.md.
            if conn.sock is not None:
                conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.ehlo()
            if self.security == "starttls":
                if not conn.has_extn("starttls"):
                    raise ChannelUnavailable(f"{self.where} does not offer STARTTLS: set DIGEST_SMTP_SECURITY "
                                             "to ssl (implicit TLS, usually port 465) or none (a local relay)")
                hint = " during STARTTLS"
                conn.starttls(context=self._context())
                conn.ehlo()
            if self.user:
                if not conn.has_extn("auth"):
                    raise ChannelUnavailable(f"{self.where} offers no AUTH on this connection, but "
                                             "DIGEST_SMTP_USER is set: check DIGEST_SMTP_SECURITY")
                hint = " during login"
                conn.login(self.user, self._password.get_secret_value() if self._password else "")
        except ChannelUnavailable:
            self._abandon(conn)
            raise
        except smtplib.SMTPAuthenticationError as exc:
            self._abandon(conn)
            raise ChannelUnavailable(redact(
                f"{self.where} rejected the login of user '{self.user}' ({_reply(exc.smtp_code, exc.smtp_error)}): "
                "check DIGEST_SMTP_USER and DIGEST_SMTP_PASSWORD", self._secrets())) from None
        except ssl.SSLCertVerificationError as exc:
            self._abandon(conn)
            raise ChannelUnavailable(f"{self.where}: its TLS certificate is not trusted "
                                     f"({exc.verify_message}): check DIGEST_SMTP_HOST") from None
        except ssl.SSLError as exc:
            self._abandon(conn)
            raise ChannelUnavailable(f"{self.where}: TLS failed{hint} ({exc.reason or exc}): is "
                                     f"DIGEST_SMTP_SECURITY={self.security} right for port {self.port}?") from None
        except (OSError, smtplib.SMTPException) as exc:
            self._abandon(conn)
            detail = _reply(exc.smtp_code, exc.smtp_error) if isinstance(exc, smtplib.SMTPResponseException) \
                else (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
            raise ChannelUnavailable(redact(f"{self.where}: cannot connect{hint}: {detail}",
                                            self._secrets())) from None
        self._conn = conn
        self._last_used = time.monotonic()
        self.connections += 1

    @staticmethod
    def _abandon(conn: smtplib.SMTP | None) -> None:
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass

    def _session(self) -> smtplib.SMTP:
        """The open session, probed with NOOP when it has been idle, or a new one."""
        if self._conn is not None and time.monotonic() - self._last_used > self.idle_probe:
            try:
                self._conn.noop()
            except (smtplib.SMTPException, OSError):
                self._abandon(self._conn)
                self._conn = None
        if self._conn is None:
            self._connect()
        assert self._conn is not None
        return self._conn

    def push(self, message: Message, parts: Parts | None = None) -> str:
        """Send one reader's email; return its Message-ID once the server accepted it."""
        if not isinstance(message.payload, EmailMessage) or not message.recipient:
            raise RecipientRejected(f"reader '{message.reader.id}' has no e-mail message to send")
        msg, rcpt = message.payload, message.recipient
        conn = self._session()
        try:
            self._attempt(conn, msg, rcpt)
        except (smtplib.SMTPServerDisconnected, ConnectionError, TimeoutError) as exc:
            self._dropped(conn, rcpt, exc)
            # The server dropped an idle or capped session before the body went out: nothing was
            # delivered, so reconnect once and send again.
            self._connect()
            assert self._conn is not None  # _connect either stored the new session or raised
            conn = self._conn
            try:
                self._attempt(conn, msg, rcpt)
            except (smtplib.SMTPServerDisconnected, OSError) as again:
                self._dropped(conn, rcpt, again)
                raise DeliveryError(f"{self.where} dropped the connection while sending to {rcpt} "
                                    f"({type(again).__name__}), before the message went out; it stays pending"
                                    ) from None
        self._last_used = time.monotonic()
        return str(msg["Message-ID"]).strip()

    def _attempt(self, conn, msg, rcpt: str) -> None:
        conn.body_out = False
        self._send(conn, msg, rcpt)

    def _dropped(self, conn, rcpt: str, exc: BaseException) -> None:
        """Forget a session that failed; after the body went out, say the message may have been delivered."""
        self._abandon(conn)
        self._conn = None
        if getattr(conn, "body_out", False):
            reason = redact(" ".join(str(exc).split()) or type(exc).__name__, self._secrets())
            raise MaybeDelivered(f"{self.where} did not answer after the message to {rcpt} went out ({reason}): "
                                 "it may have been delivered; not resent unless asked "
                                 "(digest resend --uncertain)") from None

    def _send(self, conn: smtplib.SMTP, msg, rcpt: str) -> None:
        """One SMTP transaction; maps replies to permanent (5xx) or transient (4xx) failures."""
        try:
            conn.send_message(msg, from_addr=self.envelope_from, to_addrs=[rcpt])
        except smtplib.SMTPRecipientsRefused as exc:
            code, text = exc.recipients.get(rcpt, next(iter(exc.recipients.values()), (None, b"")))
            self._fail(code, f"{self.where} refused recipient {rcpt}: {_reply(code, text)}")
        except smtplib.SMTPSenderRefused as exc:
            error = f"{self.where} refused the sender {self.envelope_from}: {_reply(exc.smtp_code, exc.smtp_error)}"
            if exc.smtp_code >= 500:
                raise ChannelUnavailable(f"{error}: check DIGEST_FROM") from None
            raise DeliveryError(error) from None
        except smtplib.SMTPDataError as exc:
            self._fail(exc.smtp_code, f"{self.where} refused the message to {rcpt}: "
                                      f"{_reply(exc.smtp_code, exc.smtp_error)}")
        except smtplib.SMTPNotSupportedError as exc:
            raise RecipientRejected(f"{self.where} cannot carry the message to {rcpt}: {exc}") from None
        except smtplib.SMTPServerDisconnected:
            raise  # push() reconnects
        except smtplib.SMTPResponseException as exc:
            self._fail(exc.smtp_code, f"{self.where} answered {_reply(exc.smtp_code, exc.smtp_error)} "
                                      f"while sending to {rcpt}")
        except smtplib.SMTPException as exc:
            raise DeliveryError(redact(f"{self.where}: {exc} while sending to {rcpt}", self._secrets())) from None

    def _fail(self, code: int | None, error: str) -> None:
        error = redact(error, self._secrets())
        if code is not None and 500 <= code < 600:
            raise RecipientRejected(error)
        raise DeliveryError(error)

    def flush(self) -> None:
        """Every message is sent synchronously: nothing is buffered."""

    def close(self) -> None:
        """QUIT the session (if any); safe to call twice."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.quit()
        except (smtplib.SMTPException, OSError):
            self._abandon(conn)
