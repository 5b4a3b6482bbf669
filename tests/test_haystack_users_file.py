"""Users without a database: `buildwire haystack users FILE add|remove|list`, then
`haystack serve --users FILE`, with logins from our client and from phable.

Passwords reach the command from a file, an environment variable or standard input, never
from its arguments; the file holds salted SCRAM keys only.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import serve_haystack
from phable import AuthError, HaystackClient

from buildwire import haystack

SITE = 'ver:"3.0"\nid,dis,site\n@u-site,"Users Site",M\n'


def _users(cmd: list[str], path: Path, *args: str, **kw: object) -> subprocess.CompletedProcess:
    if "input" not in kw:
        kw["stdin"] = subprocess.DEVNULL  # never a terminal: no prompt in tests
    return subprocess.run(
        [*cmd, "haystack", "users", str(path), *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kw,  # type: ignore[arg-type]
    )


async def _about(url: str, user: str, password: str) -> str:
    async with haystack.Client.connect(url, user, password) as client:
        return (await client.about())["serverName"]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A one-site data file."""
    data = tmp_path / "site.zinc"
    data.write_text(SITE)
    return data


async def test_users_file_add_serve_login_remove(
    buildwire_cmd: list[str], tmp_path: Path, site: Path
) -> None:
    users = tmp_path / "users.txt"
    secret = tmp_path / "op.pw"
    secret.write_text("file-secret\n")
    added = _users(
        buildwire_cmd, users, "add", "op", "--role", "operator",
        "--password-file", str(secret), "--iterations", "4096",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "added op (operator)" in added.stderr
    env = {**os.environ, "VIEWER_PW": "env-secret"}
    added = _users(
        buildwire_cmd, users, "add", "ann", "--password-env", "VIEWER_PW", "--iterations", "4096",
        env=env,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    # Standard input that is not a terminal is read as the password.
    added = _users(buildwire_cmd, users, "add", "bot", "--role", "admin", input="stdin-secret\n")
    assert added.returncode == 0, added.stderr

    listed = _users(buildwire_cmd, users, "list", "--json")
    assert json.loads(listed.stdout) == {
        "users": [
            {"name": "op", "role": "operator"},
            {"name": "ann", "role": "viewer"},
            {"name": "bot", "role": "admin"},
        ]
    }
    text = users.read_text()
    assert "secret" not in text
    assert stat.S_IMODE(users.stat().st_mode) == 0o600

    with serve_haystack(buildwire_cmd, site, "--users", str(users)) as url:
        assert await _about(url, "op", "file-secret")
        assert await _about(url, "ann", "env-secret")
        assert await _about(url, "bot", "stdin-secret")
        for content_type in ("json", "zinc"):
            client = HaystackClient.open(url, "op", "file-secret", content_type=content_type)
            assert client.read_all("site").rows[0]["dis"] == "Users Site"
            client.close()
        with pytest.raises(PermissionError, match="403"):
            await _about(url, "op", "wrong")
        with pytest.raises(AuthError):
            HaystackClient.open(url, "ann", "wrong")

    # Replacing a user keeps one line; removing it refuses the login after a restart.
    secret.write_text("new-secret\n")
    replaced = _users(buildwire_cmd, users, "add", "op", "--password-file", str(secret))
    assert replaced.returncode == 0 and "replaced op (viewer)" in replaced.stderr
    removed = _users(buildwire_cmd, users, "remove", "ann")
    assert removed.returncode == 0, removed.stderr
    names = [
        u["name"]
        for u in json.loads(_users(buildwire_cmd, users, "list", "--json").stdout)["users"]
    ]
    assert names == ["op", "bot"]
    with serve_haystack(buildwire_cmd, site, "--users", str(users)) as url:
        assert await _about(url, "op", "new-secret")
        with pytest.raises(PermissionError, match="403"):
            await _about(url, "ann", "env-secret")
        with pytest.raises(PermissionError, match="403"):
            await _about(url, "op", "file-secret")


def test_users_file_mistakes_are_clear_errors(buildwire_cmd: list[str], tmp_path: Path) -> None:
    users = tmp_path / "users.txt"
    missing = _users(buildwire_cmd, users, "list")
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    no_name = _users(buildwire_cmd, users, "add", input="x\n")
    assert no_name.returncode == 1 and "give the user's name" in no_name.stderr
    empty = _users(buildwire_cmd, users, "add", "ann", input="\n")
    assert empty.returncode == 1 and "empty" in empty.stderr
    assert not users.exists()
    bad_role = _users(buildwire_cmd, users, "add", "ann", "--role", "root", input="pw\n")
    assert bad_role.returncode == 2 and "admin, operator or viewer" in bad_role.stderr
    unset = _users(buildwire_cmd, users, "add", "ann", "--password-env", "BUILDWIRE_NO_SUCH_VAR")
    assert unset.returncode == 1 and "BUILDWIRE_NO_SUCH_VAR is not set" in unset.stderr
    users.write_text("ann:viewer:4096:bad\n")
    corrupt = _users(buildwire_cmd, users, "remove", "ann")
    assert corrupt.returncode == 1 and "line 1" in corrupt.stderr
    assert users.read_text() == "ann:viewer:4096:bad\n", "an invalid file is never rewritten"
    users.unlink()
    _users(buildwire_cmd, users, "add", "ann", input="pw\n")
    absent = _users(buildwire_cmd, users, "remove", "bob")
    assert absent.returncode == 1 and "has no user bob" in absent.stderr


async def test_serve_takes_passwords_from_the_environment_and_files(
    buildwire_cmd: list[str], tmp_path: Path, site: Path
) -> None:
    secret = tmp_path / "admin.pw"
    secret.write_text("file-pw\n")
    env = {**os.environ, "OPERATOR_PW": "env-pw"}
    options = [
        "--user-env", "op:OPERATOR_PW:operator",
        "--user-secret-file", f"admin:{secret}:admin",
        "--iterations", "4096",
    ]  # fmt: skip
    with serve_haystack(buildwire_cmd, site, *options, env=env) as url:
        assert await _about(url, "op", "env-pw")
        assert await _about(url, "admin", "file-pw")
        with pytest.raises(PermissionError):
            await _about(url, "op", "file-pw")
    failed = subprocess.run(
        [*buildwire_cmd, "haystack", "serve", "--bind", "127.0.0.1:0",
         "--user-env", "op:BUILDWIRE_NO_SUCH_VAR:operator"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert failed.returncode == 1
    assert "BUILDWIRE_NO_SUCH_VAR is not set" in failed.stderr
