"""The WebSocket handshake: oversize and slow requests get an answer and a closed socket."""

import socket
import time

import pytest


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
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        closed = False
        for byte in upgrade_request("/ws")[:40]:  # a byte every 0.1 s: slower than allowed
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
        if not closed:
            _, closed = read_until_closed(sock, timeout=3)
    assert closed
    assert time.monotonic() - started < 4.5


def test_a_connection_that_sends_nothing_is_closed(serve):
    server = serve([], handshake_timeout=0.5)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        _, closed = read_until_closed(sock, timeout=5)
    assert closed
    assert time.monotonic() - started < 3
