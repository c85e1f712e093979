"""The control plane's certificates: one CA of its own (EC P-256, made in milliseconds), the
serving certificates it signed for every HTTPS server here (all on 127.0.0.1: the API server,
the webhooks and the Trainer's status server, the kubelet), the admin's client certificate
(group ``system:masters``: every component and the user's kubeconfig use it), and the key pair
that signs service-account tokens."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

#: The names a serving certificate answers to besides 127.0.0.1 and localhost.
API_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
             "kubernetes.default.svc.cluster.local")  # fmt: skip
SERVICE_IP = "10.96.0.1"  # the `kubernetes` Service's address in the service range


@dataclass(frozen=True)
class Pair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class PKI:
    folder: Path
    ca: Pair
    admin: Pair  # client certificate, O=system:masters
    serving: Pair  # 127.0.0.1, localhost and the Service names the components are reached by
    service_account: Pair  # cert = the public key (PEM), key = the signing key

    def serving_for(self, name: str) -> Pair:
        """The serving pair, named ``name`` in its own folder (tls.crt, tls.key, ca.crt): what
        controller-runtime's webhook servers read from their certificate folder."""
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        for src, dst in ((self.serving.cert, "tls.crt"), (self.serving.key, "tls.key"),
                         (self.ca.cert, "ca.crt")):  # fmt: skip
            (folder / dst).write_bytes(src.read_bytes())
        return Pair(folder / "tls.crt", folder / "tls.key")


def make_pki(folder: Path, service_names: tuple[str, ...] = ()) -> PKI:
    """A CA and everything it signs, written into ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    pem = serialization.Encoding.PEM

    def name(cn: str, org: str | None = None):
        attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
        if org:
            attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
        return x509.Name(attrs)

    def write(stem: str, cert, key) -> Pair:
        pair = Pair(folder / f"{stem}.crt", folder / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(pem))
        pair.key.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))  # fmt: skip
        pair.key.chmod(0o600)
        return pair

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("kale-ext-controlplane-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )

    def signed(subject, usages, sans=None):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, True, False, False, False, False, False, False), True
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
            )
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(ca_key, hashes.SHA256()), key

    ca = write("ca", ca_cert, ca_key)
    admin = write("admin", *signed(name("kale-ext-admin", "system:masters"),
                                   [ExtendedKeyUsageOID.CLIENT_AUTH]))  # fmt: skip
    dns = ["localhost", *API_NAMES, *service_names]
    sans = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address(SERVICE_IP)),
            *(x509.DNSName(d) for d in dns)]  # fmt: skip
    serving = write("serving", *signed(name("kale-ext-controlplane"),
                                       [ExtendedKeyUsageOID.SERVER_AUTH,
                                        ExtendedKeyUsageOID.CLIENT_AUTH], sans))  # fmt: skip
    sa_key = ec.generate_private_key(ec.SECP256R1())
    sa = Pair(folder / "sa.pub", folder / "sa.key")
    sa.cert.write_bytes(sa_key.public_key().public_bytes(
        pem, serialization.PublicFormat.SubjectPublicKeyInfo))  # fmt: skip
    sa.key.write_bytes(sa_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))  # fmt: skip
    sa.key.chmod(0o600)
    return PKI(folder, ca, admin, serving, sa)
