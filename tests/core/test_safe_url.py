from pathlib import Path

import pytest

from neta.errors import ConfigError, ProviderError
from neta.hosting.engines import describe_store, open_bus, open_store
from neta.safe_url import safe_reason, safe_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:SECRET@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("postgresql://neta:SECRET@db:5432/neta", "postgresql://neta:***@db:5432/neta"),
        ("https://SECRET@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("http://u:SECRET@127.0.0.1:9/v1", "http://u:***@127.0.0.1:9/v1"),
        ("redis://:pa#SECRET@host:6379/0", "redis://:***@host:6379/0"),
        ("http://u:pa/SECRET@host/v1", "http://u:***@host/v1"),
        ("redis://:pa?SECRET@host/0", "redis://:***@host/0"),
        ("u:SECRET@host:5432", "u:***@host:5432"),
    ],
)
def test_safe_url_masks_the_password_and_a_token_given_as_user(url, shown):
    assert safe_url(url) == shown


@pytest.mark.parametrize(
    "name",
    [
        "password", "passwd", "pwd", "secret", "token", "api-key", "api_key", "apikey", "key",
        "signature", "sig", "access_token", "client_secret", "auth", "X-Amz-Signature",
        "X-Amz-Credential", "X-Amz-Security-Token", "PASSWORD", "refresh_token",
    ],
)  # fmt: skip
def test_safe_url_masks_query_parameters_named_like_secrets(name):
    url = f"http://127.0.0.1:9/v1?model=m&{name}=SECRET&db=0"
    assert safe_url(url) == f"http://127.0.0.1:9/v1?model=m&{name}=***&db=0"


def test_safe_url_masks_secrets_in_the_fragment_and_after_semicolons():
    url = "https://app.example/cb?state=s;token=SECRET#access_token=SECRET&expires=3600"
    assert safe_url(url) == "https://app.example/cb?state=s;token=***#access_token=***&expires=3600"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765",
        "https://api.openai.com/v1",
        "postgresql://127.0.0.1:5432/neta?sslmode=require",
        "postgresql://neta@127.0.0.1:5432/neta",
        "redis://default@127.0.0.1:6379/0",
        "unix:///tmp/redis.sock?db=0",
        "https://host.example:443/@scope/pkg",
        "http://[::1]:8080/v1?api-version=2024-01-01",
        "https://example.com/search?q=a@b.example",
        "not a url",
    ],
)
def test_safe_url_leaves_a_url_without_credentials_as_it_is(url):
    assert safe_url(url) == url


def test_safe_url_of_a_safe_url_is_the_same():
    once = safe_url("redis://u:SECRET@h/0?password=SECRET#sig=SECRET")
    assert safe_url(once) == once
    assert "SECRET" not in once


def test_the_store_description_masks_the_database_password(tmp_path):
    url = "postgresql://neta:SECRET@127.0.0.1:5432/neta?password=SECRET&sslmode=require"
    shown = describe_store(tmp_path, url)
    assert (
        shown == "PostgreSQL postgresql://neta:***@127.0.0.1:5432/neta?password=***&sslmode=require"
    )


def test_a_provider_error_masks_the_url_it_names_and_carries():
    error = ProviderError(
        "model API answered 401: invalid API key",
        provider="openai",
        model="m",
        url="http://u:SECRET@127.0.0.1:9/v1?api-key=SECRET",
    )
    assert str(error) == (
        "openai model 'm' at http://u:***@127.0.0.1:9/v1?api-key=***: "
        "model API answered 401: invalid API key"
    )
    assert error.url == "http://u:***@127.0.0.1:9/v1?api-key=***"


def test_a_database_that_cannot_be_reached_is_named_without_its_credentials():
    from neta.errors import StorageUnavailable
    from neta.hosting.store.postgres import PostgresStore
    from tests.services import free_port

    url = f"postgresql://neta:SECRET@127.0.0.1:{free_port()}/neta?password=SECRET"
    with pytest.raises(StorageUnavailable) as refused:
        PostgresStore(url, timeout=0.5)
    assert "cannot open postgresql://neta:***@127.0.0.1:" in str(refused.value)
    assert "SECRET" not in str(refused.value)


@pytest.mark.parametrize(
    ("open_engine", "url"),
    [
        (lambda url: open_store(Path("unused"), url), "neta:SECRET@db.example/neta"),
        (lambda url: open_store(Path("unused"), url), "mysql://neta:SECRET@db.example/neta"),
        (open_bus, "neta:SECRET@redis.example:6379"),
        (open_bus, "memcached://:SECRET@cache.example"),
    ],
)
def test_a_url_of_an_unknown_engine_is_refused_without_its_credentials(open_engine, url):
    with pytest.raises(ConfigError) as refused:
        open_engine(url)
    assert "SECRET" not in str(refused.value)


def test_an_engines_error_is_one_line_without_the_password_it_quoted():
    error = ConnectionError('cannot log in as "neta" with "p%40ss"\n\tand p@ss\n')
    reason = safe_reason(error, "postgresql://neta:p%40ss@db.example/neta")
    assert reason == 'cannot log in as "neta" with "***" and ***'
