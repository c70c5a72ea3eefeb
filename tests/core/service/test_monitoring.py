"""``/healthz``, ``/readyz`` and ``/metrics`` of a real server."""

from prometheus_client.parser import text_string_to_metric_families

from neta.errors import StorageUnavailable
from tests import http_clients
from tests.core.hosting.server_harness import ASK, drive, open_client

TOKEN = "api-token"
SCRAPER = "scraper-token"

TODO = {"id": "1", "content": "look", "status": "in_progress"}
WORK = [
    {"error": {"message": "slow down", "retryable": True, "status": 429, "retry_after": 0}},
    {"tool_calls": [{"name": "todo", "arguments": {"todos": [TODO]}}]},
    {"tool_calls": [{"name": "made_up_tool", "arguments": {}}]},
    {"text": "done"},
]


def _api(server, **options):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return http_clients.client(base_url=server.http, headers=headers, timeout=30, **options)


def samples(text):
    """``{(name, sorted labels): value}`` of a Prometheus text exposition."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_healthz_and_readyz_answer_without_a_token_and_tell_nothing_else(serve, tmp_path):
    server = serve([{"text": "hi"}], token=TOKEN)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        health = http.get("/healthz")
        ready = http.get("/readyz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert str(tmp_path) not in health.text + ready.text


def test_readyz_is_503_naming_the_store_when_it_fails_and_the_failures_are_counted(serve, tmp_path):
    server = serve([{"text": "hi"}], token=TOKEN)
    server.hub.store.close()  # nothing can be read or written any more
    with http_clients.client(base_url=server.http, timeout=30) as http:
        ready = http.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"status": "unready", "reason": "the store cannot be reached"}
    assert str(tmp_path) not in ready.text  # the path and the error go to the log only
    with _api(server) as http:
        assert http.post("/v1/sessions").status_code == 503
        counted = samples(http.get("/metrics").text)
    assert counted[("neta_storage_errors_total", (("part", "store"),))] >= 2


def test_readyz_is_503_naming_the_bus_when_it_does_not_answer(serve, redis_url):
    server = serve([{"text": "hi"}], token=TOKEN, redis_url=redis_url)

    async def unreachable(session_id):
        raise StorageUnavailable("the bus cannot read: connection refused")

    server.hub.bus.last_id = unreachable
    with http_clients.client(base_url=server.http, timeout=30) as http:
        ready = http.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"status": "unready", "reason": "the bus cannot be reached"}


def test_metrics_need_the_api_token_or_the_metrics_token_which_opens_nothing_else(serve):
    server = serve([{"text": "hi"}], token=TOKEN, metrics_token=SCRAPER)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        assert http.get("/metrics").status_code == 401
        assert http.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        scraped = http.get("/metrics", headers={"Authorization": f"Bearer {SCRAPER}"})
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain")
        assert http.get(f"/metrics?token={TOKEN}").status_code == 200
        refused = http.post("/v1/sessions", headers={"Authorization": f"Bearer {SCRAPER}"})
        assert refused.status_code == 401


def test_metrics_count_runs_model_calls_tools_retries_and_sessions_and_leak_nothing(
    serve, tmp_path
):
    server = serve(WORK, token=TOKEN, permissions="auto")
    secret_text = "my-secret-message-text"
    with _api(server) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": secret_text})
        assert reply.json()["outcome"] == "completed", reply.json()
        text = http.get("/metrics").text
    counted = samples(text)
    assert counted[("neta_runs_started_total", ())] == 1
    assert counted[("neta_runs_finished_total", (("outcome", "completed"),))] == 1
    assert counted[("neta_run_duration_seconds_count", (("outcome", "completed"),))] == 1
    assert counted[("neta_tool_calls_total", (("outcome", "ok"), ("tool", "todo")))] == 1
    unknown = ("neta_tool_calls_total", (("outcome", "error"), ("tool", "unknown")))
    assert counted[unknown] == 1  # the name the model made up is not a label
    assert counted[("neta_provider_retries_total", (("kind", "rate_limited"),))] == 1
    assert counted[("neta_model_call_duration_seconds_count", (("outcome", "ok"),))] == 3
    assert counted[("neta_model_call_duration_seconds_count", (("outcome", "error"),))] == 1
    assert counted[("neta_sessions_live", ())] == 1
    assert counted[("neta_pending_questions", ())] == 0
    assert counted[("neta_storage_errors_total", (("part", "store"),))] == 0
    assert ("process_resident_memory_bytes", ()) in counted
    for leak in (sid, secret_text, "made_up_tool", str(tmp_path)):
        assert leak not in text


def test_metrics_show_a_question_waiting_for_its_answer(serve):
    server = serve([ASK, {"text": "blue it is"}], token=TOKEN)

    async def scenario():
        client, ready = await open_client(server.ws_url(token=TOKEN))
        await client.send("user_message", ready["data"]["sessionId"], text="paint it")
        asked = await client.until("clarify_request")
        async with http_clients.async_client(base_url=server.http, timeout=30) as http:
            waiting = samples((await http.get(f"/metrics?token={TOKEN}")).text)
            answer = {"requestId": asked["data"]["requestId"], "answer": "blue"}
            await client.send("clarify_response", ready["data"]["sessionId"], **answer)
            await client.until("run_finished")
            answered = samples((await http.get(f"/metrics?token={TOKEN}")).text)
        assert waiting[("neta_pending_questions", ())] == 1
        assert answered[("neta_pending_questions", ())] == 0
        tool = ("neta_tool_calls_total", (("outcome", "ok"), ("tool", "clarify")))
        assert answered[tool] == 1

    drive(scenario())


def test_two_servers_in_one_process_keep_their_own_metrics(serve):
    first = serve([{"text": "one"}], token=TOKEN)
    second = serve([{"text": "two"}], token=TOKEN)
    with _api(first) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
        assert samples(http.get("/metrics").text)[("neta_runs_started_total", ())] == 1
    with _api(second) as http:
        assert samples(http.get("/metrics").text)[("neta_runs_started_total", ())] == 0
