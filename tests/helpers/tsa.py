"""A local RFC 3161 time-stamping authority for tests: ``openssl ts`` behind a web server.

:class:`LocalTSA` makes a CA and a TSA certificate signed by it (extendedKeyUsage critical
timeStamping) with ``openssl``, then serves ``POST /tsa`` on 127.0.0.1: the request body
goes to ``openssl ts -reply`` and its answer comes back as ``application/timestamp-reply``,
as a real authority answers. ``mode`` switches it to answering garbage; ``chain`` makes it
send its certificate chain (its own, then the root's: OpenSSL's order, not DER's).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from tests.helpers.webserver import LocalServer, Request, Response

_CONFIG = """
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = Archiver test TSA
[ ca_ext ]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ tsa_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = $dir/serial
signer_cert = $dir/tsa.pem
certs = $dir/{certs}
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(*args: str, cwd: Path, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["openssl", *args], cwd=cwd, input=stdin, capture_output=True, timeout=60, check=False
    )
    if done.returncode:
        raise RuntimeError(f"openssl {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout


def make_authority(folder: Path, name: str = "Archiver test", *, chain: bool = False) -> Path:
    """Write ``ca.pem``/``ca.key``, ``tsa.pem``/``tsa.key``, ``serial`` and ``tsa.cnf``;
    ``chain``: answers carry ``chain.pem`` (the TSA's certificate, then the root's)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = _CONFIG.replace("{dir}", str(folder))
    (folder / "tsa.cnf").write_text(config.replace("{certs}", "chain.pem" if chain else "tsa.pem"))
    (folder / "serial").write_text("01\n")
    cnf = "tsa.cnf"
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key", cwd=folder)
    _openssl("req", "-new", "-x509", "-config", cnf, "-key", "ca.key", "-subj",
             f"/CN={name} root", "-days", "30", "-extensions", "ca_ext", "-out", "ca.pem",
             cwd=folder)  # fmt: skip
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "tsa.key", cwd=folder)
    _openssl("req", "-new", "-config", cnf, "-key", "tsa.key", "-subj", f"/CN={name} TSA",
             "-out", "tsa.csr", cwd=folder)  # fmt: skip
    _openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "30", "-extfile", cnf, "-extensions", "tsa_ext",
             "-out", "tsa.pem", cwd=folder)  # fmt: skip
    (folder / "chain.pem").write_bytes(
        (folder / "tsa.pem").read_bytes() + (folder / "ca.pem").read_bytes()
    )
    return folder


class LocalTSA:
    """An authority on 127.0.0.1; ``url`` to send requests to, ``root`` its CA certificate.

    ``mode``: ``"ok"`` (openssl's answer), ``"garbage"`` (bytes that are no answer),
    ``"rejection"`` (a well-formed answer with status rejection) or ``"unavailable"`` (503).
    ``last_answer``: the bytes it answered last."""

    def __init__(self, folder: Path | None = None, *, chain: bool = False) -> None:
        folder = folder or Path(tempfile.mkdtemp(prefix="tsa-"))
        self.folder = make_authority(folder, chain=chain)
        self.mode = "ok"
        self.requests = 0
        self.last_answer = b""
        self.server = LocalServer({"/tsa": self._answer})

    @property
    def root(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def url(self) -> str:
        return self.server.url("/tsa")

    def start(self) -> LocalTSA:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def _answer(self, request: Request) -> Response:
        self.requests += 1
        if self.mode == "unavailable":  # overloaded or down for maintenance: try later
            return Response(503, b"busy", [], "text/plain")
        if self.mode == "garbage":
            return Response(200, b"<html>not a timestamp</html>", [], "application/timestamp-reply")
        query = Path(tempfile.mkstemp(dir=self.folder, suffix=".tsq")[1])
        query.write_bytes(request.body)
        try:
            reply = _openssl("ts", "-reply", "-config", "tsa.cnf", "-queryfile", query.name,
                             cwd=self.folder)  # fmt: skip
        finally:
            query.unlink()
        if self.mode == "rejection":
            reply = bytes.fromhex("30053003020102")  # status rejection, no token
        self.last_answer = reply
        return Response(200, reply, [], "application/timestamp-reply")
