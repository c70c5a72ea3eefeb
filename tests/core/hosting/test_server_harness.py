"""The in-process server harness the hosting, gateway and service tests share."""

import asyncio

from tests.core.hosting.server_harness import drive, open_client


def test_a_client_another_loop_left_open_does_not_break_the_next_drive(serve):
    # as a scenario run outside ``drive`` that failed midway leaves its clients open
    server = serve([])
    other = asyncio.new_event_loop()
    try:
        left, _ = other.run_until_complete(open_client(server.ws_url()))

        async def scenario():
            _, ready = await open_client(server.ws_url())
            return ready["type"]

        assert drive(scenario()) == "session_ready"
        other.run_until_complete(left.ws.close())
    finally:
        other.close()
