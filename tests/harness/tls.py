"""Certificates for the tests' HTTPS servers: a CA of their own and a server certificate it
signed for ``127.0.0.1`` and ``localhost`` (EC P-256, a day long; made in milliseconds), as the
Trainer's webhook certificate is the CA its status server's clients verify against."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA's certificate (PEM): what clients verify the server with
    cert: Path  # the server's certificate (PEM)
    key: Path  # its private key (PEM)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


def make_certificates(folder: Path, name: str = "emulated") -> Certificates:
    """A CA and a server certificate for the loopback address, written into ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    folder.mkdir(parents=True, exist_ok=True)

    def made(subject: str, key, issuer: str, signer, ca: bool, sans=None):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
            )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = made(f"{name}-ca", ca_key, f"{name}-ca", ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    cert = made(name, key, f"{name}-ca", ca_key, ca=False, sans=sans)
    pem = serialization.Encoding.PEM
    out = Certificates(folder / "ca.crt", folder / "tls.crt", folder / "tls.key")
    out.ca.write_bytes(ca_cert.public_bytes(pem))
    out.cert.write_bytes(cert.public_bytes(pem))
    out.key.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return out
