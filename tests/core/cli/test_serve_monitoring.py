"""``neta serve``'s monitoring endpoints and options, as a real process."""

import signal

from tests import http_clients
from tests.services import bearer, start_neta_serve


def test_serve_health_needs_no_token_and_its_metrics_token_opens_metrics_only(tmp_path):
    secret = tmp_path / "metrics-token"
    secret.write_text("scrape-me\n")
    secret.chmod(0o600)
    proc, base = start_neta_serve(
        tmp_path, [{"text": "hi"}], "--metrics-token-file", str(secret), "--body-timeout", "5"
    )
    try:
        with http_clients.client(base_url=base, timeout=30) as http:
            assert http.get("/healthz").json() == {"status": "ok"}
            assert http.get("/readyz").json() == {"status": "ready"}
            assert http.get("/metrics").status_code == 401
            scraper = {"Authorization": "Bearer scrape-me"}
            assert "neta_runs_started_total 0.0" in http.get("/metrics", headers=scraper).text
            assert http.post("/v1/sessions", headers=scraper).status_code == 401
            assert http.get("/metrics", headers=bearer()).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
