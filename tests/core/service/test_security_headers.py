"""What a browser may do with the host app's responses: no CDN, a strict policy on HTML."""

import asyncio

import httpx
from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from neta.console import STATIC
from neta.service.security_headers import SecurityHeaders
from tests import http_clients


def _policy_directives(header: str) -> dict[str, str]:
    pairs = (part.strip().partition(" ") for part in header.split(";") if part.strip())
    return {name: value for name, _, value in pairs}


def test_the_api_docs_pages_are_off_and_the_spec_stays(serve):
    server = serve([])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            assert http.get(path).status_code == 404, path
        spec = http.get("/openapi.json")
    assert spec.status_code == 200
    assert "/v1/sessions" in spec.json()["paths"]


def test_nothing_the_server_sends_a_browser_loads_from_elsewhere(serve):
    server = serve([])
    paths = ["/", "/docs", "/redoc", *(f"/console/{p.name}" for p in sorted(STATIC.iterdir()))]
    with http_clients.client(base_url=server.http, timeout=30) as http:
        for path in paths:
            text = http.get(path).text
            assert "cdn." not in text, path
            assert 'src="http' not in text, path


def test_every_response_of_the_server_says_nosniff_and_no_referrer(serve):
    server = serve([])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        for path in ("/", "/console/config.json", "/openapi.json", "/v1/sessions/nope", "/nope"):
            response = http.get(path)
            assert response.headers["x-content-type-options"] == "nosniff", path
            assert response.headers["referrer-policy"] == "no-referrer", path
            policy = _policy_directives(response.headers["content-security-policy"])
            assert policy["frame-ancestors"] == "'none'", path
            assert "unsafe-inline" not in response.headers["content-security-policy"], path


def test_the_console_keeps_its_own_stricter_policy(serve):
    server = serve([])
    page = http_clients.get(f"{server.http}/")
    policy = _policy_directives(page.headers["content-security-policy"])
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'"


def test_an_html_response_without_a_policy_gets_a_strict_one():
    app = FastAPI()

    @app.get("/page")
    async def page() -> HTMLResponse:
        return HTMLResponse("<script>alert(1)</script>")

    @app.get("/own")
    async def own() -> HTMLResponse:
        return HTMLResponse("x", headers={"Content-Security-Policy": "default-src 'none'"})

    async def fetch(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=SecurityHeaders(app))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.get(path)

    response = asyncio.run(fetch("/page"))
    policy = _policy_directives(response.headers["content-security-policy"])
    assert policy["default-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["base-uri"] == "'none'"
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    kept = asyncio.run(fetch("/own"))
    assert kept.headers.get_list("content-security-policy") == ["default-src 'none'"]
