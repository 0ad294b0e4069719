"""The installers as files, in a throwaway home: install then remove gives back every byte, mode and symlink of
the user's files, whatever their shape; what memoryd does not understand or did not write is refused, naming the
file, with nothing changed; a failure half-way puts everything back; remove cleans up after an install that was
killed; hook commands are shell-safe; new files are private."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd_client import integrations
from memoryd_client.integrations import claude_code, codex, files, opencode
from memoryd_client.integrations.common import hook_command, is_hook_command
from memoryd_client.integrations.jsonc import Node, insert, parse, plain, remove

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GROUP = b'{"hooks": [{"type": "command", "command": "echo hi"}]}'
BLOCK_START = b"# >>> memoryd: written by `memctl integrations install codex`; removed by `... remove codex`"
EVENTS = ["UserPromptSubmit", "SessionStart", "PreCompact", "SessionEnd"]
CHATTR = shutil.which("chattr", path="/usr/bin:/bin:/usr/sbin:/sbin")
LAYOUTS = ["0600", "0640", "symlink"]  # a private file, a group-readable one, a link into a dotfiles folder


def memctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memoryd_client.memctl", *args], capture_output=True, text=True)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with no agent platform on PATH; memoryd's data dir beside it, outside what the tests compare."""
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "MEMORYD_CONFIG", "OPENCLAW_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "home").mkdir()
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORYD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return tmp_path / "home"


def state(home: Path) -> dict[str, tuple[object, ...]]:
    """Every file, folder and symlink under the home and its dotfiles folder: kind, mode, bytes or target."""
    found: dict[str, tuple[object, ...]] = {}
    for top in (home, home.parent / "dotfiles"):
        for folder, folders, names in os.walk(top):
            for name in folders + names:
                path = Path(folder) / name
                info = path.lstat()
                key = str(path.relative_to(home.parent))
                if stat.S_ISLNK(info.st_mode):
                    found[key] = ("link", os.readlink(path))
                elif stat.S_ISDIR(info.st_mode):
                    found[key] = ("folder", stat.S_IMODE(info.st_mode))
                else:
                    found[key] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def place(path: Path, content: bytes | None, layout: str = "0600") -> None:
    """A user's file as it is before any install: private, group-readable, or a link into a dotfiles folder."""
    if content is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    target = path
    if layout == "symlink":
        dotfiles = next(p for p in path.parents if p.name == "home").parent / "dotfiles"
        target = dotfiles / path.name
        dotfiles.mkdir(exist_ok=True)
        path.symlink_to(os.path.relpath(target, path.parent))
    target.write_bytes(content)
    target.chmod(0o640 if layout == "0640" else 0o600)


def nothing_installed(platform: str) -> None:
    assert integrations.installed(platform) is None


# Codex


HOOKS_SHAPES = {
    "absent": None,
    "empty object": b"{}\n",
    "empty table, no final newline": b'{"hooks": {}}',
    "another event, 4 spaces": b'{\n    "hooks": {\n        "Stop": [' + GROUP + b"]\n    }\n}\n",
    "the user's own group first, one line": b'{"hooks": {"UserPromptSubmit": [' + GROUP + b"]}}",
    "crlf and unicode": b'{\r\n  "hooks": {\r\n    "SessionEnd": [\r\n    ]\r\n  },\r\n  "n": "caf\xc3\xa9"\r\n}\r\n',
    "empty lists": b'{"hooks": {"UserPromptSubmit": [], "SessionStart": [ ]}, "other": 1}\n',
}
CONFIG_SHAPES = {
    "absent": None,
    "empty": b"",
    "a secret, no final newline": b'[mcp_servers.github]\ncommand = "gh"\nenv = { GITHUB_TOKEN = "ghp_secret" }',
    "crlf": b'model = "o3"\r\n\r\n[profiles.fast]\r\nmodel = "o4-mini"\r\n',
    "the header text in a comment": b'# [mcp_servers.memoryd] lives in another file\nmodel = "o3"\n',
}
DECLARED = {  # the user's own memoryd server, each a way TOML has to declare it
    "inline in [mcp_servers]": b'[mcp_servers]\nmemoryd = { command = "mine" }\n',
    "quoted key": b'[mcp_servers."memoryd"]\ncommand = "mine"\n',
    "dotted key": b'mcp_servers.memoryd.command = "mine"\n',
    "spaced header": b'[ mcp_servers.memoryd ]\ncommand = "mine"\n',
}


def codex_files(home: Path) -> tuple[Path, Path]:
    return home / ".codex" / "hooks.json", home / ".codex" / "config.toml"


def check_codex_installed(home: Path, declared: bool = False) -> None:
    hooks_path, config_path = codex_files(home)
    hooks = json.loads(hooks_path.read_text(encoding="utf-8"))["hooks"]
    for event in EVENTS:
        commands = [h["command"] for group in hooks[event] for h in group["hooks"]]
        assert sum(" hook codex " in c for c in commands) == 1, (event, commands)
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    server = config["mcp_servers"]["memoryd"]
    assert server == {"command": "mine"} if declared else server["args"] == ["mcp", "--autostart"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("hooks", "config"),
    [(h, b"") for h in HOOKS_SHAPES.values()] + [(b"{}", c) for c in [*CONFIG_SHAPES.values(), *DECLARED.values()]],
    ids=[f"hooks.json {n}" for n in HOOKS_SHAPES] + [f"config.toml {n}" for n in [*CONFIG_SHAPES, *DECLARED]],
)
def test_codex_install_then_remove_gives_back_every_byte_mode_and_link(
    home: Path, hooks: bytes | None, config: bytes | None, layout: str
) -> None:
    hooks_path, config_path = codex_files(home)
    (home / ".codex").mkdir()
    place(hooks_path, hooks, layout)
    place(config_path, config, layout)
    before = state(home)
    integrations.install("codex")
    check_codex_installed(home, declared=config in DECLARED.values())
    for path, content in ((hooks_path, hooks), (config_path, config)):
        assert path.is_symlink() == (layout == "symlink" and content is not None)
        expected = 0o600 if content is None or layout != "0640" else 0o640
        assert stat.S_IMODE(path.stat().st_mode) == expected
    once = state(home)
    integrations.install("codex")
    assert state(home) == once
    integrations.remove("codex")
    assert state(home) == before
    nothing_installed("codex")


def test_codex_trust_entries_the_user_has_are_not_declared_twice(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_path = codex_files(home)[1]
    place(config_path, b'[hooks.state."hooks.json:user_prompt_submit:0:0"]\ntrusted_hash = "sha256:mine"\n')
    trusted = {"hooks.json:user_prompt_submit:0:0": "sha256:new", "hooks.json:session_start:0:0": "sha256:b"}
    monkeypatch.setattr(codex, "codex_trust", lambda home: (trusted, ""))
    before = state(home)
    integrations.install("codex")
    state_table = tomllib.loads(config_path.read_text())["hooks"]["state"]
    assert state_table == {
        "hooks.json:user_prompt_submit:0:0": {"trusted_hash": "sha256:mine"},
        "hooks.json:session_start:0:0": {"trusted_hash": "sha256:b"},
    }
    integrations.remove("codex")
    assert state(home) == before


BAD_HOOKS = {
    "an object for an event": (b'{"hooks": {"UserPromptSubmit": {"hooks": []}}}', "hooks.UserPromptSubmit"),
    "a string for an event": (b'{"hooks": {"SessionStart": "echo hi"}}', "hooks.SessionStart"),
    "a number for an event": (b'{"hooks": {"PreCompact": 1}}', "hooks.PreCompact"),
    "null for an event": (b'{"hooks": {"SessionEnd": null}}', "hooks.SessionEnd"),
    "a list for the table": (b'{"hooks": []}', "hooks"),
    "a list at the top": (b"[]", "the top level"),
    "a string for a group": (b'{"hooks": {"UserPromptSubmit": ["echo hi"]}}', "hooks.UserPromptSubmit[0]"),
    "a string for handlers": (b'{"hooks": {"SessionEnd": [{"hooks": "echo"}]}}', "hooks.SessionEnd[0].hooks"),
    "the table twice": (b'{"hooks": {}, "hooks": {}}', "hooks is there twice"),
    "not JSON": (b'{"hooks": ', "is not valid JSON"),
    "comments": (b'{"hooks": {} // mine\n}', "is not valid JSON"),
    "not UTF-8": (b'{"x": "\xff"}', "is not UTF-8"),
}
BAD_CONFIGS = {
    "not TOML": (b"model = \n", "is not valid TOML"),
    "not UTF-8": (b'model = "\xff"\n', "is not UTF-8"),
    "an inline server table": (b'mcp_servers = { other = { command = "x" } }\n', "MCP server cannot be added"),
    "a block with no end": (BLOCK_START + b'\n[mcp_servers.memoryd]\ncommand = "x"\n', "no '# <<<"),
}


@pytest.mark.parametrize(
    ("hooks", "config", "named"),
    [(h, b"", (n, k)) for n, (h, k) in BAD_HOOKS.items()] + [(b"{}", c, (n, k)) for n, (c, k) in BAD_CONFIGS.items()],
    ids=[f"hooks.json {n}" for n in BAD_HOOKS] + [f"config.toml {n}" for n in BAD_CONFIGS],
)
def test_codex_refuses_what_it_does_not_understand_naming_file_and_key(
    home: Path, hooks: bytes, config: bytes, named: tuple[str, str]
) -> None:
    hooks_path, config_path = codex_files(home)
    place(hooks_path, hooks)
    place(config_path, config)
    before = state(home)
    with pytest.raises(ValueError) as refused:
        integrations.install("codex")
    bad = hooks_path if config == b"" else config_path
    assert str(bad) in str(refused.value) and named[1] in str(refused.value)
    assert state(home) == before
    nothing_installed("codex")


# OpenCode


OPENCODE_SHAPES = {
    "absent": ("opencode.json", None),
    "empty object": ("opencode.json", b"{}"),
    "a provider": ("opencode.json", b'{\n  "model": "fake/m1",\n  "provider": {"fake": {"name": "Fake"}}\n}\n'),
    "comments and trailing commas": (
        "opencode.json",
        b'{\n  // my servers\n  "mcp": {\n    "other": {"type": "local", "command": ["x"]}, /* on */\n  },\n}\n',
    ),
    "jsonc": ("opencode.jsonc", b'/* mine */ {\n\t"theme": "dark", // dark\n\t"mcp": {}\n}'),
    "the user's own memoryd": ("opencode.json", b'{"mcp": {"memoryd": {"type": "remote", "url": "http://x"}}}\n'),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("name", "content"), OPENCODE_SHAPES.values(), ids=list(OPENCODE_SHAPES))
def test_opencode_install_then_remove_gives_back_every_byte_mode_and_link(
    home: Path, name: str, content: bytes | None, layout: str
) -> None:
    folder = home / ".config" / "opencode"
    config = folder / name
    place(config, content, layout)
    place(folder / "plugin" / "other.js", b"export const Other = async () => ({})\n")
    before = state(home)
    marker = integrations.install("opencode")
    settings = json.loads(_without_comments(config.read_text()))
    if b"remote" in (content or b""):
        assert settings["mcp"]["memoryd"] == {"type": "remote", "url": "http://x"} and marker["notes"]
    else:
        assert settings["mcp"]["memoryd"]["command"][1:] == ["mcp", "--autostart"]
    assert config.is_symlink() == (layout == "symlink" and content is not None)
    plugin = folder / "plugin" / "memoryd.js"
    assert stat.S_IMODE(plugin.stat().st_mode) == 0o600
    once = state(home)
    integrations.install("opencode")
    assert state(home) == once
    integrations.remove("opencode")
    assert state(home) == before
    nothing_installed("opencode")


def _without_comments(text: str) -> str:
    return json.dumps(plain(parse(text, comments=True)))


BAD_OPENCODE = {
    "a list for mcp": (b'{"mcp": []}', "mcp is a list"),
    "a list at the top": (b"[]", "the top level"),
    "not JSON": (b'{"mcp": {"a": 1,,}}', "is not valid JSONC"),
    "a comment that does not end": (b"{} /* x", "is not valid JSONC"),
    "not UTF-8": (b'{"x": "\xfe"}', "is not UTF-8"),
}


@pytest.mark.parametrize(("content", "named"), BAD_OPENCODE.values(), ids=list(BAD_OPENCODE))
def test_opencode_refuses_what_it_does_not_understand_and_leaves_no_plugin(
    home: Path, content: bytes, named: str
) -> None:
    config = home / ".config" / "opencode" / "opencode.json"
    place(config, content)
    before = state(home)
    with pytest.raises(ValueError) as refused:
        integrations.install("opencode")
    assert str(config) in str(refused.value) and named in str(refused.value)
    assert state(home) == before  # in particular no plugin/memoryd.js, which OpenCode would load
    nothing_installed("opencode")


def test_opencode_refuses_a_plugin_file_it_did_not_write(home: Path) -> None:
    plugin = home / ".config" / "opencode" / "plugin" / "memoryd.js"
    place(plugin, b"// mine\n")
    before = state(home)
    with pytest.raises(ValueError, match="memoryd did not write it"):
        integrations.install("opencode")
    assert state(home) == before


# Claude Code


def skills(home: Path) -> Path:
    return home / ".claude" / "skills"


CLAUDE_SHAPES = {
    "no ~/.claude": {},
    "settings only": {".claude/settings.json": b'{"theme": "dark"}\n'},
    "another skill": {".claude/skills/other/SKILL.md": b"---\nname: other\n---\n"},
    "an empty memoryd folder": {".claude/skills/memoryd/": b""},
    "unrelated files in the folder": {".claude/skills/memoryd/notes.txt": b"mine\n"},
}


@pytest.mark.parametrize("shape", CLAUDE_SHAPES.values(), ids=list(CLAUDE_SHAPES))
def test_claude_code_install_then_remove_gives_back_the_skills_folder(home: Path, shape: dict[str, bytes]) -> None:
    for relative, content in shape.items():
        if relative.endswith("/"):
            (home / relative).mkdir(parents=True)
        else:
            place(home / relative, content)
    before = state(home)
    marker = integrations.install("claude-code")
    root = skills(home) / "memoryd"
    assert json.loads((root / ".claude-plugin" / "plugin.json").read_text())["name"] == "memoryd"
    assert all(stat.S_IMODE(Path(p).stat().st_mode) == 0o600 for p in marker["files"])
    once = state(home)
    integrations.install("claude-code")
    assert state(home) == once
    integrations.remove("claude-code")
    assert state(home) == before
    nothing_installed("claude-code")


def test_claude_code_refuses_to_overwrite_a_users_skill(home: Path) -> None:
    place(skills(home) / "memoryd" / "SKILL.md", b"---\nname: memoryd\n---\nmy own skill\n")
    place(skills(home) / "memoryd" / "helper.py", b"print('mine')\n")
    before = state(home)
    with pytest.raises(ValueError) as refused:
        integrations.install("claude-code")
    assert str(skills(home) / "memoryd" / "SKILL.md") in str(refused.value)
    assert state(home) == before
    nothing_installed("claude-code")


@pytest.mark.parametrize("linked", ["memoryd", "memoryd/hooks", "memoryd/README.md"])
def test_claude_code_refuses_a_symlinked_plugin_folder_or_file(home: Path, linked: str) -> None:
    dotfiles = home.parent / "dotfiles"
    (dotfiles / "hooks").mkdir(parents=True)
    (dotfiles / "README.md").write_text("mine\n")
    if linked != "memoryd":
        (skills(home) / "memoryd").mkdir(parents=True)
    skills(home).mkdir(parents=True, exist_ok=True)
    (skills(home) / linked).symlink_to(dotfiles / Path(linked).name if linked != "memoryd" else dotfiles)
    before = state(home)
    with pytest.raises(ValueError) as refused:
        integrations.install("claude-code")
    assert str(skills(home) / linked) in str(refused.value) and "symbolic link" in str(refused.value)
    assert state(home) == before
    assert integrations.remove("claude-code") == []


def test_claude_code_remove_leaves_what_the_user_changed_or_added_and_says_so(home: Path) -> None:
    integrations.install("claude-code")
    root = skills(home) / "memoryd"
    (root / "SKILL.md").write_text("my edits\n")
    (root / "hooks" / "extra.json").write_text("{}\n")
    removed = integrations.remove("claude-code")
    assert any(str(root / "SKILL.md") in line and "changed" in line for line in removed)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == ["SKILL.md", "hooks", "hooks/extra.json"]
    assert (root / "SKILL.md").read_text() == "my edits\n"
    nothing_installed("claude-code")


def test_claude_code_remove_does_not_crash_on_a_folder_made_a_symlink_since(home: Path) -> None:
    integrations.install("claude-code")
    root = skills(home) / "memoryd"
    elsewhere = home.parent / "dotfiles" / "memoryd"
    shutil.move(root, elsewhere)
    (elsewhere / "SKILL.md").write_text("mine now\n")
    root.symlink_to(elsewhere)
    integrations.remove("claude-code")
    assert root.is_symlink() and (elsewhere / "SKILL.md").read_text() == "mine now\n"
    nothing_installed("claude-code")


# Shell safety and modes


def recording_memctl(tmp_path: Path) -> tuple[str, Path]:
    """A memctl at a path a shell would split and run parts of, which records the arguments it gets."""
    folder = tmp_path / "it's; touch PWNED $(touch PWNED2)"
    folder.mkdir()
    record = tmp_path / "args.json"
    script = folder / "memctl"
    script.write_text(f"#!{sys.executable}\nimport json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv))\n")
    script.chmod(0o755)
    return str(script), record


@pytest.mark.parametrize("platform", ["claude-code", "codex"])
def test_hook_commands_are_shell_safe(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    memctl_path, record = recording_memctl(tmp_path)
    monkeypatch.setattr(claude_code, "memctl_command", lambda: memctl_path)
    monkeypatch.setattr(codex, "memctl_command", lambda: memctl_path)
    integrations.install(platform, agent="main.2")
    if platform == "codex":
        hooks = json.loads(codex_files(home)[0].read_text())["hooks"]
    else:
        hooks = json.loads((skills(home) / "memoryd" / "hooks" / "hooks.json").read_text())["hooks"]
    for event in EVENTS:
        command = next(h["command"] for g in hooks[event] for h in g["hooks"])
        subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, check=True, timeout=30)
        args = json.loads(record.read_text())
        assert args[0] == memctl_path and args[1:3] == ["hook", platform] and args[4:] == ["--agent", "main.2"]
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()


@pytest.mark.parametrize("platform", ["claude-code", "codex", "opencode"])
def test_an_agent_id_outside_the_configs_rule_is_refused(home: Path, platform: str) -> None:
    ran = memctl("integrations", "install", platform, "--agent", "x'; touch /tmp/pwned; echo '")
    assert ran.returncode != 0 and "agent id" in ran.stderr, ran.stderr
    assert state(home) == {}
    nothing_installed(platform)


@pytest.mark.parametrize("platform", ["claude-code", "codex", "opencode"])
def test_what_install_creates_is_private(home: Path, tmp_path: Path, platform: str) -> None:
    umask = os.umask(0o022)
    try:
        integrations.install(platform)
    finally:
        os.umask(umask)
    for kind, mode, *_ in state(home).values():
        assert mode == (0o700 if kind == "folder" else 0o600)
    if platform == "opencode":
        transcripts = tmp_path / "data" / "transcripts" / "opencode"
        assert stat.S_IMODE(transcripts.stat().st_mode) == 0o700


# Failures half-way


@pytest.mark.parametrize("platform", ["claude-code", "codex", "opencode"])
def test_a_write_that_fails_half_way_puts_everything_back(
    home: Path, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    """As with an immutable file (chattr +i): the rename over it fails after the files before it were written."""
    hooks_path, config_path = codex_files(home)
    place(hooks_path, b'{"hooks": {}}\n')
    place(config_path, b'model = "o3"\n')
    place(home / ".config" / "opencode" / "opencode.json", b"{}\n")
    before = state(home)
    failing = {"claude-code": "README.md", "codex": "config.toml", "opencode": "opencode.json"}[platform]
    real = os.replace

    def immutable(source: str, target: str) -> None:
        if os.path.basename(target) == failing:
            raise PermissionError(1, "Operation not permitted")
        real(source, target)

    monkeypatch.setattr(files.os, "replace", immutable)
    with pytest.raises(ValueError) as failed:
        integrations.install(platform)
    assert failing in str(failed.value) and "nothing was changed" in str(failed.value)
    assert state(home) == before  # no partial file left either
    nothing_installed(platform)


@pytest.mark.skipif(CHATTR is None, reason="needs chattr")
def test_an_immutable_config_changes_nothing(home: Path) -> None:
    hooks_path, config_path = codex_files(home)
    place(config_path, b'model = "o3"\n')
    before = state(home)
    if subprocess.run([str(CHATTR), "+i", str(config_path)], capture_output=True).returncode != 0:
        pytest.skip("this file system (or user) cannot make a file immutable")
    try:
        with pytest.raises(ValueError, match=f"{config_path}: cannot write it"):
            integrations.install("codex")
        assert state(home) == before and not hooks_path.exists()
    finally:
        subprocess.run([str(CHATTR), "-i", str(config_path)], check=True)
    nothing_installed("codex")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_an_edited_file_keeps_its_owner(home: Path) -> None:
    config_path = codex_files(home)[1]
    place(config_path, b'model = "o3"\n', "symlink")
    os.chown(config_path, 4321, 4321)
    integrations.install("codex")
    assert (config_path.stat().st_uid, config_path.stat().st_gid) == (4321, 4321)
    integrations.remove("codex")
    assert (config_path.stat().st_uid, config_path.stat().st_gid) == (4321, 4321)


KILLED = """
import os, sys
from memoryd_client import integrations

real, calls = os.replace, []

def dies(source, target):
    calls.append(target)
    if len(calls) == int(sys.argv[2]):
        os._exit(9)
    real(source, target)

os.replace = dies
integrations.install(sys.argv[1])
"""


@pytest.mark.parametrize("platform", ["claude-code", "codex", "opencode"])
@pytest.mark.parametrize("dies_at", [2, 3, 4])
def test_remove_cleans_up_after_an_install_that_was_killed(home: Path, platform: str, dies_at: int) -> None:
    """Killed as it renames its nth file into place: remove takes out what it had written."""
    place(codex_files(home)[0], b'{\n  "hooks": {\n    "Stop": []\n  }\n}\n')
    place(codex_files(home)[1], b'[profiles.x]\nmodel = "o3"')
    place(home / ".config" / "opencode" / "opencode.json", b'{"theme": "dark"}\n')
    before = state(home)
    killed = subprocess.run([sys.executable, "-c", KILLED, platform, str(dies_at)], capture_output=True, timeout=60)
    assert killed.returncode == 9, killed.stderr
    assert integrations.installed(platform)["state"] == "installing"  # type: ignore[index]
    integrations.remove(platform)
    assert state(home) == before
    nothing_installed(platform)


def test_a_remove_that_cannot_read_a_file_says_which_and_changes_nothing(home: Path) -> None:
    integrations.install("codex")
    hooks_path = codex_files(home)[0]
    hooks_path.write_text(hooks_path.read_text() + "oops")
    before = state(home)
    ran = memctl("integrations", "remove", "codex")
    assert ran.returncode == 1 and f"Error: {hooks_path} is not valid JSON" in ran.stderr, ran.stderr
    assert state(home) == before and integrations.installed("codex")


# The OpenCode plugin's own files


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_opencode_plugin_writes_transcripts_private(tmp_path: Path) -> None:
    transcripts = tmp_path / "data" / "transcripts" / "opencode"
    module = tmp_path / "memoryd.mjs"
    module.write_text(opencode.plugin_source("/bin/true", None, str(transcripts)))
    script = f"""
    import {{ Memoryd }} from {json.dumps(module.as_uri())}
    const message = {{ info: {{ role: "user", time: {{ created: 1 }} }}, parts: [{{ type: "text", text: "hello" }}] }}
    const client = {{ session: {{ messages: async () => ({{ data: [message] }}) }} }}
    const hooks = await Memoryd({{ client }})
    for (const sessionID of ["ses_1", "../../escaped"]) {{
      await hooks.event({{ event: {{ type: "session.idle", properties: {{ sessionID }} }} }})
    }}
    """
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    for folder in (transcripts, transcripts.parent, transcripts.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [p.name for p in transcripts.iterdir()] == ["ses_1.jsonl"]
    assert stat.S_IMODE((transcripts / "ses_1.jsonl").stat().st_mode) == 0o600
    assert not (tmp_path / "escaped.jsonl").exists()


def test_the_hook_command_quotes_like_a_shell() -> None:
    command = hook_command("/a b/it's/memctl", "codex", "session-end", "main")
    assert shlex.split(command) == ["/a b/it's/memctl", "hook", "codex", "session-end", "--agent", "main"]
    assert is_hook_command(command, "codex") and not is_hook_command(command, "claude-code")


# Editing JSON as text


SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text('ab"é\\', max_size=3)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("kx", max_size=2), inner, max_size=3)
)


@settings(max_examples=300, deadline=None)
@given(
    document=st.dictionaries(st.text("abc", max_size=3), VALUES, max_size=4),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    added=VALUES,
    pick=st.integers(0, 50),
)
def test_an_entry_added_to_any_json_comes_out_leaving_every_byte(
    document: dict[str, object], indent: int | str | None, newline: str, added: object, pick: int
) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=False).replace("\n", newline) + newline
    containers = [n for n in _nodes(parse(text)) if n.children is not None]
    container = containers[pick % len(containers)]
    grown = insert(text, container, added, "memoryd" if container.is_object else None)
    again = next(n for n in _nodes(parse(grown)) if n.start == container.start)
    assert plain(again.children[-1].node) == added  # type: ignore[index]
    assert remove(grown, again, len(again.children) - 1) == text  # type: ignore[arg-type]


def _nodes(node: Node) -> list[Node]:
    return [node, *(n for child in node.children or [] for n in _nodes(child.node))]
