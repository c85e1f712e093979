"""A small asyncio client of the real API server (aiohttp, the admin's client certificate): what
the harness and its process kubelet need, no more: JSON requests, server-side apply, and watches
that resume from their last resourceVersion (listing again after a 410)."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from urllib.parse import quote

import aiohttp

FIELD_MANAGER = "kale-ext-controlplane"

#: apiVersion/kind → (path prefix, plural, namespaced) of what the harness applies.
KINDS = {
    "apiextensions.k8s.io/v1/CustomResourceDefinition":
        ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration":
        ("/apis/admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", False),
    "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration":
        ("/apis/admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", False),
    "trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime":
        ("/apis/trainer.kubeflow.org/v1alpha1", "clustertrainingruntimes", False),
    "storage.k8s.io/v1/StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
    "v1/Namespace": ("/api/v1", "namespaces", False),
    "v1/Secret": ("/api/v1", "secrets", True),
    "v1/ConfigMap": ("/api/v1", "configmaps", True),
    "v1/ServiceAccount": ("/api/v1", "serviceaccounts", True),
    "rbac.authorization.k8s.io/v1/Role": ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    "rbac.authorization.k8s.io/v1/RoleBinding":
        ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding":
        ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
}  # fmt: skip


class ApiError(Exception):
    def __init__(self, status: int, body: str):
        try:
            message = json.loads(body).get("message", body)
        except (ValueError, AttributeError):
            message = body
        super().__init__(f"{status}: {message}")
        self.status, self.body = status, body


def object_path(obj: dict) -> str:
    """The URL path of an object the harness applies."""
    prefix, plural, namespaced = KINDS[f"{obj['apiVersion']}/{obj['kind']}"]
    meta = obj["metadata"]
    ns = f"/namespaces/{meta.get('namespace') or 'default'}" if namespaced else ""
    return f"{prefix}{ns}/{plural}/{quote(meta['name'])}"


class Kube:
    """``await Kube.open(server, ca, cert, key)``; ``await kube.close()``."""

    def __init__(self, server: str, session: aiohttp.ClientSession):
        self.server, self.session = server.rstrip("/"), session

    @classmethod
    async def open(cls, server: str, ca, cert, key) -> Kube:
        context = ssl.create_default_context(cafile=str(ca))
        context.load_cert_chain(str(cert), str(key))
        connector = aiohttp.TCPConnector(ssl=context, limit=64)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
        return cls(server, aiohttp.ClientSession(connector=connector, timeout=timeout))

    async def close(self) -> None:
        await self.session.close()

    async def request(self, method: str, path: str, body=None, params=None,
                      content_type: str = "application/json", timeout: float = 30):  # fmt: skip
        data = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        async with self.session.request(
            method, self.server + path, data=data, params=params, headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:  # fmt: skip
            text = await response.text()
            if response.status >= 400:
                raise ApiError(response.status, text)
            if not text:
                return None
            return json.loads(text) if text[:1] in "{[" else text

    async def get(self, path: str, params=None):
        return await self.request("GET", path, params=params)

    async def get_or_none(self, path: str):
        try:
            return await self.get(path)
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    async def apply(self, obj: dict) -> dict:
        """Server-side apply, forced (the harness owns what it installs)."""
        return await self.request(
            "PATCH", object_path(obj), json.dumps(obj),
            params={"fieldManager": FIELD_MANAGER, "force": "true"},
            content_type="application/apply-patch+yaml",
        )  # fmt: skip

    async def patch_status(self, path: str, status: dict) -> dict:
        return await self.request("PATCH", path + "/status", {"status": status},
                                  content_type="application/merge-patch+json")  # fmt: skip

    async def watch(self, path: str, params: dict | None = None) -> AsyncIterator[tuple[str, dict]]:
        """(type, object) of a list then its changes, forever: ADDED for each listed object
        (again after a relist: the caller must be idempotent), then what the watch says."""
        params = dict(params or {})
        version = None
        while True:
            if version is None:
                listed = await self.get(path, params=params)
                version = listed["metadata"]["resourceVersion"]
                for item in listed.get("items") or []:
                    yield "ADDED", item
            query = {**params, "watch": "true", "resourceVersion": version,
                     "allowWatchBookmarks": "true", "timeoutSeconds": "300"}  # fmt: skip
            try:
                async with self.session.get(self.server + path, params=query,
                                            timeout=aiohttp.ClientTimeout(total=None,
                                                                          sock_read=330)) as r:  # fmt: skip
                    if r.status == 410:
                        version = None
                        continue
                    if r.status >= 400:
                        raise ApiError(r.status, await r.text())
                    async for line in r.content:
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        kind, obj = event["type"], event["object"]
                        if kind == "ERROR":
                            if obj.get("code") == 410:
                                version = None
                            break
                        version = obj["metadata"].get("resourceVersion", version)
                        if kind != "BOOKMARK":
                            yield kind, obj
            except (aiohttp.ClientError, asyncio.TimeoutError):
                await asyncio.sleep(0.5)
