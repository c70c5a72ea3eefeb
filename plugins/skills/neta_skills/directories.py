"""Which skill directories a session uses, in the order they are searched, and which it may change.

``session_directories`` is the one place that decides it; every tool (and the system prompt's
listing) sees skills through the ``SkillLibrary`` built from its answer.

The user's own skills (``NETA_HOME/skills``) come first, so a repository cannot hide one of
them behind a ``.neta/skills`` folder of the same name. They are read-only unless the host
opts in with ``session.extras["skills_write_to"] = "home"``: a session in one repository
must not rewrite what every later session in every workspace reads. Without the opt-in,
``skill_manage`` creates and changes skills in the workspace's ``.neta/skills`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import neta

WRITE_TO_KEY = "skills_write_to"
"""The ``session.extras`` key a host sets to ``"home"`` to let ``skill_manage`` write home skills.

``"workspace"`` (the default): new skills go to the workspace and home skills are read-only.
``"home"``: new skills go to ``NETA_HOME/skills`` and home skills may be changed.
"""

SkillOrigin = Literal["home", "workspace"]


@dataclass(frozen=True)
class SkillDirectory:
    """One directory of skills a session searches.

    Attributes:
        path: the directory (it need not exist yet).
        origin: ``"home"`` (the user's own, seen in every workspace) or ``"workspace"``
            (the repository's ``.neta/skills``).
        writable: whether ``skill_manage`` may change the skills in it.
    """

    path: Path
    origin: SkillOrigin
    writable: bool


def session_directories(
    session: neta.SessionContext, *, workspace_trusted: bool = True
) -> tuple[SkillDirectory, ...]:
    """The skill directories of ``session``, searched in this order (the first holding a name wins).

    ``NETA_HOME/skills``, then the workspace's ``.neta/skills`` while the workspace is trusted
    (``workspace_trusted``: a repository's skills steer the model; see ``neta.trust``). A
    workspace whose ``.neta/skills`` is the home one (a session started in the user's home
    folder) has the home directory only.

    Raises:
        neta.ConfigError: ``session.extras["skills_write_to"]`` is neither ``"workspace"`` nor
            ``"home"``.
    """
    home = neta.neta_home() / "skills"
    workspace = session.workspace / ".neta" / "skills"
    directories = [SkillDirectory(home, "home", writable=writes_home(session))]
    if workspace_trusted and workspace.resolve() != home.resolve():
        directories.append(SkillDirectory(workspace, "workspace", writable=True))
    return tuple(directories)


def writes_home(session: neta.SessionContext) -> bool:
    """Whether the host let ``session`` write home skills (``skills_write_to`` is ``"home"``).

    Raises:
        neta.ConfigError: the setting is neither ``"workspace"`` nor ``"home"``.
    """
    target = session.extras.get(WRITE_TO_KEY, "workspace")
    if target not in ("workspace", "home"):
        raise neta.ConfigError(
            f"session.extras[{WRITE_TO_KEY!r}] is {target!r}; use 'workspace' or 'home'"
        )
    return target == "home"
