"""``/metrics`` of ``neta serve --workers 2``: one set of numbers, whichever worker answers."""

from __future__ import annotations

import signal

from tests import http_clients
from tests.core.service.test_monitoring import samples
from tests.services import bearer, start_neta_serve

RUNS = 12
SCRAPES = 8


def test_the_metrics_of_two_workers_add_up_whichever_worker_answers(tmp_path, redis_url):
    proc, base = start_neta_serve(
        tmp_path, [{"text": "hi"}], "--workers", "2", environ={"NETA_REDIS_URL": redis_url}
    )
    try:
        for _ in range(RUNS):  # a connection each: the kernel hands each to either worker
            with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
                sid = http.post("/v1/sessions").json()["sessionId"]
                reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
                assert reply.json()["outcome"] == "completed"
        for _ in range(SCRAPES):
            with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
                counted = samples(http.get("/metrics").text)
            assert counted[("neta_runs_started_total", ())] == RUNS
            assert counted[("neta_runs_finished_total", (("outcome", "completed"),))] == RUNS
            assert counted[("neta_model_call_duration_seconds_count", (("outcome", "ok"),))] == RUNS
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
