"""A connection's outbox: ordered, bounded, and closed once its client is gone."""

from neta.gateway.server import TRY_AGAIN_LATER, QueueOutbox


def test_outbox_of_a_client_too_far_behind_closes_instead_of_growing():
    outbox = QueueOutbox(limit=3)
    for n in range(3):
        outbox.put({"n": n})
    assert outbox.queue.qsize() == 3
    outbox.put({"n": 3})
    assert outbox.closed
    assert outbox.close_code == TRY_AGAIN_LATER
    assert outbox.queue.get_nowait() is None  # the writer's cue to close the connection
    outbox.put({"n": 4})
    assert outbox.queue.empty()


def test_closed_outbox_sends_what_was_queued_then_closes():
    outbox = QueueOutbox(limit=10)
    outbox.put({"n": 1})
    outbox.close(1000, "the session was deleted")
    outbox.put({"n": 2})
    assert [outbox.queue.get_nowait() for _ in range(2)] == [{"n": 1}, None]
    assert (outbox.close_code, outbox.close_reason) == (1000, "the session was deleted")
