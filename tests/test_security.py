"""Security basics: the embedded server listens on loopback only; an external server's credentials and TLS go
through NATS's own mechanisms; passwords and tokens never show in logs, the state file or `drivemt config show`."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import io
import ipaddress
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import certifi
import numpy as np
import psutil
import pytest
import structlog
from pydantic import SecretStr
from typer.testing import CliRunner

from bus import Bus, BusError, EmbeddedNatsServer, RulesSubmitted, Subjects
from bus.connection import BusSettings, NatsAuth, redact_url, strip_credentials
from bus.events import RulesSubmittedPayload
from runners.cli import app
from runners.clients.discovery import find_bus_url, read_state
from runners.config import explain_config, load_config
from runners.host.daemon import Daemon
from tools.rules.models import TrafficRule

PASSWORD = "pa55-w0rd-SECRET"
"""A password distinctive enough to grep every output for."""
TOKEN = "t0ken-SECRET-42"
"""A token distinctive enough to grep every output for."""

HAS_NKEYS = importlib.util.find_spec("nkeys") is not None
OPENSSL = shutil.which("openssl")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test from an environment without DRIVEMT_ or NATS_ credentials of the caller's."""
    for name in list(os.environ):
        if name.startswith("DRIVEMT_") or name in ("NATS_TOKEN", "NATS_CREDS"):
            monkeypatch.delenv(name)


@asynccontextmanager
async def nats_server(root: Path, extra_config: str = "") -> AsyncIterator[str]:
    """A real nats-server with JetStream and the given configuration blocks; yields its URL."""
    async with EmbeddedNatsServer(store_dir=root / "js", extra_config=extra_config, start_timeout=5.0) as server:
        assert server.url is not None
        yield server.url


def settings(auth: NatsAuth | None = None) -> BusSettings:
    """Bus settings with a bounded first-connection deadline, so a failure that is not recognised stays quick; 8 s,
    not 3, because a TLS refusal under a loaded CI machine (the whole suite on 2 cores) once took longer than 3 s
    and read as "no server answered"."""
    return BusSettings(auth=auth or NatsAuth(), connect_timeout_s=8.0)


def with_userinfo(url: str, userinfo: str, scheme: str | None = None) -> str:
    """``url`` with credentials (and optionally another scheme) put in."""
    parts = urlsplit(url)
    return f"{scheme or parts.scheme}://{userinfo}@{parts.netloc}"


async def assert_refused(url: str, auth: NatsAuth | None = None, match: str = "refused the credentials") -> None:
    """Connecting fails at once with a BusError that says why and shows no secret."""
    bus = Bus(url=url, settings=settings(auth))
    with pytest.raises(BusError, match=match) as info:
        await bus.connect()
    assert PASSWORD not in str(info.value) and TOKEN not in str(info.value)


async def assert_works(url: str, auth: NatsAuth | None = None) -> None:
    """Connect, ensure the streams and publish an event through JetStream."""
    async with Bus(url=url, subjects=Subjects("tsec"), name="pytest-security", settings=settings(auth)) as bus:
        await bus.ensure_streams()
        event = RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="a", text="x")]))
        ack = await bus.publish(event)
        assert ack is not None and ack.stream == bus.subjects.streams.inputs
        assert bus.connected_url is not None and PASSWORD not in bus.connected_url and TOKEN not in bus.connected_url


# -- the embedded server ------------------------------------------------------------------------------------------
def _listening(pid: int) -> list[str]:
    return [c.laddr.ip for c in psutil.Process(pid).net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]


async def test_the_embedded_server_listens_on_loopback_only(tmp_path: Path) -> None:
    """By default the server gets `--addr 127.0.0.1`, its ports file names loopback only and it listens nowhere
    else; configuration text cannot move it, since the command-line address wins."""
    assert inspect.signature(EmbeddedNatsServer).parameters["host"].default == "127.0.0.1"
    server = EmbeddedNatsServer(store_dir=tmp_path / "js", extra_config="listen: 0.0.0.0:-1")
    async with server:
        assert server.pid is not None
        cmdline = psutil.Process(server.pid).cmdline()
        assert cmdline[cmdline.index("--addr") + 1] == "127.0.0.1"
        (ports_file,) = (tmp_path / "ports").glob("*.ports")
        urls = [u for urls in json.loads(ports_file.read_text()).values() for u in urls]
        assert urls and all(ipaddress.ip_address(urlsplit(u).hostname or "").is_loopback for u in urls)
        listening = _listening(server.pid)
        assert listening and all(ipaddress.ip_address(ip).is_loopback for ip in listening), listening


class StubEmbedder:
    """An embedder that loads nothing (the daemons here run no agent that embeds)."""

    name = "stub"
    dimension = 4

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32) / 2.0


async def test_a_daemon_without_nats_url_runs_its_server_on_loopback(tmp_path: Path) -> None:
    """A daemon with no --nats-url starts the embedded server on loopback and records a loopback URL."""
    cfg = load_config(data_dir=tmp_path / "data", memory="bus", heartbeat_interval_s=0.5, shutdown_grace_s=1.0)
    async with Daemon(cfg, embedder=StubEmbedder(), only=[]) as daemon:
        assert daemon.server is not None and daemon.server.pid is not None
        state = read_state(cfg.state_file)
        assert state is not None and ipaddress.ip_address(urlsplit(state.nats_url).hostname or "").is_loopback
        assert all(ipaddress.ip_address(ip).is_loopback for ip in _listening(daemon.server.pid))


# -- credentials --------------------------------------------------------------------------------------------------
USER_PASSWORD = f'authorization {{\n  user: alice\n  password: "{PASSWORD}"\n}}'
TOKEN_AUTH = f'authorization {{\n  token: "{TOKEN}"\n}}'


async def test_a_server_requiring_user_and_password(tmp_path: Path) -> None:
    """Without the password, or with a wrong one, connecting fails at once with a clear BusError; with it, in the
    URL or in bus.auth, the bus connects, ensures its streams and publishes."""
    async with nats_server(tmp_path, USER_PASSWORD) as url:
        await assert_refused(url)
        await assert_refused(with_userinfo(url, "alice:wrong"))
        await assert_refused(url, NatsAuth(user="alice", password=SecretStr("wrong")))
        await assert_works(with_userinfo(url, f"alice:{PASSWORD}"))
        await assert_works(url, NatsAuth(user="alice", password=SecretStr(PASSWORD)))


async def test_a_server_requiring_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the token connecting fails with a clear BusError; the token works in the URL, in bus.auth, and
    from NATS_TOKEN or DRIVEMT_BUS__AUTH__TOKEN through the configuration."""
    async with nats_server(tmp_path, TOKEN_AUTH) as url:
        await assert_refused(url)
        await assert_refused(url, NatsAuth(token=SecretStr("wrong")))
        await assert_works(with_userinfo(url, TOKEN))
        await assert_works(url, NatsAuth(token=SecretStr(TOKEN)))
        monkeypatch.setenv("NATS_TOKEN", TOKEN)
        await assert_works(url, load_config(nats_url=url).bus.auth)
        monkeypatch.delenv("NATS_TOKEN")
        monkeypatch.setenv("DRIVEMT_BUS__AUTH__TOKEN", TOKEN)
        await assert_works(url, load_config(nats_url=url).bus.auth)


async def test_credentials_do_no_harm_on_a_server_without_auth(tmp_path: Path) -> None:
    """User, password and token settings are ignored by a server that asks for none (the embedded one)."""
    async with nats_server(tmp_path) as url:
        await assert_works(url, NatsAuth(user="alice", password=SecretStr(PASSWORD)))
        await assert_works(url, NatsAuth(token=SecretStr(TOKEN)))


@pytest.mark.skipif(not HAS_NKEYS, reason="the nkeys package (nats-py[nkeys]) is not installed")
async def test_a_server_requiring_an_nkey(tmp_path: Path) -> None:
    """Without the nkey connecting fails with a clear BusError; with its seed file the bus connects and publishes."""
    import nkeys

    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(bytearray(seed)).public_key.decode()
    seed_file = tmp_path / "user.nk"
    seed_file.write_bytes(seed + b"\n")
    async with nats_server(tmp_path, f"authorization {{\n  users: [{{ nkey: {public} }}]\n}}") as url:
        await assert_refused(url)
        other = tmp_path / "other.nk"
        other.write_bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER))
        await assert_refused(url, NatsAuth(nkey_seed_file=other))
        await assert_works(url, NatsAuth(nkey_seed_file=seed_file))


def _operator_mode(root: Path) -> tuple[str, Path, Path]:
    """An operator, a JetStream-enabled account, a system account and a user, as ``nsc`` would make them (``nsc``
    is not installed here, so the JWTs are signed with ``nkeys`` directly: base64url header and claims, ed25519
    signature by the issuer). Returns the server's configuration, the user's ``.creds`` file and a ``.creds`` file
    of a user signed by an account the server does not know."""
    import base64
    import hashlib
    import time

    import nkeys

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    def keypair(prefix: int) -> tuple[bytes, Any]:
        seed = nkeys.encode_seed(os.urandom(32), prefix)
        return seed, nkeys.from_seed(bytearray(seed))

    def jwt(issuer: Any, subject: Any, kind: str, name: str, **nats: Any) -> str:
        claims: dict[str, Any] = {"iat": int(time.time()), "iss": issuer.public_key.decode(), "name": name,
                                  "sub": subject.public_key.decode(), "nats": {"type": kind, "version": 2, **nats}}  # fmt: skip
        claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims).encode()).digest()).decode().rstrip("=")
        signing = b64(b'{"typ":"JWT","alg":"ed25519-nkey"}') + "." + b64(json.dumps(claims).encode())
        return signing + "." + b64(issuer.sign(signing.encode()))

    def creds(user_jwt: str, seed: bytes) -> str:
        return (f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
                f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n------END USER NKEY SEED------\n")  # fmt: skip

    _, operator = keypair(nkeys.PREFIX_BYTE_OPERATOR)
    _, account = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, stranger = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, system = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    user_seed, user = keypair(nkeys.PREFIX_BYTE_USER)
    other_seed, other = keypair(nkeys.PREFIX_BYTE_USER)
    unlimited = {"subs": -1, "data": -1, "payload": -1, "conn": -1}
    js = {**unlimited, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    (root / "operator.jwt").write_text(
        jwt(operator, operator, "operator", "op", system_account=system.public_key.decode())
    )
    config = (
        f"operator: {root / 'operator.jwt'}\nsystem_account: {system.public_key.decode()}\nresolver: MEMORY\n"
        f"resolver_preload: {{\n  {account.public_key.decode()}: {jwt(operator, account, 'account', 'A', limits=js)}\n"
        f"  {system.public_key.decode()}: {jwt(operator, system, 'account', 'SYS', limits=unlimited)}\n}}\n"
    )
    good, bad = root / "user.creds", root / "stranger.creds"
    good.write_text(creds(jwt(account, user, "user", "u", **unlimited), user_seed))
    bad.write_text(creds(jwt(stranger, other, "user", "x", **unlimited), other_seed))
    return config, good, bad


@pytest.mark.skipif(not HAS_NKEYS, reason="the nkeys package (nats-py[nkeys]) is not installed")
async def test_a_server_in_operator_mode_takes_a_creds_file(tmp_path: Path) -> None:
    """A server in operator (JWT) mode refuses no credentials and a user of an unknown account, and takes the
    user's .creds file: the bus connects, creates its streams and publishes through JetStream."""
    config, good, bad = _operator_mode(tmp_path)
    async with nats_server(tmp_path, config) as url:
        await assert_refused(url)
        await assert_refused(url, NatsAuth(creds_file=bad))
        await assert_works(url, NatsAuth(creds_file=good))


async def test_nkey_settings_without_the_nkeys_package_are_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An nkey seed or .creds file without the nkeys package fails before connecting, naming the package."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nkeys" else find_spec(name, *a))
    seed_file = tmp_path / "user.nk"
    seed_file.write_text("SUAEXAMPLE\n")
    for auth in (NatsAuth(nkey_seed_file=seed_file), NatsAuth(creds_file=seed_file)):
        with pytest.raises(BusError, match="nkeys"):
            await Bus(url="nats://127.0.0.1:1", settings=settings(auth)).connect()


async def test_missing_credential_files_are_a_clear_error(tmp_path: Path) -> None:
    """A .creds, seed or certificate file that is not there is named in the BusError."""
    for auth, name in (
        (NatsAuth(creds_file=tmp_path / "nope.creds"), "nope.creds"),
        (NatsAuth(nkey_seed_file=tmp_path / "nope.nk"), "nope.nk"),
        (NatsAuth(tls_ca_file=tmp_path / "nope.pem"), "certificates"),
        (NatsAuth(tls_cert_file=tmp_path / "c.pem"), "tls_key_file"),
    ):
        with pytest.raises(BusError, match=name):
            await Bus(url="nats://127.0.0.1:1", settings=settings(auth)).connect()


# -- TLS ----------------------------------------------------------------------------------------------------------
def _openssl(*args: str) -> None:
    assert OPENSSL is not None
    subprocess.run([OPENSSL, *args], check=True, capture_output=True)


def make_tls(root: Path) -> dict[str, Path]:
    """A throw-away CA, a server certificate for 127.0.0.1 and a client certificate (EC keys, one day)."""
    root.mkdir(parents=True, exist_ok=True)
    f = {n: root / n for n in ("ca.pem", "ca.key", "server.pem", "server.key", "client.pem", "client.key")}
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", str(f["ca.key"]), "-out", str(f["ca.pem"]), "-days", "1",
             "-subj", "/CN=drivemt test CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    for name, usage, san in (("server", "serverAuth", "IP:127.0.0.1,DNS:localhost"), ("client", "clientAuth", None)):
        csr, ext = root / f"{name}.csr", root / f"{name}.ext"
        ext.write_text(f"extendedKeyUsage={usage}\n" + (f"subjectAltName={san}\n" if san else ""))
        _openssl("req", *ec, "-keyout", str(f[f"{name}.key"]), "-out", str(csr), "-subj", f"/CN=drivemt {name}")
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(f["ca.pem"]), "-CAkey", str(f["ca.key"]),
                 "-CAcreateserial", "-out", str(f[f"{name}.pem"]), "-days", "1", "-extfile", str(ext))  # fmt: skip
    return f


@pytest.mark.skipif(OPENSSL is None, reason="no openssl command to make a test CA with")
async def test_a_server_requiring_tls_with_client_certificates(tmp_path: Path) -> None:
    """A tls:// server with a private CA that verifies clients: without the CA the certificate check fails, without a
    client certificate the server refuses, with both (bus.auth.tls_*) the bus connects and publishes."""
    f = make_tls(tmp_path / "tls")
    conf = (
        f"tls {{\n  cert_file: {json.dumps(str(f['server.pem']))}\n  key_file: {json.dumps(str(f['server.key']))}\n"
        f"  ca_file: {json.dumps(str(f['ca.pem']))}\n  verify: true\n  timeout: 2\n}}"
    )
    async with nats_server(tmp_path, conf) as url:
        tls_url = f"tls://{urlsplit(url).netloc}"
        await assert_refused(tls_url, match="TLS failed: .*certificate verify failed")
        await assert_refused(tls_url, NatsAuth(tls_ca_file=f["ca.pem"]), match="TLS failed: .*certificate required")
        full = NatsAuth(tls_ca_file=f["ca.pem"], tls_cert_file=f["client.pem"], tls_key_file=f["client.key"])
        await assert_works(tls_url, full)
        await assert_works(tls_url, full.model_copy(update={"tls_hostname": "localhost"}))


async def test_tls_asked_of_a_server_without_it_is_refused_not_sent_in_plain_text(tmp_path: Path) -> None:
    """A tls:// URL, or TLS files, against a server that does not require TLS would have talked in plain text (the
    client upgrades only when the server asks): refused with the reason; a URL of another scheme is refused at once."""
    async with nats_server(tmp_path) as url:
        netloc = urlsplit(url).netloc
        await assert_refused(f"tls://{netloc}", match="server does not require TLS")
        ca = Path(certifi.where())  # any CA bundle: TLS files given ask for TLS
        await assert_refused(url, NatsAuth(tls_ca_file=ca), match="server does not require TLS")
        await assert_refused(f"tls://{netloc},{url}", match="mixes tls:// and nats://")
        await assert_refused(f"ws://{netloc}", NatsAuth(tls_ca_file=ca), match="needs wss://")
        await assert_works(url)
        await assert_works(f"NATS://{netloc}")  # (a scheme in capitals: nats-py reads lower case only)
    await assert_refused(f"http://{netloc}", match="unsupported scheme http")


async def test_tls_settings_for_an_external_server_leave_the_embedded_one_alone(tmp_path: Path, embedder: Any) -> None:
    """bus.auth is for an external server: a daemon on its own embedded server (never TLS) and a command that finds it
    through the state file connect without it (TLS files set for the external server refused them all)."""
    from runners.cli._common import make_bus

    auth = NatsAuth(tls_ca_file=Path(certifi.where()))
    cfg = load_config(data_dir=tmp_path / "data", namespace="tembedded", heartbeat_interval_s=0.5)
    cfg = cfg.model_copy(update={"bus": cfg.bus.model_copy(update={"auth": auth})})
    async with Daemon(cfg, embedder=StubEmbedder(), only=[]) as daemon:
        assert daemon.bus is not None and daemon.server is not None
        async with make_bus(cfg, name="pytest-command") as bus:
            assert bus.settings.auth.tls_ca_file is None
            await bus.publish(
                RulesSubmitted(producer="t", payload=RulesSubmittedPayload(rules=[TrafficRule(id="a", text="x")]))
            )


@pytest.mark.skipif(OPENSSL is None, reason="no openssl command to make a test CA with")
async def test_nothing_goes_in_plain_text_to_a_server_without_tls_on_a_reconnect(tmp_path: Path) -> None:
    """Connected over TLS with a token, the server goes and one without TLS answers on the same port (or another
    cluster member lacks it): the client would send its CONNECT (the token) and what was queued in plain text before
    any callback could stop it. Nothing is sent; the client keeps trying, and reconnects once TLS is back."""
    f = make_tls(tmp_path / "tls")
    conf = (
        f"tls {{\n  cert_file: {json.dumps(str(f['server.pem']))}\n  key_file: {json.dumps(str(f['server.key']))}\n}}"
        f"\nauthorization {{ token: {json.dumps(TOKEN)} }}"
    )
    tls_server = EmbeddedNatsServer(store_dir=tmp_path / "js1", extra_config=conf, start_timeout=5.0)
    port = int(urlsplit(await tls_server.start()).port or 0)
    bus = Bus(url=f"tls://{TOKEN}@127.0.0.1:{port}", settings=settings(NatsAuth(tls_ca_file=f["ca.pem"])))
    await bus.connect()
    received = bytearray()

    async def plain_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b'INFO {"server_id":"plain","version":"2.10.0","proto":1,"max_payload":1048576,"headers":true}\r\n'
        )
        await writer.drain()
        with contextlib.suppress(Exception):
            received.extend(await asyncio.wait_for(reader.read(65536), timeout=1.0))
        writer.close()

    try:
        await tls_server.stop()
        listener = await asyncio.start_server(plain_server, "127.0.0.1", port)
        assert bus._nc is not None
        await bus._nc.publish("tsec.secret", b"confidential payload")  # (queued while the connection is down)
        await asyncio.sleep(4.0)  # a few reconnect attempts (one a second)
        listener.close()
        await listener.wait_closed()
        assert b"CONNECT" not in received and TOKEN.encode() not in received and b"confidential" not in received
        assert not bus._nc.is_closed  # still trying, not given up
        tls_server = EmbeddedNatsServer(store_dir=tmp_path / "js1", extra_config=conf, port=port, start_timeout=5.0)
        await tls_server.start()  # TLS back on the same port: the client comes back by itself
        for _ in range(100):
            if bus._nc.is_connected:
                break
            await asyncio.sleep(0.1)
        assert bus._nc.is_connected
    finally:
        await bus.close()
        await tls_server.stop()


# -- secrets never shown --------------------------------------------------------------------------------------------
def test_redact_url_masks_passwords_and_tokens_everywhere_in_a_text() -> None:
    """Passwords and tokens are masked in single URLs, cluster lists and messages; the rest stays readable."""
    assert redact_url(f"nats://alice:{PASSWORD}@h:4222") == "nats://alice:***@h:4222"
    assert redact_url(f"tls://{TOKEN}@h:4222") == "tls://***@h:4222"
    assert redact_url(f"nats://a:4222,nats://bob:{PASSWORD}@b:4222") == "nats://a:4222,nats://bob:***@b:4222"
    assert redact_url(f"nats://alice:p@ss{PASSWORD}@h") == "nats://alice:***@h"  # a raw @ in the password
    assert (
        redact_url(f"cannot reach nats://alice:{PASSWORD}@h:1 (refused)")
        == "cannot reach nats://alice:***@h:1 (refused)"
    )
    assert redact_url("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"
    assert redact_url("user@example.org wrote") == "user@example.org wrote"
    assert strip_credentials(f"nats://alice:{PASSWORD}@h:4222,nats://{TOKEN}@g") == "nats://h:4222,nats://g"
    assert PASSWORD not in repr(NatsAuth(user="alice", password=SecretStr(PASSWORD), token=SecretStr(TOKEN)))


def test_config_show_never_prints_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """`drivemt config show`, as a table and as JSON, masks URL credentials and every secret setting, and names
    NATS_TOKEN as the token's source."""
    monkeypatch.setenv("DRIVEMT_BUS__AUTH__PASSWORD", PASSWORD)
    monkeypatch.setenv("NATS_TOKEN", TOKEN)
    url = f"nats://a:4222,nats://alice:{PASSWORD}@b:4222"
    runner = CliRunner()
    for extra in ([], ["--json"]):
        # A wide terminal, so that the table folds no value over lines (a folded secret would slip past the check).
        result = runner.invoke(app, ["config", "show", *extra, "--nats-url", url], env={"COLUMNS": "1000"})
        assert result.exit_code == 0, result.output
        assert PASSWORD not in result.output and TOKEN not in result.output
        assert "nats://a:4222,nats://alice:***@b:4222" in result.output and "NATS_TOKEN" in result.output
    shown = json.loads(runner.invoke(app, ["config", "show", "--json", "--nats-url", url]).stdout)
    assert shown["values"]["bus"]["auth"]["password"] == "***" and shown["values"]["bus"]["auth"]["token"] == "***"
    assert shown["sources"]["bus.auth.token"] == "environment (NATS_TOKEN)"
    assert shown["sources"]["bus.auth.password"] == "environment (DRIVEMT_BUS__AUTH__PASSWORD)"
    cfg, _ = explain_config(nats_url=url)
    assert cfg.bus.auth.token is not None and cfg.bus.auth.token.get_secret_value() == TOKEN  # masked, not lost


@pytest.fixture
def log_text() -> Iterator[io.StringIO]:
    """Every structlog entry while the test runs, at every level, as JSON lines (a CLI test before this one leaves
    its own level and processors behind, which capture_logs does not see past)."""
    saved = structlog.get_config()
    buf = io.StringIO()
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.JSONRenderer(default=str)],
        wrapper_class=structlog.make_filtering_bound_logger(0),
        logger_factory=structlog.PrintLoggerFactory(file=buf),
        cache_logger_on_first_use=False,
    )
    yield buf
    structlog.configure(**saved)


async def test_logs_errors_and_the_state_file_never_hold_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_text: io.StringIO
) -> None:
    """A refused connection, a daemon on a password-protected --nats-url and its state file show no password;
    another command then finds the bus through the state file and connects with credentials of its own."""
    import importlib

    # Fresh loggers, in case one was cached with the processors of an earlier test.
    for name in ("runners.host.daemon", "bus.connection", "bus.server", "memory.mr_store", "runners.clients.objects"):
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "log", structlog.get_logger(name))
    async with nats_server(tmp_path / "server", USER_PASSWORD) as url:
        secret_url = with_userinfo(url, f"alice:{PASSWORD}")
        cfg = load_config(
            data_dir=tmp_path / "data",
            nats_url=secret_url,
            memory="bus",
            heartbeat_interval_s=0.5,
            shutdown_grace_s=1.0,
        )
        await assert_refused(with_userinfo(url, "alice:wrong-" + PASSWORD))
        async with Daemon(cfg, embedder=StubEmbedder(), only=[]) as daemon:
            assert daemon.bus is not None and daemon.bus.connected_url == with_userinfo(url, "alice:***")
            state_text = cfg.state_file.read_text()
            client_cfg = load_config(data_dir=cfg.data_dir)  # no --nats-url: the state file
            found = find_bus_url(client_cfg)
            await assert_refused(found)
            await assert_works(found, NatsAuth(user="alice", password=SecretStr(PASSWORD)))
        text = log_text.getvalue()
        logs = [json.loads(line) for line in text.splitlines() if line.strip()]
        assert any(entry["event"] == "bus ready" for entry in logs), [e["event"] for e in logs]
        assert PASSWORD not in text and PASSWORD not in state_text
        assert found == url and json.loads(state_text)["nats_url"] == url
