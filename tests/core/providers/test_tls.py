"""The process's shared TLS context for model API clients."""

import ssl

import pytest

import neta


def test_the_shared_context_checks_certificates_and_host_names_and_is_one_object():
    context = neta.tls_client_context()
    assert context is neta.tls_client_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


def test_the_shared_context_refuses_changes_that_would_reach_every_client():
    context = neta.tls_client_context()
    context.set_alpn_protocols(["http/1.1"])  # what httpx sets on each connection: no change
    with pytest.raises(ValueError, match=r"offers http/1\.1 only"):
        context.set_alpn_protocols(["h2", "http/1.1"])
    with pytest.raises(AttributeError, match="cannot be changed"):
        context.check_hostname = False
    with pytest.raises(AttributeError, match="cannot be changed"):
        context.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError, match="no client certificate"):
        context.load_cert_chain("client.pem")
    with pytest.raises(ValueError, match="no other CA certificates"):
        context.load_verify_locations(cafile="extra.pem")
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
