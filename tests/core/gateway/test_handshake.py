"""The protocols ``neta serve`` runs: oversize and slow requests get an answer and a closed
socket, and no answer waits for the client's acknowledgement of the one before."""

import contextlib
import socket
import time

import pytest

from tests import http_clients


def upgrade_request(path):
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def read_until_closed(sock, timeout):
    sock.settimeout(timeout)
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


@pytest.mark.parametrize("length", [9_000, 70_000])
def test_upgrade_with_an_oversize_request_line_is_answered_and_closed(serve, length):
    server = serve([])
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(upgrade_request("/ws?pad=" + "a" * length))
        answer, closed = read_until_closed(sock, timeout=5)
    assert answer.split(b"\r\n")[0] in (
        b"HTTP/1.1 400 Bad Request",
        b"HTTP/1.1 414 Request-URI Too Long",
        b"HTTP/1.1 414 URI Too Long",
    )
    assert closed


def test_a_slow_request_head_is_cut_off(serve):
    server = serve([], handshake_timeout=0.5)
    sent = 0
    with (
        socket.create_connection(("127.0.0.1", server.port)) as sock,
        contextlib.suppress(BrokenPipeError, ConnectionResetError),
    ):
        for byte in upgrade_request("/ws")[:40]:  # a byte every 0.1 s: slower than allowed
            sock.sendall(bytes([byte]))
            sent += 1
            time.sleep(0.1)
    # cut off while bytes still came, each within 0.1 s of the last: the limit is on the
    # whole head, and 40 bytes take at least 4 s, eight times the limit
    assert sent < 40


def test_a_connection_that_sends_nothing_is_closed(serve):
    server = serve([], handshake_timeout=0.5)
    patient = serve([], handshake_timeout=5)  # ten times as long
    with (
        socket.create_connection(("127.0.0.1", patient.port)) as waiting,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        _, closed = read_until_closed(sock, timeout=30)
        waiting.setblocking(False)
        with pytest.raises(BlockingIOError):  # open, nothing to read: its limit is still ahead
            waiting.recv(1)
    assert closed


def test_answers_are_not_held_back_on_a_socket_made_without_naming_tcp(serve):
    # the listening socket is made as uvicorn makes one for --workers, without naming TCP;
    # asyncio sets TCP_NODELAY only where the socket names it, so each answer's last piece
    # waited for the client's delayed acknowledgement (~40 ms on Linux)
    server = serve([])
    (listening,) = server.server.servers[0].sockets
    assert listening.proto == 0
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /v1/sessions/nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 404")
        accepted = [
            c.transport.get_extra_info("socket") for c in server.server.server_state.connections
        ]
        assert accepted
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted)
    assert http_clients.held_back_seconds(server.http) < http_clients.DELAYED_ACK_SECONDS / 2
