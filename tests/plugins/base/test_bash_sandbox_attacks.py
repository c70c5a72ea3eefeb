"""bash in the sandbox against the attacks a review made on it: each one here once worked.

Every test plays the attacker's command and checks the host's side of it.
"""

import asyncio
import os
import secrets
import shlex
import socket
import stat
from pathlib import Path

import pytest

import neta
import neta.sandbox
from neta.sandbox import forbidden_variable
from neta_base import bash
from tests.services import require_sandbox

SECRET = "s3cr3t-" + secrets.token_hex(8)


@pytest.fixture(autouse=True)
def sandbox_here():
    """bubblewrap, or a skip (a failure under ``NETA_REQUIRE_SERVICES=1``) saying why."""
    require_sandbox()


def run(session, command, timeout=30):
    tool = bash.build(session)
    return asyncio.run(tool.invoke(bash.BashArgs(command=command, timeout=timeout)))


def test_the_kernels_switches_in_proc_sys_cannot_be_written(session):
    # as root, writing core_pattern ran a program of the workspace on the host as root; the
    # command writes each switch's own value back, so the host is unchanged either way
    result = run(
        session,
        "for f in /proc/sys/kernel/core_pattern /proc/sys/vm/swappiness; do "
        'v=$(cat $f); echo "$v" > $f && echo "WROTE $f"; done; '
        "echo x > /proc/sysrq-trigger 2>/dev/null && echo WROTE-sysrq; true",
    )
    assert "WROTE" not in result.content


def test_a_hidden_folder_inside_the_workspace_cannot_be_renamed_into_view(session, monkeypatch):
    neta_home = session.workspace / "sub" / "nh"
    neta_home.mkdir(parents=True)
    (neta_home / "neta.db").write_text(SECRET)
    monkeypatch.setenv("NETA_HOME", str(neta_home))
    result = run(
        session, "mv sub sub2; mv sub/nh sub/nh2; cat sub2/nh/neta.db sub/nh2/neta.db; true"
    )
    assert SECRET not in result.content
    assert (neta_home / "neta.db").read_text() == SECRET  # nothing was moved on the host
    assert not (session.workspace / "sub2").exists()


@pytest.mark.parametrize("which", ["HOME", "NETA_HOME"])
def test_a_workspace_that_is_the_home_folder_or_neta_home_is_refused(session, monkeypatch, which):
    (session.workspace / "neta.db").write_text(SECRET)
    monkeypatch.setenv(which, str(session.workspace))
    with pytest.raises(neta.ToolError, match="it is a folder the sandbox hides"):
        run(session, "cat neta.db; touch .bashrc")
    assert not (session.workspace / ".bashrc").exists()


def test_a_neta_home_whose_target_lies_in_the_workspace_is_refused(session, monkeypatch):
    # its target in the workspace, where a command could replace what the link leads to
    target = session.workspace / "real-home"
    target.mkdir()
    (target / "neta.db").write_text(SECRET)
    link = session.workspace.parent / "neta-home-link"
    link.symlink_to(target)
    monkeypatch.setenv("NETA_HOME", str(link))
    with pytest.raises(neta.ToolError, match="behind a symlink"):
        run(session, "cat real-home/neta.db")


def test_a_policy_path_turned_into_a_symlink_is_refused(session, monkeypatch):
    home = session.workspace.parent / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    git = session.workspace / ".git"
    session.sandbox = neta.SandboxPolicy(read_only=(git,))
    git.symlink_to("../home")  # what an earlier call left behind
    with pytest.raises(neta.ToolError, match="reached through a symlink"):
        run(session, "cat .git/.ssh/id_ed25519")


def test_no_set_user_id_file_can_be_made_in_the_workspace(session):
    script = (
        "import os\n"
        "fd = os.open('made', os.O_CREAT | os.O_WRONLY, 0o4755); os.close(fd)\n"
        "print(oct(os.stat('made').st_mode))\n"
    )
    result = run(
        session,
        f'cp /bin/true copied; chmod 4755 copied; chmod g+s copied; python3 -c "{script}"; true',
    )
    assert (session.workspace / "copied").exists()
    for path in (session.workspace / "copied", session.workspace / "made"):
        if path.exists():  # refused outright is fine too
            mode = path.stat().st_mode
            assert not mode & (stat.S_ISUID | stat.S_ISGID), (path.name, oct(mode), result.content)


def test_a_unix_socket_the_sandbox_can_see_cannot_be_reached_without_the_network(
    session, monkeypatch
):
    monkeypatch.chdir(session.workspace)  # a socket's path is short; the workspace's is not
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("server.sock")
        listener.listen()
        probe = (
            "import socket; s = socket.socket(socket.AF_UNIX); "
            "s.connect('server.sock'); print('CONNECTED')"
        )
        closed = run(session, f'python3 -c "{probe}"')
        session.sandbox = neta.SandboxPolicy(network=True)
        opened = run(session, f'python3 -c "{probe}"')
    assert "CONNECTED" not in closed.content
    assert "CONNECTED" in opened.content


def test_hidden_folders_are_bounded_in_size(session):
    limit = neta.sandbox.SandboxLimits().tmpfs_size
    result = run(session, "df -B1 --output=size /tmp /run /var/tmp /dev/shm ~ | tail -n +2")
    sizes = [int(line) for line in result.content.split("\n[exit")[0].split()]
    assert len(sizes) == 5
    assert all(size <= limit for size in sizes)


def test_root_only_files_stay_unreadable(session):
    shadow = Path("/etc/shadow")
    if not shadow.exists():
        pytest.skip("this system has no /etc/shadow")
    result = run(session, "head -c 200 /etc/shadow | grep -c :")
    assert result.content.startswith("0\n") or "Permission denied" in result.content


def test_credentials_in_a_shown_toolchain_stay_hidden(session, monkeypatch):
    home = session.workspace.parent / "home"
    cargo_bin = home / ".cargo" / "bin"
    cargo_bin.mkdir(parents=True)
    (cargo_bin / "cargo").write_text("#!/bin/sh\necho cargo\n")
    (home / ".cargo" / "credentials.toml").write_text(SECRET)
    (home / ".cargo" / "config.toml").write_text(f'token = "{SECRET}"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{cargo_bin}{os.pathsep}{os.environ['PATH']}")
    result = run(
        session,
        f"cat {cargo_bin}/cargo {home}/.cargo/config.toml {home}/.cargo/credentials.toml; true",
    )
    assert "echo cargo" in result.content  # the toolchain's programs are there
    assert SECRET not in result.content


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OPENAI_API_KEY_2", "x"),
        ("OPENAI_APIKEY", "x"),
        ("API_KEY", "x"),
        ("HF_TOKEN", "x"),
        ("ANTHROPIC_AUTH_TOKEN", "x"),
        ("GITHUB_TOKEN", "x"),
        ("AWS_SECRET_ACCESS_KEY", "x"),
        ("DB_PASSWORD", "x"),
        ("neta_token", "x"),
        ("DATABASE", "postgres://u:p/w-SECRET@db"),
        ("DATABASE", "mysql://u:p w@h"),
        ("REMOTE", "https://ghp-SECRET@github.com/x"),
        ("DSN", "host=db password=pw-SECRET"),
        ("HOOK", "https://h/x?client_secret=abc"),
        ("SIGNED", "https://s3/x?X-Amz-Signature=abc"),
        ("PLAIN", "u:pw@host"),
        ("DB_PASS", "x"),
        ("MYSQL_PWD", "x"),
        ("PGPASS", "x"),
        ("STRIPE_KEY", "x"),
        ("OPENAI_KEY", "x"),
        ("GH_PAT", "x"),
        ("SLACK", "xoxb-123"),
        ("GITHUB", "ghp_abc123"),
        ("AUTH_HEADER", "Bearer abc"),
        ("JWT", "x"),
        ("COOKIE", "x"),
        ("SESSION_ID", "x"),
        ("IDENTITY", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"),
    ],
)
def test_secret_names_and_values_never_reach_a_command(name, value):
    assert forbidden_variable(name, value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("PATH", "/usr/bin:/bin"), ("LANG", "C.UTF-8"), ("URL", "https://example.org/a?b=c")],
)
def test_ordinary_variables_pass(name, value):
    assert not forbidden_variable(name, value)


# -- the second round ---------------------------------------------------------------------


def test_a_neta_home_behind_a_symlink_in_the_workspace_is_refused(session, monkeypatch):
    # a command could point the link elsewhere and have the host use what it planted
    real = session.workspace.parent / "real-home"
    real.mkdir()
    (session.workspace / "nhlink").symlink_to(real)
    monkeypatch.setenv("NETA_HOME", str(session.workspace / "nhlink"))
    with pytest.raises(neta.ToolError, match="behind a symlink"):
        run(session, "ln -sfn decoy nhlink")
    assert (session.workspace / "nhlink").resolve() == real


def test_a_neta_home_not_made_yet_is_made_and_hidden(session, monkeypatch):
    neta_home = session.workspace / ".nh"
    monkeypatch.setenv("NETA_HOME", str(neta_home))
    run(session, "mkdir -p .nh && echo '{\"mcpServers\": {}}' > .nh/mcp.json; true")
    assert neta_home.is_dir()
    assert not (neta_home / "mcp.json").exists()  # written, if at all, in the sandbox only
    (neta_home / "neta.db").write_text(SECRET)
    result = run(session, "cat .nh/neta.db; true")
    assert SECRET not in result.content


def test_the_kernel_key_rings_cannot_be_reached(session):
    probe = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "r = libc.syscall(248, b'user', b'planted', b'v', 1, -3); "
        "print('ADDED' if r >= 0 else os.strerror(ctypes.get_errno()))"
    )
    result = run(session, f'python3 -c "{probe}"')
    assert "ADDED" not in result.content


def test_dev_and_the_small_hidden_folders_are_bounded(session):
    limits = neta.sandbox.SandboxLimits()
    result = run(session, "df -B1 --output=size /dev /run /var/tmp /dev/shm | tail -n +2")
    dev, *small = (int(size) for size in result.content.split("\n[exit")[0].split())
    assert dev <= 1024 * 1024
    assert all(size <= limits.small_tmpfs_size for size in small)


def test_sockets_of_other_families_are_refused(session):
    probe = (
        "import socket\n"
        "for family in (40, 17, 1):\n"
        "    try:\n"
        "        socket.socket(family, socket.SOCK_STREAM if family != 17 else socket.SOCK_RAW)\n"
        "        print('MADE', family)\n"
        "    except OSError as exc:\n"
        "        print('refused', family, exc.errno)\n"
    )
    result = run(session, f"python3 -c {shlex.quote(probe)}")
    assert "MADE" not in result.content


@pytest.fixture
def root_only_file():
    """A file only root may read under /usr/local/etc, scanned afresh; removed after."""
    if os.geteuid() != 0:
        pytest.skip("only root reads files others may not")
    from neta.sandbox import _layout

    folder = Path("/usr/local/etc")
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / f"neta-test-{secrets.token_hex(4)}.conf"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    _layout._unreadable_by_others.cache_clear()
    _layout._layout.cache_clear()
    yield secret
    secret.unlink(missing_ok=True)
    _layout._unreadable_by_others.cache_clear()
    _layout._layout.cache_clear()


def test_a_root_only_file_under_usr_local_is_hidden(session, root_only_file):
    result = run(session, f"cat {root_only_file}; true")
    assert SECRET not in result.content


def test_a_toolchains_configuration_stays_hidden(session, monkeypatch):
    home = session.workspace.parent / "home"
    node = home / ".nvm" / "versions" / "node" / "v20.0.0"
    (node / "bin").mkdir(parents=True)
    (node / "etc").mkdir()
    (node / "etc" / "npmrc").write_text(f"//registry/:_authToken={SECRET}\n")
    (node / "bin" / "node").write_text("#!/bin/sh\necho node\n")
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "config.toml").write_text(f'token = "{SECRET}"\n')
    monkeypatch.setenv("HOME", str(home))
    path = f"{node / 'bin'}{os.pathsep}{home / '.cargo' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    result = run(
        session,
        f"cat {node}/bin/node {node}/etc/npmrc {home}/.cargo/config.toml; true",
    )
    assert "echo node" in result.content  # the toolchain's programs are there
    assert SECRET not in result.content


def test_a_root_only_file_gone_since_the_scan_does_not_stop_commands(session, root_only_file):
    assert "[exit code 0]" in run(session, "true").content  # the scan saw it
    root_only_file.unlink()
    assert "[exit code 0]" in run(session, "true").content
