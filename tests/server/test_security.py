"""Security of the server extension: every verb authenticated (proved by enumerating what the
extension registers), no auth → 403, cookie auth without XSRF → 403, paths and names that try to
leave their place refused; the OpenAPI document covers every route; loading stays cheap."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tornado.web
import yaml
from jupyter_server.base.handlers import APIHandler
from tornado.routing import Rule, RuleRouter

from kale_ext.server import handlers as server_handlers

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

OPENAPI = Path(server_handlers.__file__).with_name("openapi.yaml")
_AUTHENTICATED = tornado.web.authenticated(lambda self: None).__code__
SAMPLE = {"name": "some-job"}


def kale_routes(web_app) -> list[tuple[str, type]]:
    """(pattern, handler class) of every kale_ext handler the server's web app routes to."""
    found = []

    def walk(router) -> None:
        for rule in getattr(router, "rules", []):
            assert isinstance(rule, Rule)
            target = rule.target
            if isinstance(target, RuleRouter) or hasattr(target, "rules"):
                walk(target)
            elif isinstance(target, type) and target.__module__.startswith("kale_ext"):
                found.append((rule.matcher.regex.pattern, target))

    walk(web_app.default_router)
    walk(web_app.wildcard_router)
    return found


def verbs(handler: type) -> list[str]:
    """The HTTP methods a handler implements (not tornado's 405 default)."""
    return [
        m
        for m in handler.SUPPORTED_METHODS
        if getattr(handler, m.lower()) is not tornado.web.RequestHandler._unimplemented_method
    ]


def unauthenticated(routes) -> list[str]:
    """Every verb of these (pattern, handler) routes that lacks @tornado.web.authenticated."""
    missing = []
    for pattern, handler in routes:
        for verb in verbs(handler):
            method = getattr(handler, verb.lower())
            if method is APIHandler.options:
                continue  # CORS preflight: jupyter_server's own, deliberately open
            if getattr(method, "__code__", None) is not _AUTHENTICATED:
                missing.append(f"{verb} of {handler.__name__} ({pattern})")
    return missing


def test_every_verb_of_every_handler_requires_authentication(jp_serverapp):
    routes = kale_routes(jp_serverapp.web_app)
    assert len(routes) == len(server_handlers.ROUTES) + 1  # + the JSON 404 for the rest
    missing = unauthenticated(routes)
    assert not missing, "not @tornado.web.authenticated: " + ", ".join(missing)


def test_the_check_finds_a_verb_without_authentication():
    class Careless(server_handlers.KaleExtHandler):
        @tornado.web.authenticated
        def get(self):
            pass

        def delete(self):  # forgot the decorator
            pass

    assert unauthenticated([("kale-ext/careless", Careless)]) == [
        "DELETE of Careless (kale-ext/careless)"
    ]


def route_requests() -> list[tuple[str, str]]:
    out = []
    for template, handler in server_handlers.ROUTES:
        path = template.format(**SAMPLE)
        out += [(verb, path) for verb in verbs(handler) if verb != "OPTIONS"]
    return out


@pytest.mark.parametrize(("method", "path"), route_requests())
@pytest.mark.parametrize("auth", ["none", "wrong-token"])
async def test_requests_without_authentication_are_403(
    http_server_client, jp_base_url, root, method, path, auth
):
    headers = {"Authorization": "token not-the-token"} if auth == "wrong-token" else {}
    body = json.dumps({"path": "plain_python.ipynb"}) if method in ("POST", "PUT") else None
    r = await http_server_client.fetch(
        f"{jp_base_url}kale-ext/{path}",
        method=method,
        body=body,
        headers=headers,
        raise_error=False,
        follow_redirects=False,
    )
    assert r.code == 403
    assert r.headers["Content-Type"].startswith("application/json")
    assert json.loads(r.body)["message"].startswith("authentication required")


async def cookie_session(http_server_client, jp_base_url, jp_auth_header) -> str:
    """Jupyter's login cookie, as a browser holds it after logging in with the token."""
    r = await http_server_client.fetch(f"{jp_base_url}api/me", headers=jp_auth_header)
    cookies = [c.split(";")[0] for c in r.headers.get_list("Set-Cookie")]
    login = [c for c in cookies if c.startswith("username-")]
    assert login, cookies
    return login[0]


@pytest.mark.parametrize(
    ("method", "path", "body", "with_xsrf"),
    [
        ("POST", "compile", {"path": "plain_python.ipynb"}, 200),
        ("POST", "jobs", {"path": "plain_python.ipynb"}, 201),
        ("DELETE", "jobs/some-job", None, 404),
    ],
)
async def test_cookie_auth_without_xsrf_is_403(
    http_server_client, jp_base_url, jp_auth_header, root, jobs_dir, method, path, body, with_xsrf
):
    """The browser's case: a cookie-authenticated state-changing request needs `_xsrf` (a token
    in the Authorization header, as jp_fetch sends, is exempt by Jupyter's design)."""
    login = await cookie_session(http_server_client, jp_base_url, jp_auth_header)
    url = f"{jp_base_url}kale-ext/{path}"
    data = json.dumps(body) if body is not None else None

    async def send(headers):
        return await http_server_client.fetch(
            url, method=method, body=data, headers=headers, raise_error=False
        )

    r = await send({"Cookie": login})
    assert r.code == 403
    assert "_xsrf" in json.loads(r.body)["message"]
    r = await send({"Cookie": f"{login}; _xsrf=abc123", "X-XSRFToken": "wrong"})
    assert r.code == 403
    # the same request with a matching XSRF cookie and header gets through
    r = await send({"Cookie": f"{login}; _xsrf=abc123", "X-XSRFToken": "abc123"})
    assert r.code == with_xsrf, r.body


async def test_cookie_auth_reads_without_xsrf(http_server_client, jp_base_url, jp_auth_header):
    login = await cookie_session(http_server_client, jp_base_url, jp_auth_header)
    r = await http_server_client.fetch(
        f"{jp_base_url}kale-ext/backend", headers={"Cookie": login}, raise_error=False
    )
    assert r.code == 200


@pytest.mark.parametrize(
    "path",
    [
        "jobs/..%2F..%2Fetc%2Fpasswd",
        "jobs/..",
        "jobs/%2Fetc%2Fpasswd/logs",
        "jobs/a%00b",
        "runtimes/..%2F..%2Fsecret",
    ],
)
async def test_names_in_the_url_cannot_name_files(api, path):
    r = await api.get(path)
    assert r.status in (400, 404) and r.headers["Content-Type"].startswith("application/json")
    if r.status == 400:
        assert "not a valid" in r.json["message"]


# -- OpenAPI --


def openapi() -> dict:
    return yaml.safe_load(OPENAPI.read_text())


def to_template(regex: str) -> str:
    """`/a%40b/kale-ext/jobs/(?P<name>[^/]+)/?$` → `/kale-ext/jobs/{name}`."""
    path = regex[regex.index("/kale-ext") :]
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)
    return path.removesuffix("$").removesuffix("/?")


def test_every_registered_route_is_in_the_openapi_document(jp_serverapp):
    paths = openapi()["paths"]
    routes = [(to_template(p), h) for p, h in kale_routes(jp_serverapp.web_app)]
    routes = [(t, h) for t, h in routes if h is not server_handlers.NotFoundHandler]
    assert {t for t, _ in routes} <= set(paths), sorted({t for t, _ in routes} - set(paths))
    for template, handler in routes:
        documented = {m.upper() for m in paths[template] if m not in ("parameters", "description")}
        assert documented == set(verbs(handler)) - {"OPTIONS"}, template


def test_every_documented_path_is_a_route():
    documented = set(openapi()["paths"])
    routes = {"/kale-ext/" + t for t, _ in server_handlers.ROUTES}
    assert documented == routes


def test_the_openapi_document_is_valid_and_resolves():
    spec = openapi()
    assert spec["openapi"].startswith("3.")
    text = OPENAPI.read_text()
    for ref in set(re.findall(r'\$ref: "#/([^"]+)"', text)):
        node = spec
        for part in ref.split("/"):
            node = node[part]  # KeyError: a dangling $ref
    for path, item in spec["paths"].items():
        for verb, op in item.items():
            if verb in ("parameters", "description"):
                continue
            assert op["responses"], (path, verb)
            assert "403" in op["responses"], (path, verb)


#: Operations that write nothing the server keeps: a compile (its processes write nothing), the
#: debug timer's reset (memory only). Every other POST, PUT and DELETE writes, and so does the
#: packages probe (a probe job and its cache).
WRITES_NOTHING = {("/kale-ext/compile", "post"), ("/kale-ext/debug/loop-lag", "delete")}


def test_every_endpoint_that_writes_documents_the_full_disk():
    """Issue 42: a full or read-only folder is a 507 naming it; the document says so wherever a
    request writes, and the contract says which folders."""
    spec = openapi()
    writing = {(p, v) for p, item in spec["paths"].items() for v in item
               if v in ("post", "put", "delete")} - WRITES_NOTHING  # fmt: skip
    writing.add(("/kale-ext/runtimes/{name}/packages", "get"))
    for path, verb in sorted(writing):
        assert spec["paths"][path][verb]["responses"].get("507") == {
            "$ref": "#/components/responses/InsufficientStorage"
        }, (path, verb)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rest-api.md").read_text()
    assert "`507`" in doc and "InsufficientStorage" in doc


def test_the_rest_contract_lists_every_endpoint():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rest-api.md").read_text()
    for template, handler in server_handlers.ROUTES:
        for verb in verbs(handler):
            if verb != "OPTIONS":
                assert f"`{verb} {template}`" in doc, f"{verb} {template}"


# -- loading the extension stays cheap --

PROBE = textwrap.dedent(
    """
    import json, sys, time
    from jupyter_server.serverapp import ServerApp

    app = ServerApp(jpserver_extensions={"kale_ext": True}, root_dir=sys.argv[1],
                    reraise_server_extension_failures=True)
    app.initialize(argv=[], find_extensions=False, new_httpserver=False)
    heavy = ("kubernetes", "kubeflow", "kubeflow_trainer_api", "torch", "nbclient",
             "kale_ext.compiler", "kale_ext.backends", "pydantic")
    loaded = sorted({m for m in sys.modules if m.split(".")[0] in heavy or m in heavy})
    apps = app.extension_manager.extension_apps.get("kale_ext", set())
    print(json.dumps({"loaded": loaded, "apps": [type(a).__name__ for a in apps]}))
    """
)


def test_loading_the_extension_imports_nothing_heavy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path), "PATH": "/usr/bin"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["apps"] == ["KaleExtApp"]
    assert result["loaded"] == []


class TestDebugLoopLag:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {
            "backend": "local",
            "jobs_dir": str(tmp_path / "jobs"),
            "debug_loop_lag": True,
            "warm_up": False,
        }

    async def test_it_answers_when_asked_for(self, api):
        first = await api.get("debug/loop-lag")
        assert first.status == 200 and first.json["interval_ms"] == 10.0
        assert first.json["warmed_up"] is False  # this server has no warm-up
        assert (await api.delete("debug/loop-lag")).json == {"reset": True}


async def test_the_debug_endpoint_says_it_is_off_by_default(api):
    for method in ("GET", "DELETE"):
        r = await api.request(method, "debug/loop-lag")
        assert r.status == 404 and r.json["reason"] == "DebugOff"
        assert "--KaleExtApp.debug_loop_lag=True" in r.json["message"]
