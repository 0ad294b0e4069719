"""Secret redaction by the rule set in memoryd.sources.secret_rules: what it masks, what it leaves, and that a secret
never reaches the index or an answer."""

from __future__ import annotations

import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.memory import AgentMemory
from memoryd.sources.redact import DEFAULT, MASK, Redactor

REPRO = "Staging env: DB_PASSWORD=Tr0ub4dor-staging-99 and SECRET_KEY=django-insecure-q8w7e6r5t4"

# The finding: environment-style keys whose values went through (text, the secret in it).
FINDINGS = [
    ("DB_PASSWORD=Tr0ub4dor-staging-99", "Tr0ub4dor-staging-99"),
    ("POSTGRES_PASSWORD: pg-S3cret-2024", "pg-S3cret-2024"),
    ("MYSQL_ROOT_PASSWORD=r00t-Pa55word", "r00t-Pa55word"),
    ("SECRET_KEY=django-insecure-q8w7e6r5t4", "django-insecure-q8w7e6r5t4"),
    ("AZURE_CLIENT_SECRET=5fK8w~Jq2.pL9xR4-tZ7vB1nM3cD6", "5fK8w~Jq2.pL9xR4-tZ7vB1nM3cD6"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQ9Wb3Tq", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQ9Wb3Tq"),
    ("GITHUB_TOKEN=v1.2f9c8e7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e", "v1.2f9c8e7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e"),
    ("OPENAI_API_KEY=org-Zk3mW9pQx7Lr2", "org-Zk3mW9pQx7Lr2"),
    ("token = 8f7d6e5c4b3a2f1e", "8f7d6e5c4b3a2f1e"),
    ("passphrase: 'correct horse battery staple'", "correct horse battery staple"),
    ("//registry.npmjs.org/:_authToken=3f1e2d4c-5b6a-7980-a1b2-c3d4e5f60718", "3f1e2d4c-5b6a-7980-a1b2-c3d4e5f60718"),
    (
        "alerts go to https://hooks.slack.com/services/T024BE7LD/B01234567/abcdEFGHijklMNOPqrstUVWX today",
        "T024BE7LD/B01234567/abcdEFGHijklMNOPqrstUVWX",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==;"
        "EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==",
    ),
    ("the groq key is gsk_4PqR8sT2vW6xY0zA3bC7dE1fG5hJ9kL", "gsk_4PqR8sT2vW6xY0zA3bC7dE1fG5hJ9kL"),
]


@pytest.mark.parametrize(("text", "secret"), FINDINGS, ids=[t.split("=")[0].split(":")[0][:24] for t, _ in FINDINGS])
def test_each_key_of_the_finding_is_masked_and_its_label_kept(text: str, secret: str) -> None:
    assert DEFAULT(text) == text.replace(secret, MASK)


def test_the_reproduction_is_masked() -> None:
    assert DEFAULT(REPRO) == "Staging env: DB_PASSWORD=[REDACTED] and SECRET_KEY=[REDACTED]"


CONVENTIONS = [
    ("DB_PASSWORD=Hq7-vZ2p", "Hq7-vZ2p"),
    ("db_password=Hq7-vZ2p", "Hq7-vZ2p"),
    ("dbPassword: Hq7-vZ2p", "Hq7-vZ2p"),
    ("DbPassword = 'Hq7-vZ2p'", "Hq7-vZ2p"),
    ("db-password: Hq7-vZ2p", "Hq7-vZ2p"),
    ("spring.datasource.password=Hq7-vZ2p", "Hq7-vZ2p"),
    ("X_API_KEY=Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("MY_SERVICE_TOKEN=Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("client_secret: Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("private_key = 'Hq7vZ2pW9s'", "Hq7vZ2pW9s"),
    ("credentials: Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("NPM_AUTH=aGVsbG86d29ybGQ=", "aGVsbG86d29ybGQ="),
    ("PGPASSWORD=Hq7vZ2pW9s psql -h db", "Hq7vZ2pW9s"),
    ("SharedAccessKey=Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4"),
    ("POSTGRES_PASSWORD=postgres", "postgres"),  # a plain word, written as configuration
    ("password: sunflower", "sunflower"),
]
FORMS = [
    ('"password": "Hq7 vZ2p W9s",', "Hq7 vZ2p W9s"),
    ("'password' => 'Hq7vZ2pW9s'", "Hq7vZ2pW9s"),
    ("api_key => Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("password := Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ('password = "Hq7 vZ2p W9s"', "Hq7 vZ2p W9s"),
    ("export DB_PASSWORD='hello brave world'", "hello brave world"),
    ('export DB_PASSWORD="Hq7vZ2pW9s"', "Hq7vZ2pW9s"),
    ("DB_PASSWORD='Hq7vZ2pW9s'", "Hq7vZ2pW9s"),
    ("  db_password: 'Hq7vZ2pW9s'", "Hq7vZ2pW9s"),
    ('$env:API_TOKEN = "Hq7vZ2pW9s"', "Hq7vZ2pW9s"),
    ("ENV SECRET_KEY=Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("      - DB_PASSWORD=Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ('conn = connect(host="db", password="Hq7vZ2pW9s")', "Hq7vZ2pW9s"),
    ("<password>Hq7vZ2pW9s</password>", "Hq7vZ2pW9s"),
    ("mysql --password Hq7vZ2pW9s -h db", "Hq7vZ2pW9s"),
    ("docker login --password=Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("machine api.example.com login me password Hq7vZ2pW9s", "Hq7vZ2pW9s"),
    ("curl -u admin:Hq7vZ2pW9s https://api.example.com", "Hq7vZ2pW9s"),
]
CONNECTIONS = [
    ("postgres://app:Hq7vZ2pW9s@db.internal:5432/app", "Hq7vZ2pW9s"),
    ("mongodb+srv://svc:Hq7vZ2pW9s@cluster0.ab1cd.mongodb.net/test", "Hq7vZ2pW9s"),
    ("REDIS_URL=redis://:Hq7vZ2pW9s@cache:6379/0", "Hq7vZ2pW9s"),
    ("jdbc:postgresql://db:5432/app?user=app&password=Hq7vZ2pW9s&ssl=true", "Hq7vZ2pW9s"),
    ("jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=Hq7vZ2pW9s;encrypt=true", "Hq7vZ2pW9s"),
    ("Server=tcp:db,1433;Initial Catalog=app;User ID=sa;Password=Hq7vZ2pW9s;Encrypt=True;", "Hq7vZ2pW9s"),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zm9vYmFy+YmF6/cXV4=", None),
    ("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=abc%2Bdef123456%3D", "abc%2Bdef123456%3D"),
]
PEM_ESCAPED = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"
CLOUD = [
    ("aws_access_key_id = AKIAIOSFODNN7WXYZ2QA", "AKIAIOSFODNN7WXYZ2QA"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQ9Wb3Tq", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQ9Wb3Tq"),
    ('  "private_key_id": "3f1e2d4c5b6a79801a2b3c4d5e6f708192a3b4c5",', "3f1e2d4c5b6a79801a2b3c4d5e6f708192a3b4c5"),
    ('  "private_key": "' + PEM_ESCAPED + '",', PEM_ESCAPED),
    ("app registration secret: 5fK8Q~Jq2.pL9xR4-tZ7vB1nM3cD6wE0yA8uI", "5fK8Q~Jq2.pL9xR4-tZ7vB1nM3cD6wE0yA8uI"),
]
TOKENS = [
    "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "gho_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "ghs_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "github_pat_11ABCDEFG0abcdefghijkl_" + "a1B2c3D4e5" * 6,
    "glpat-a1B2c3D4e5F6g7H8i9J0",
    "xoxb-123456789012-1234567890123-a1B2c3D4e5F6g7H8i9J0k1L2",
    "sk_live_a1B2c3D4e5F6g7H8i9J0k1L2",
    "SK0123456789abcdef0123456789abcdef",
    "SG.a1B2c3D4e5F6g7H8i9J0k1.a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X",
    "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "pypi-AgEIcHlwaS5vcmc" + "a1B2c3D4e5" * 6,
    "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",
    "sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6",
    "sk-ant-api03-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6",
    "hf_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_",
    "key-0123456789abcdef0123456789abcdef",
    "https://discord.com/api/webhooks/123456789012345678/a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0",
]
HEADERS = [
    ("Authorization: Basic dXNlcjpIcTd2WjJwVzlz", "dXNlcjpIcTd2WjJwVzlz"),
    ('curl -H "Authorization: Bearer a1B2c3D4e5F6g7H8i9J0k1L2"', "a1B2c3D4e5F6g7H8i9J0k1L2"),
    ("Proxy-Authorization: Basic dXNlcjpIcTd2WjJwVzlz", "dXNlcjpIcTd2WjJwVzlz"),
    ("X-Api-Key: a1B2c3D4e5F6g7H8", "a1B2c3D4e5F6g7H8"),
]


# The second finding: secrets in Markdown formatting, on command lines and in cookies went through.
MARKDOWN = [
    ("**Password**: Wint3rIsC0ming9", "Wint3rIsC0ming9"),
    ("**password:** Tr0ub4dor3xyz", "Tr0ub4dor3xyz"),
    ("password: `Tr0ub4dor3xyz`", "Tr0ub4dor3xyz"),
    ("- `DB_PASSWORD`: `Tr0ub4dor3xyz`", "Tr0ub4dor3xyz"),
    ("API key: `8f7a9c2e4b1d6a3f5e8c7b2a1`", "8f7a9c2e4b1d6a3f5e8c7b2a1"),
    ("| prod db | password | Tr0ub4dor3xyz |", "Tr0ub4dor3xyz"),
    ("| host | user | password |\n|---|---|---|\n| db1 | app | Tr0ub4dor3xyz |", "Tr0ub4dor3xyz"),
    ("| user | API key |\n|:--|--:|\n| bob | `8f7a9c2e4b1d6a3f5e8c7b2a1` |", "8f7a9c2e4b1d6a3f5e8c7b2a1"),
    ("*Token*: abc123def456ghi", "abc123def456ghi"),
    ("password: **Tr0ub4dor3xyz**", "Tr0ub4dor3xyz"),
    ("### Password\nTr0ub4dor3xyz", "Tr0ub4dor3xyz"),
    ("## API key\n\n8f7a9c2e4b1d6a3f5e8c7b2a1\n\nRotate it monthly.", "8f7a9c2e4b1d6a3f5e8c7b2a1"),
]
COMMANDS = [
    ("mysql -u root -pS3cr3tPass", "S3cr3tPass"),
    ("sshpass -p 'S3cr3tPass' ssh host", "S3cr3tPass"),
    ("docker login -u me -p S3cr3tPass", "S3cr3tPass"),
    ("openssl enc -k S3cr3tPass", "S3cr3tPass"),
    ("htpasswd -b file user S3cr3tPass", "S3cr3tPass"),
    ("htpasswd -nbB admin S3cr3tPass", "S3cr3tPass"),
    ("redis-cli -h cache -a S3cr3tPass ping", "S3cr3tPass"),
    ("curl -u admin:Violet97@sparrow https://api.example.com", "Violet97@sparrow"),
    ("Cookie: session=abc123def456ghi789", "abc123def456ghi789"),
    ("Set-Cookie: sid=abc123def456ghi789; Path=/; HttpOnly", "abc123def456ghi789"),
    ("curl -H 'Cookie: theme=dark; JSESSIONID=abc123def456ghi789' https://app", "abc123def456ghi789"),
]
# Forms of the finding that the rule set already masked, kept so that they stay masked.
ALREADY = [
    ("mysql --password=S3cr3t", "S3cr3t"),
    ("curl -u user:S3cr3tPass", "S3cr3tPass"),
    ("__password__: Tr0ub4dor3xyz", "Tr0ub4dor3xyz"),
]


@pytest.mark.parametrize(("text", "secret"), MARKDOWN + COMMANDS + ALREADY, ids=lambda v: v[:28])
def test_secrets_in_markdown_on_command_lines_and_in_cookies_are_masked(text: str, secret: str) -> None:
    assert DEFAULT(text) == text.replace(secret, MASK)


@pytest.mark.parametrize(
    "table", [CONVENTIONS, FORMS, CONNECTIONS, CLOUD, HEADERS], ids=["conventions", "forms", "urls", "cloud", "headers"]
)
def test_secrets_in_every_convention_and_form_are_masked(table: list[tuple[str, str | None]]) -> None:
    for text, secret in table:
        out = DEFAULT(text)
        if secret is None:
            assert out.endswith(f"={MASK}"), text
        else:
            assert out == text.replace(secret, MASK), text


def test_tokens_with_a_known_prefix_are_masked_wherever_they_stand() -> None:
    for token in TOKENS:
        for text in (token, f"my key is {token} for the deploy job", f'client = Client("{token}")'):
            out = DEFAULT(text)
            assert token not in out and token.split("/webhooks/")[-1] not in out and MASK in out, text


ORDINARY = [
    "the password field must be at least 12 characters",
    "token = the next word",
    "secret: we never told anyone",
    "password: see 1Password",
    "token: <your-token>",
    "DB_PASSWORD=${DB_PASSWORD}",
    "SECRET=$SECRET",
    "password: xxx",
    "password: changeme",
    "password: ****",
    'password = request.form["password"]',
    "token = get_token()",
    "api_key=self._key or 'unused', timeout=self.timeout",
    'return {"x-goog-api-key": self._key}',
    "secret = bool(value.strip()) and not stand_in(value)",
    "store = 'postgresql://deploy@db/team'   # password: PGPASSWORD, ~/.pgpass or ${VAR}",
    "password: str",
    "auth_token: Optional[str] = None",
    "self.password = password",
    "PASSWORD_FILE=/run/secrets/db_password",
    "token_url=https://example.com/oauth/token",
    "max_tokens: 4096",
    '"token-types": "^6.1.1",',
    "Author: Jane Doe",
    "the author: Jane Doe, with a passport: pending",
    "postgres://user:password@localhost/db",
    "export DB_PASSWORD=$(cat /run/secrets/db)",
    "password: {{ .Values.password }}",
    "Bearer bonds were common",
    "-----BEGIN RSA PRIVATE KEY-----",
    "git push -u origin main",
    # a sentence of a script written without spaces runs to the line's end: its words are no credential
    "- 11:59 auth: migrateระบบแคชจากMemcachedไปRedisเสร็จแล้ว",
    "- token: ย้ายไปใช้Vaultแล้ว",
    "auth: 改用Redis了",
]
# The second finding's false positives: code as a value, a word or a name as a value under a prose label.
CODE_AND_NAMES = [
    "password = hashlib.sha256(salt + pw).hexdigest()",
    "password = pw_hash1 + salt",
    "password = user.password2",
    "token = base64.b64encode(os.urandom(32)).decode()",
    "SignatureAlgorithm.ECDSA_WITH_SHA384: hashes.SHA384(),",
    "Token: ERC20",
    "Token: ERC721",
    "Password: Incorrect",
    "Secret: JavaScript",
]
# What the Markdown, command-line and cookie rules must leave alone.
LOOK_ALIKES = [
    "**Password**: Required",
    "__password__: x",
    "| `DB_PASSWORD` | str | The password to use |",
    "| name | token |\n|---|---|\n| Ethereum | ERC20 |\n| BSC | BEP-20 |",
    "## API key\n\nAsk the admin for it.",
    "mysql -u root -p shop",
    "ssh -p 2222 host && mkdir -p build",
    "docker login -u me --password-stdin registry.example.com",
    "Cookie: theme=dark; lang=en-US",
    "Set-Cookie: lang=en; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
    "grep -E 'password|token' notes.md",
]


def test_ordinary_notes_and_code_are_left_alone() -> None:
    assert [DEFAULT(text) for text in ORDINARY] == ORDINARY


@pytest.mark.parametrize("text", CODE_AND_NAMES + LOOK_ALIKES, ids=lambda text: text[:32])
def test_code_names_and_formatting_without_a_secret_are_left_alone(text: str) -> None:
    assert DEFAULT(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("密码：Abc12345xyz", "Abc12345xyz"),  # a full-width colon
        ("- 数据库密码：s3cr3tPass", "s3cr3tPass"),
        ("令牌: eyAbc123xyzQ", "eyAbc123xyzQ"),
        ("password：hunter2Xy", "hunter2Xy"),
        ("mật khẩu: Abc12345xyz", "Abc12345xyz"),
        ("รหัสผ่าน: Abc12345xyz", "Abc12345xyz"),  # its vowel marks are no word's edge
        ("โทเค็น: ghx8Kd93kdLq", "ghx8Kd93kdLq"),
    ],
)
def test_a_secret_labelled_in_the_shared_languages_is_masked(text: str, secret: str) -> None:
    assert DEFAULT(text) == text.replace(secret, MASK)


@pytest.mark.parametrize(
    "text",
    ["忘了密码怎么办", "- 密码要至少12位", "密钥管理用 Vault", "mật khẩu phải dài 12 ký tự", "รหัสผ่านต้องยาว 12 ตัว"],
)
def test_a_sentence_about_a_password_in_the_shared_languages_is_left_alone(text: str) -> None:
    assert DEFAULT(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "password: 你好世界Abc123",
        "password: abc12中文xyz34",  # short pieces, but with digits: no sentence's words
        "password: P@ss中文word1",
        "password: 天王盖地虎",  # a password key: its value is no topic
        "password: 中文SuperSecret中文",
        'DB_PASSWORD="上海欢迎你"',  # quoted, or configuration: never prose
        "DB_PASSWORD=สวัสดี1234",
        "PASSWORD=天王盖地虎",
        "SECRET_KEY='กขค12ab!'",
        "root密码：Abc12345xyz",  # a Latin word glued to the label
        "API密钥：Abc12345xyz",
    ],
)
def test_a_credential_among_words_of_an_unspaced_script_is_masked(text: str) -> None:
    masked = DEFAULT(text)
    assert MASK in masked and not any(piece in masked for piece in ("Abc", "abc12", "P@ss", "天王", "上海", "Super"))


def test_a_private_key_under_its_label_is_masked_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdefghij\n-----END RSA PRIVATE KEY-----"
    for label in ("私钥：", "private_key: "):
        assert "MIIEow" not in DEFAULT(label + block)


def test_masked_spans_keep_line_numbers() -> None:
    key_lines = [f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:04d}" for i in range(12)]
    text = "\n".join(
        [
            "# Deploy notes",
            "-----BEGIN PRIVATE KEY-----",  # pasted without its END line
            *key_lines,
            "",
            "DB_PASSWORD=Tr0ub4dor-staging-99",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            *key_lines[:3],
            "-----END OPENSSH PRIVATE KEY-----",
            "The pelican deploy uses port 8443.",
        ]
    )
    out = DEFAULT(text)
    before, after = text.split("\n"), out.split("\n")
    assert len(after) == len(before)
    assert after[0] == "# Deploy notes" and after[-1] == "The pelican deploy uses port 8443."
    assert after[before.index("DB_PASSWORD=Tr0ub4dor-staging-99")] == f"DB_PASSWORD={MASK}"
    assert "MIIEvQ" not in out


def test_masked_table_cells_and_headings_keep_line_numbers() -> None:
    text = "# Hosts\n\n| host | password |\n|---|---|\n| db1 | Tr0ub4dor3xyz |\n| db2 | - |\n\n## Token\n"
    text += "abc123def456ghi\n"
    out = DEFAULT(text)
    assert out == text.replace("Tr0ub4dor3xyz", MASK).replace("abc123def456ghi", MASK)
    assert out.count("\n") == text.count("\n")


def test_a_users_own_patterns_still_mask_whole() -> None:
    assert Redactor.create([r"CORP-\d{4}"])("ticket CORP-1234 and DB_PASSWORD=Tr0ub4dor-99") == (
        f"ticket {MASK} and DB_PASSWORD={MASK}"
    )


LABELS = ["db", "postgres", "mysql root", "azure client", "my service", "x", "aws", "spring datasource", "jenkins"]
KEYS = ["password", "passwd", "passphrase", "secret", "client secret", "token", "access token", "api key",
        "secret key", "private key", "secret access key", "credentials", "account key", "signing key"]  # fmt: skip
SYNTAX = ["{k}={v}", "{k} = {v}", "{k}: {v}", "{k}:{v}", "{k} => {v}", "{k} := {v}", '{k}: "{v}"', "{k}: '{v}'",
          '"{k}": "{v}",', 'export {k}="{v}"', "export {k}={v}", "{k}='{v}'", "<{k}>{v}</{k}>", "--{k}={v}",
          '$env:{k} = "{v}"', "      - {k}={v}", 'connect(host="db", {k}="{v}")', "**{k}**: {v}",
          "- `{k}`: `{v}`", "| prod | {k} | {v} |"]  # fmt: skip
CONTEXTS = ["{pair}", "Staging env: {pair} and the rest stays as it was.", "- {pair}", "```\nHOST=db\n{pair}\n```"]
ALPHABET = string.ascii_letters + string.digits


def _case(words: list[str], style: str) -> str:
    if style == "UPPER_SNAKE":
        return "_".join(words).upper()
    if style == "lower_snake":
        return "_".join(words)
    if style == "camelCase":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "PascalCase":
        return "".join(w.capitalize() for w in words)
    return ("-" if style == "kebab-case" else ".").join(words)


secrets = st.text(ALPHABET, min_size=10, max_size=40).filter(
    lambda v: any(c.isupper() for c in v[1:]) and any(c.islower() for c in v) and any(c.isdigit() for c in v)
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    label=st.sampled_from(["", *LABELS]),
    key=st.sampled_from(KEYS),
    style=st.sampled_from(["UPPER_SNAKE", "lower_snake", "camelCase", "PascalCase", "kebab-case", "dotted"]),
    syntax=st.sampled_from(SYNTAX),
    context=st.sampled_from(CONTEXTS),
    value=secrets,
    symbol=st.sampled_from(["", "-", "_", ".", "!", "@", "%", "+", "/", "~"]),
)
def test_generated_secrets_are_masked_in_every_convention(
    label: str, key: str, style: str, syntax: str, context: str, value: str, symbol: str
) -> None:
    value = value[:5] + symbol + value[5:]
    name = _case([*label.split(), *key.split()], style)
    text = context.format(pair=syntax.format(k=name, v=value))
    out = DEFAULT(text)
    assert value not in out and MASK in out, text
    assert name in out, text


def test_a_value_judged_no_secret_is_searched_again() -> None:
    token = "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"
    assert DEFAULT(f'token = get_token("{token}")') == f'token = get_token("{MASK}")'
    url = "token_url=https://api.example.com/auth?access_key=Hq7vZ2pW9s"
    assert DEFAULT(url) == url.replace("Hq7vZ2pW9s", MASK)


def test_a_written_secret_never_reaches_the_index_or_an_answer(
    data_dir: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    memory = memory_factory()
    written = memory.write(REPRO)
    memory.sync()
    leaked = ["Tr0ub4dor-staging-99", "django-insecure-q8w7e6r5t4"]
    hits = memory.search("staging env", mode="keyword").results
    assert hits and any("DB_PASSWORD=[REDACTED]" in hit.snippet for hit in hits)
    note = memory.get(written["path"])
    assert "DB_PASSWORD=[REDACTED] and SECRET_KEY=[REDACTED]" in note["text"]
    answers = " ".join(hit.snippet for hit in hits) + note["text"]
    stored = b"".join(path.read_bytes() for path in data_dir.rglob("index.sqlite*"))
    assert stored, "the index was written"
    for secret in leaked:
        assert secret not in answers
        assert secret.encode() not in stored
