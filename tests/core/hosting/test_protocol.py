"""The protocol seam: every host error code has one HTTP status, and both hosts use it."""

import pytest

import neta.errors
from neta.errors import HostError
from neta.hosting.protocol import HTTP_STATUS, error_frame, http_status
from tests import http_clients


def host_error_classes():
    return [
        value
        for value in vars(neta.errors).values()
        if isinstance(value, type) and issubclass(value, HostError)
    ]


@pytest.mark.parametrize("error", host_error_classes(), ids=lambda cls: cls.__name__)
def test_every_host_error_code_has_an_http_status(error):
    assert error.code in HTTP_STATUS


def test_an_error_frame_and_a_rest_refusal_carry_the_same_code(serve):
    refused = HostError("nope", code="busy")
    assert error_frame("s1", refused) == {
        "type": "error",
        "sessionId": "s1",
        "data": {"code": "busy", "message": "nope"},
    }
    assert http_status(refused) == 409
    server = serve([{"text": "slow", "delay": 2}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        missing = http.post("/v1/sessions/nope/messages", json={"text": "hi"})
        assert (missing.status_code, missing.json()["code"]) == (404, "unknown_session")
