"""Hosted sessions share one model-API client per configuration, closed with the host."""

import asyncio
import time

from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from tests.core.hosting.server_harness import builtin_pm
from tests.fake_openai import FakeOpenAI, Reply


def test_sessions_of_a_host_share_one_pooled_connection_closed_at_shutdown(tmp_path):
    replies = [Reply(text=f"answer {n}") for n in range(4)]
    with FakeOpenAI(replies) as fake:

        async def scenario():
            hub = SessionHub(
                HostConfig(
                    provider="openai",
                    provider_options={"base_url": fake.base_url, "stream": False},
                    model="m",
                    home=tmp_path / "home",
                    workspace=tmp_path,
                    plugin_manager=builtin_pm(),
                )
            )
            first, second = await hub.create("service"), await hub.create("service")
            for live in (first, second, first, second):
                result = await hub.start_run(live, "hi")
                assert result.outcome == "completed", result.reason
            await hub.shutdown()

        asyncio.run(scenario())
        # four model calls of two sessions, one keep-alive connection: one client, one pool
        assert len(fake.requests) == 4
        assert len(set(fake.peers)) == 1
        deadline = time.monotonic() + 5
        while fake.open_connections and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fake.open_connections == 0  # the host closed its client when it stopped
