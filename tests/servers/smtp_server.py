"""A real SMTP server for tests: aiosmtpd on 127.0.0.1 with AUTH and STARTTLS (or implicit TLS, or plain).

It records every message it accepts (raw bytes and parsed), can refuse given addresses (550) or defer
them (451), answer 250 to the end of DATA only after a delay (``answer_late``: longer than the client's
timeout, the message is delivered but the client never hears so), drop every open connection, and go
down and come back up on the same port.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email
import email.policy
import ipaddress
import socket
import ssl
import threading
from collections import Counter
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def free_port() -> int:
    """A port nothing listens on right now (aiosmtpd's Controller cannot bind port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@dataclass
class Received:
    """One message the server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    session: int
    authenticated: bool
    tls: bool

    @property
    def message(self) -> EmailMessage:
        return email.message_from_bytes(self.raw, policy=email.policy.default)  # type: ignore[return-value]


class _Handler:
    def __init__(self, owner: "SmtpServer") -> None:
        self.owner = owner

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.owner.reject:
            return f"550 5.1.1 <{address}>: mailbox unavailable"
        if address in self.owner.defer:
            return "451 4.3.0 mailbox busy, try again later"
        if self.owner.greylist.get(address, 0) > 0:
            self.owner.greylist[address] -= 1
            return "451 4.7.1 greylisted, try again in a moment"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.owner.lock:
            self.owner.live[id(server)] = server
            self.owner.count += 1
            self.owner.bytes += len(envelope.original_content or envelope.content or b"")
            self.owner.session_numbers.add(self.owner.session_number(session))
            self.owner.recipients.update(envelope.rcpt_tos)
            delay = max((self.owner.late.pop(a, 0.0) for a in envelope.rcpt_tos), default=0.0)
            if self.owner.record:
                self.owner.messages.append(Received(
                    mail_from=envelope.mail_from, rcpt_tos=list(envelope.rcpt_tos),
                    raw=envelope.original_content or envelope.content, session=self.owner.session_number(session),
                    authenticated=bool(session.authenticated),
                    tls=server.transport.get_extra_info("ssl_object") is not None))
        if delay:
            await asyncio.sleep(delay)  # delivered already: only the answer is late
        return "250 2.0.0 Message accepted for delivery"


class SmtpServer:
    """aiosmtpd ``Controller`` wrapper; use as a context manager."""

    def __init__(self, cert_dir: Path, *, security: str = "starttls", user: str | None = "digest-bot",
                 password: str = "s3cret-smtp-pa55", port: int | None = None, idle_timeout: float = 300,
                 record: bool = True) -> None:
        self.security = security
        self.user, self.password = user, password
        self.port = port or free_port()
        self.cert, self.key = make_certificate(cert_dir)
        self.idle_timeout = idle_timeout
        self.reject: set[str] = set()
        self.defer: set[str] = set()
        #: address -> how many more RCPTs to it get 451 (greylisting: accepted once it was tried again).
        self.greylist: dict[str, int] = {}
        #: address -> seconds: the next message to it is accepted, and 250 is sent that much later.
        self.late: dict[str, float] = {}
        self.messages: list[Received] = []
        self.live: dict[int, object] = {}
        self.lock = threading.Lock()
        self._sessions = 0
        #: False: only count messages, sessions and bytes (benchmarks send gigabytes).
        self.record = record
        self.count = 0
        self.bytes = 0
        self.session_numbers: set[int] = set()
        #: Messages accepted per recipient, recorded or not (the benchmarks count duplicates with it).
        self.recipients: Counter[str] = Counter()
        self.controller: Controller | None = None

    def session_number(self, session) -> int:
        """A number per SMTP session (object ids can be reused once a session is gone)."""
        if not hasattr(session, "digest_number"):
            self._sessions += 1
            session.digest_number = self._sessions
        return session.digest_number

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == self.user
              and auth_data.password.decode() == self.password)
        return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 on failure

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this server's self-signed certificate (and nothing else)."""
        return ssl.create_default_context(cafile=str(self.cert))

    def start(self) -> "SmtpServer":
        kwargs: dict = dict(hostname="127.0.0.1", port=self.port, timeout=self.idle_timeout,
                            data_size_limit=50 * 1024 * 1024)
        if self.user:
            kwargs.update(authenticator=self._authenticate, auth_require_tls=self.security == "starttls",
                          auth_required=True)
        if self.security == "starttls":
            kwargs.update(tls_context=self.server_context(), require_starttls=True)
        elif self.security == "ssl":
            kwargs.update(ssl_context=self.server_context())
        self.controller = Controller(_Handler(self), **kwargs)
        self.controller.start()
        return self

    def stop(self) -> None:
        """Go down: stop listening and close every session."""
        if self.controller is not None:
            self.controller.stop()
            self.controller = None
        self.live.clear()

    def answer_late(self, address: str, seconds: float) -> None:
        """Accept the next message to ``address`` but send its 250 only after ``seconds``."""
        with self.lock:
            self.late[address] = seconds

    def drop_connections(self) -> None:
        """Close every session that has carried a message, as a server with a per-session cap would."""
        assert self.controller is not None
        with self.lock:
            servers, self.live = list(self.live.values()), {}
        done = threading.Event()

        def close_all() -> None:
            for server in servers:
                transport = getattr(server, "transport", None)
                if transport is not None:
                    transport.close()
            done.set()

        self.controller.loop.call_soon_threadsafe(close_all)
        done.wait(5)

    @property
    def sessions(self) -> int:
        """How many distinct SMTP sessions carried the accepted messages."""
        return len(self.session_numbers)

    def to(self, address: str) -> list[Received]:
        """The accepted messages addressed to ``address``."""
        return [m for m in self.messages if address in m.rcpt_tos]

    def __enter__(self) -> "SmtpServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
