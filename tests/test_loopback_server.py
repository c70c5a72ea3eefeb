from http.server import BaseHTTPRequestHandler

from tests import http_clients
from tests.loopback_server import LoopbackServer


class Missing(BaseHTTPRequestHandler):
    """Answers every GET 404 on a keep-alive connection, headers and body written apart."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        body = b'{"error": "not found"}'
        self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_answers_on_a_keep_alive_connection_do_not_wait_for_acknowledgements():
    server = LoopbackServer(Missing)
    server.start()
    try:
        held_back = http_clients.held_back_seconds(server.root)
        assert held_back < http_clients.DELAYED_ACK_SECONDS / 2
    finally:
        server.stop()
