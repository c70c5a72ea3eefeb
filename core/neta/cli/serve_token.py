"""The token a served command requires: the one the user gave, or one made for the run.

``neta serve`` and ``neta mcp serve --http`` always require a token, so that another user of
the machine cannot drive the agent through its loopback port. Without ``--token``,
``--token-file`` or ``NETA_TOKEN`` they make one and say it once as they start (as Jupyter
does). Off loopback they still refuse to start without a token the user chose.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import typer

from neta.cli.secret_file import secret_option
from neta.hosting.auth import check_exposure

TOKEN_VARIABLE = "NETA_TOKEN"
"""The environment variable giving the token when ``--token`` does not."""


@dataclass(frozen=True)
class ServeToken:
    """The token clients must present.

    Attributes:
        value: the token.
        made: whether it was made for this run (the user gave none).
    """

    value: str
    made: bool

    def announce(self, url: str) -> None:
        """Say a made token, with the URL it opens, on stderr (a given one is not repeated)."""
        if self.made:
            typer.echo(
                f"Token for {url}: {self.value} "
                f"(made for this run; --token-file or {TOKEN_VARIABLE} sets your own)",
                err=True,
            )


def given_token(token: str | None, token_file: Path | None) -> str | None:
    """The token ``--token`` (with a warning) or ``--token-file`` gives, if either does.

    Raises:
        typer.BadParameter: both are given, or the file gives no token.
    """
    return secret_option(token, token_file, option="--token", instead=TOKEN_VARIABLE)


def serve_token(given: str | None, host: str) -> ServeToken:
    """The token to require when serving on ``host``.

    It is ``given`` (``--token``), else ``NETA_TOKEN``, else a new random one.

    Raises:
        ConfigError: ``host`` is not a loopback address and the user gave no token.
    """
    chosen = given or os.environ.get(TOKEN_VARIABLE) or None
    check_exposure(host, chosen)
    if chosen:
        return ServeToken(chosen, made=False)
    return ServeToken(secrets.token_urlsafe(32), made=True)
