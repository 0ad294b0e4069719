"""Secret redaction, the rules before memoryd.sources.secret_rules against the rule set, on three counts:

- recall: a corpus of planted secrets this bench generates (seeded): random values for every key-name convention,
  syntax form and context, connection strings, cloud keys, provider tokens, auth headers, keys and values in
  Markdown (emphasis, code marks, tables, headings), passwords on command lines and session cookies. A case counts as
  caught when no 8-character piece of its secret is left in the output. Where detect-secrets is installed, its
  hits on the same corpus that the rules leave in the output are listed too.
- false positives: spans masked in the shared data sets' text (SciFact abstracts, XQuAD contexts in en/vi/zh/th,
  LoCoMo turns), which hold no secrets: spans per million characters, with a sample of each to judge by eye.
- throughput: MB/s over that text, in the blocks the daemon redacts.

python -m bench.redaction [--cases N] [--seed S] [--samples K] [--json FILE]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from bench.conversations import load_locomo
from bench.datasets import SHARED, load_xquad
from memoryd.sources.redact import DEFAULT, MASK, _blocks

Redact = Callable[[str], str]
MISSED_KEPT = 50  # missed cases kept in the results
TARGETS = {
    "redaction recall, planted secrets": (">=", 0.99),
    "redaction masked spans per 1M chars, shared text": ("<=", 0.1),
}

# The built-in rules before the rule set, kept here as the baseline.
OLD_BUILTIN = [
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bASIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    r"\bglpat-[A-Za-z0-9_\-]{20,}\b",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bhf_[A-Za-z0-9]{30,}\b",
    r"\bpa-[A-Za-z0-9_\-]{30,}\b",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
]
OLD_LABELLED = [
    r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{16,}",
    r"(?i)(\b(?:api[_-]?key|secret|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd|pwd)"
    r"\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]{6,}",
    r"([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)",
]


class OldRedactor:
    """memoryd's redaction before the rule set: one pass of whole-match patterns, three of labelled ones."""

    def __init__(self) -> None:
        self.whole = re2.compile("|".join(f"(?:{p})" for p in OLD_BUILTIN))
        self.labelled = [re2.compile(p) for p in OLD_LABELLED]

    def __call__(self, text: str) -> str:
        if len(text) <= 1 << 14:
            return self._redact(text)
        return "".join(self._redact(block) for block in _blocks(text))

    def _redact(self, text: str) -> str:
        text = self.whole.sub(lambda m: MASK + "\n" * m.group().count("\n"), text)
        for pattern in self.labelled:
            text = pattern.sub(_old_value, text)
        return text


def _old_value(match: Any) -> str:
    closing = match.group(2) if match.re.groups >= 2 else ""
    return match.group(1) + MASK + (closing or "")


@dataclass
class Case:
    family: str
    text: str
    secrets: tuple[str, ...]
    tags: tuple[str, ...] = ()


# ---- values ----

ALNUM = string.ascii_letters + string.digits
SYMBOLS = "!@%^*_+-.~"
WORDS = [
    *("correct", "horse", "battery", "staple", "orbit", "velvet", "lantern", "maple", "quartz", "ember", "harbor"),
    *("cobalt", "prism", "falcon", "willow", "tundra", "saffron", "meadow", "glacier", "pepper", "violet", "sparrow"),
]
WEAK = ("sunflower", "postgres", "dragonfly", "monkeyking", "letmein", "rosebud", "bluebird", "starlight")


def _run(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """n characters of the alphabet, with at least one lower case letter, upper case letter and digit."""
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.islower() for c in out) and any(c.isupper() for c in out) and any(c.isdigit() for c in out):
            return out


def value_kinds(rng: random.Random) -> dict[str, Callable[[], str]]:
    """Generators of credential values by kind; `spaced` ones need quotes."""
    return {
        "random": lambda: _run(rng, rng.randint(12, 40)),
        "symbols": lambda: _run(rng, rng.randint(10, 24), ALNUM + SYMBOLS),
        "hex": lambda: "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((32, 40, 64)))),
        "base64": lambda: base64.b64encode(rng.randbytes(rng.choice((20, 30, 40)))).decode(),
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128))),
        "human": lambda: (
            f"{rng.choice(WORDS).capitalize()}{rng.randint(0, 99)}{rng.choice('!@#%*-_.')}{rng.choice(WORDS)}"
        ),
        "diceware": lambda: "-".join(rng.sample(WORDS, rng.randint(3, 5))),
        "spaced": lambda: " ".join(rng.sample(WORDS, rng.randint(3, 5))),
        "short": lambda: _run(rng, rng.randint(6, 8)),
    }


# ---- environment-style keys ----

PREFIXES = (
    "",
    "db",
    "postgres",
    "mysql root",
    "azure client",
    "github",
    "openai",
    "my service",
    "x",
    "aws",
    "stripe",
    "smtp",
    "redis",
    "app",
    "spring datasource",
    "prod",
    "admin",
    "jenkins",
    "slack bot",
)
BASES = (
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "client secret",
    "token",
    "access token",
    "auth token",
    "refresh token",
    "api key",
    "apikey",
    "secret key",
    "private key",
    "access key",
    "secret access key",
    "credentials",
    "auth",
    "account key",
    "signing key",
    "encryption key",
    "session secret",
    "webhook secret",
)
NEEDS_PREFIX = {"pass", "pwd", "auth", "apikey"}


def convention(words: list[str], name: str) -> str:
    if name == "UPPER_SNAKE":
        return "_".join(words).upper()
    if name == "lower_snake":
        return "_".join(words)
    if name == "camelCase":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if name == "PascalCase":
        return "".join(w.capitalize() for w in words)
    if name == "kebab-case":
        return "-".join(words)
    return ".".join(words)  # dotted


CONVENTIONS = ("UPPER_SNAKE", "lower_snake", "camelCase", "PascalCase", "kebab-case", "dotted")
# {k} the key, {v} the value; forms with quotes take values with spaces
FORMS = {
    "K=v": "{k}={v}",
    "K = v": "{k} = {v}",
    "K: v": "{k}: {v}",
    "K:v": "{k}:{v}",
    "K => v": "{k} => {v}",
    "'K' => 'v'": "'{k}' => '{v}'",
    "K := v": "{k} := {v}",
    'yaml K: "v"': '{k}: "{v}"',
    "yaml K: 'v'": "{k}: '{v}'",
    "json": '"{k}": "{v}",',
    'toml K = "v"': '{k} = "{v}"',
    'export K="v"': 'export {k}="{v}"',
    "export K='v'": "export {k}='{v}'",
    "export K=v": "export {k}={v}",
    ".env K='v'": "{k}='{v}'",
    '.env K="v"': '{k}="{v}"',
    "kwarg": 'client = connect(host="db", {k}="{v}")',
    "xml": "<{k}>{v}</{k}>",
    "cli --K=v": "--{k}={v}",
    "powershell": '$env:{k} = "{v}"',
    "Dockerfile ENV": "ENV {k}={v}",
    "compose list": "      - {k}={v}",
}
QUOTED_FORMS = {name for name, form in FORMS.items() if "'{v}'" in form or '"{v}"' in form}
CONTEXTS = {
    "alone": "{pair}",
    "sentence": "Staging env: {pair} and the rest stays as it was.",
    "bullet": "- {pair}",
    "fence": "```\nHOST=db.internal\n{pair}\nPORT=5432\n```",
}


def env_cases(rng: random.Random, per_cell: int) -> Iterator[Case]:
    """Every convention x form x context, per_cell times, with a random key and a random value kind."""
    kinds = value_kinds(rng)
    for conv in CONVENTIONS:
        for form_name, form in FORMS.items():
            for context_name, context in CONTEXTS.items():
                for _ in range(per_cell):
                    base = rng.choice(BASES)
                    prefix = rng.choice([p for p in PREFIXES if p] if base in NEEDS_PREFIX else PREFIXES)
                    key = convention([*prefix.split(), *base.split()], conv)
                    allowed = [k for k in kinds if k != "spaced" or form_name in QUOTED_FORMS]
                    kind = rng.choice(allowed)
                    value = kinds[kind]()
                    pair = form.format(k=key, v=value)
                    tags = (f"convention {conv}", f"form {form_name}", f"context {context_name}", f"value {kind}")
                    yield Case("env-style key", context.format(pair=pair), (value,), tags)


def _names(text: str) -> list[str]:
    return text.split()


# Names from real deployments' configuration, gathered to check the rules on names they were not written from
# (a first check caught 62 of them: *_KEY of another kind, *_PAT and PGPASS then became weak keys).
REAL_NAMES = _names(
    "DATABASE_PASS SMTP_PWD ADMIN_PASSCODE JWT_SECRET SESSION_SECRET COOKIE_SECRET ENCRYPTION_KEY MASTER_KEY "
    "LICENSE_KEY REFRESH_TOKEN ID_TOKEN BEARER_TOKEN OAUTH_CLIENT_SECRET WEBHOOK_SECRET HMAC_SECRET SIGNING_SECRET "
    "DEPLOY_KEY SSH_KEY GPG_PASSPHRASE KEYSTORE_PASSWORD TRUSTSTORE_PASS RABBITMQ_DEFAULT_PASS MINIO_ROOT_PASSWORD "
    "MINIO_SECRET_KEY S3_SECRET SENTRY_AUTH_TOKEN NPM_TOKEN DOCKER_PASSWORD REGISTRY_PASSWORD VAULT_TOKEN "
    "CONSUL_HTTP_TOKEN HF_TOKEN ANTHROPIC_API_KEY PINECONE_API_KEY DD_API_KEY DD_APP_KEY NEW_RELIC_LICENSE_KEY "
    "TWILIO_AUTH_TOKEN SENDGRID_API_KEY MAILGUN_API_KEY DJANGO_SECRET_KEY FLASK_SECRET_KEY RAILS_MASTER_KEY "
    "SECRET_KEY_BASE APP_KEY NEXTAUTH_SECRET JWT_PRIVATE_KEY ENCRYPTION_PASSPHRASE CLOUDFLARE_API_TOKEN "
    "DIGITALOCEAN_ACCESS_TOKEN HEROKU_API_KEY CIRCLE_TOKEN CODECOV_TOKEN SLACK_SIGNING_SECRET SLACK_BOT_TOKEN "
    "DISCORD_TOKEN TELEGRAM_BOT_TOKEN GOOGLE_CLIENT_SECRET GH_PAT GITHUB_PAT AZURE_STORAGE_KEY ARM_CLIENT_SECRET "
    "POSTGRES_PASS PGPASS REDIS_PASSWORD ELASTIC_PASSWORD KIBANA_PASSWORD GRAFANA_ADMIN_PASSWORD "
    "GF_SECURITY_ADMIN_PASSWORD SMTP_PASS EMAIL_HOST_PASSWORD MAIL_PASSWORD LDAP_BIND_PASSWORD KEY_PASSWORD "
    "STORE_PASSWORD SIGNING_KEY_PASSWORD OPENAI_KEY STRIPE_SECRET STRIPE_WEBHOOK_SECRET PAYPAL_SECRET "
    "AUTH0_CLIENT_SECRET OKTA_API_TOKEN SECRET ACCESS_KEY ACCESS_SECRET CONSUMER_SECRET API_SECRET APP_SECRET "
    "CLIENT_KEY PRIVATE_TOKEN PERSONAL_ACCESS_TOKEN X_AUTH_TOKEN"
)


def real_name_cases(rng: random.Random) -> Iterator[Case]:
    """Each real name in four forms, with a random value of any kind but spaced."""
    kinds = value_kinds(rng)
    for name in REAL_NAMES:
        for form in ("{k}={v}", "{k}: {v}", 'export {k}="{v}"', "in prod {k}={v} is set"):
            kind = rng.choice([k for k in kinds if k != "spaced"])
            value = kinds[kind]()
            yield Case("real env name", form.format(k=name, v=value), (value,), (f"value {kind}",))


def weak_cases(rng: random.Random, n: int) -> Iterator[Case]:
    """Plain-word passwords written as configuration, on a line of their own."""
    for _ in range(n):
        key = convention(
            [*rng.choice(PREFIXES[1:]).split(), rng.choice(("password", "passwd", "secret"))], "UPPER_SNAKE"
        )
        value = rng.choice(WEAK)
        form = rng.choice(("{k}={v}", "{k}: {v}", "export {k}={v}", "      - {k}={v}"))
        yield Case("weak password, config line", form.format(k=key, v=value), (value,))


# ---- connection strings, cloud keys, tokens, headers ----


def connection_cases(rng: random.Random, n: int) -> Iterator[Case]:
    kinds = value_kinds(rng)
    safe = ("random", "hex", "uuid", "short")
    forms = (
        "DATABASE_URL=postgres://app:{p}@db.internal:5432/app",
        "postgresql://admin:{p}@10.0.0.5/prod?sslmode=require",
        "mysql://root:{p}@localhost:3306/shop",
        "mongodb+srv://svc:{p}@cluster0.ab1cd.mongodb.net/test?retryWrites=true",
        "REDIS_URL=redis://:{p}@cache:6379/0",
        "amqp://guest:{p}@rabbit:5672/",
        "jdbc:postgresql://db:5432/app?user=app&password={p}&ssl=true",
        "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={p};encrypt=true",
        "Server=tcp:db.example.net,1433;Initial Catalog=app;User ID=sa;Password={p};Encrypt=True;",
        "Data Source=db;Database=app;Uid=app;Pwd={p};",
        "connect to https://deploy:{p}@git.internal/repo.git",
    )
    azure = (
        "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey={b};EndpointSuffix=core.windows.net",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={b}",
    )
    for i in range(n):
        if i % 4 == 3:
            value = base64.b64encode(rng.randbytes(64 if i % 8 == 3 else 32)).decode()
            yield Case("connection string", rng.choice(azure).format(b=value), (value,), ("azure",))
        else:
            value = kinds[rng.choice(safe)]()
            form = rng.choice(forms)
            yield Case("connection string", form.format(p=value), (value,), (form.split(":")[0],))


def _pem(rng: random.Random, kind: str) -> tuple[str, str]:
    body = base64.b64encode(rng.randbytes(rng.choice((120, 240, 480)))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines) + f"\n-----END {kind}PRIVATE KEY-----", body


def cloud_cases(rng: random.Random, n: int) -> Iterator[Case]:
    for i in range(n):
        which = i % 5
        if which == 0:
            key_id = rng.choice(("AKIA", "ASIA")) + "".join(
                rng.choice(string.ascii_uppercase + "234567") for _ in range(16)
            )
            secret = base64.b64encode(rng.randbytes(30)).decode()
            text = f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"
            yield Case("cloud key", text, (key_id, secret), ("aws credentials file",))
        elif which == 1:
            secret = base64.b64encode(rng.randbytes(30)).decode()
            key_id = "AKIA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))
            text = f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}"
            yield Case("cloud key", text, (key_id, secret), ("aws env",))
        elif which == 2:
            pem, body = _pem(rng, "")
            key_id = "".join(rng.choice("0123456789abcdef") for _ in range(40))
            escaped = pem.replace("\n", "\\n")
            text = (
                '{\n  "type": "service_account",\n  "project_id": "demo-123",\n'
                f'  "private_key_id": "{key_id}",\n  "private_key": "{escaped}\\n",\n'
                '  "client_email": "svc@demo-123.iam.gserviceaccount.com"\n}'
            )
            yield Case("cloud key", text, (key_id, body[:64], body[-40:]), ("gcp service account",))
        elif which == 3:
            secret = "".join(rng.choice(ALNUM) for _ in range(3)) + str(rng.randint(0, 9)) + "Q~"
            secret += "".join(rng.choice(ALNUM + "_~.-") for _ in range(34))
            yield Case("cloud key", f"client secret for the app registration: {secret}", (secret,), ("azure ad",))
        else:
            secret = "AIza" + "".join(rng.choice(ALNUM + "_-") for _ in range(35))
            yield Case("cloud key", f"maps key {secret} in the frontend", (secret,), ("google api key",))


def _b62(rng: random.Random, n: int) -> str:
    return _run(rng, n)


def token_makers(rng: random.Random) -> dict[str, Callable[[], str]]:
    hexs = lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
    dash = lambda n: "".join(rng.choice(ALNUM + "_-") for _ in range(n))  # noqa: E731
    return {
        "github ghp_": lambda: "ghp_" + _b62(rng, 36),
        "github gho_": lambda: "gho_" + _b62(rng, 36),
        "github ghs_": lambda: "ghs_" + _b62(rng, 36),
        "github_pat_": lambda: f"github_pat_{_b62(rng, 22)}_{_b62(rng, 59)}",
        "gitlab glpat-": lambda: "glpat-" + dash(20),
        "slack xoxb": lambda: f"xoxb-{rng.randint(10**11, 10**12)}-{rng.randint(10**11, 10**12)}-{_b62(rng, 24)}",
        "slack xoxp": lambda: f"xoxp-{rng.randint(10**11, 10**12)}-{rng.randint(10**11, 10**12)}-{_b62(rng, 32)}",
        "slack webhook": lambda: (
            f"https://hooks.slack.com/services/T{_b62(rng, 8).upper()}/B{_b62(rng, 10).upper()}/" + _b62(rng, 24)
        ),
        "discord webhook": lambda: f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**18)}/{dash(68)}",
        "stripe sk_live": lambda: "sk_live_" + _b62(rng, 24),
        "stripe rk_live": lambda: "rk_live_" + _b62(rng, 24),
        "twilio SK": lambda: "SK" + hexs(32),
        "sendgrid SG.": lambda: f"SG.{dash(22)}.{dash(43)}",
        "npm npm_": lambda: "npm_" + _b62(rng, 36),
        "pypi pypi-": lambda: "pypi-AgEIcHlwaS5vcmc" + dash(60),
        "groq gsk_": lambda: "gsk_" + _b62(rng, 52),
        "openai sk-proj-": lambda: "sk-proj-" + dash(48),
        "openai sk-": lambda: "sk-" + _b62(rng, 48),
        "anthropic sk-ant-": lambda: "sk-ant-api03-" + dash(93) + "AA",
        "hugging face hf_": lambda: "hf_" + _b62(rng, 34),
        "google AIza": lambda: "AIza" + dash(35),
        "jwt": lambda: _jwt(rng),
        "telegram bot": lambda: f"{rng.randint(10**8, 10**10)}:AA{dash(33)}",
        "mailgun key-": lambda: "key-" + hexs(32),
    }


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part({"sub": str(rng.randint(1, 10**9)), "name": rng.choice(WORDS), "iat": rng.randint(10**9, 2 * 10**9)})
    return f"{head}.{body}.{base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip('=')}"


TOKEN_CONTEXTS = (
    "my key is {t} for the deploy job",
    "{t}",
    'client = Client("{t}")',
    "curl -H 'X-Api-Key: {t}' https://api.example.com",
    "- the CI uses {t}, rotate it monthly",
)


def token_cases(rng: random.Random, per_family: int) -> Iterator[Case]:
    for family, make in token_makers(rng).items():
        for i in range(per_family):
            token = make()
            context = TOKEN_CONTEXTS[i % len(TOKEN_CONTEXTS)]
            secret = token.split("/services/", 1)[-1].split("/webhooks/", 1)[-1]
            yield Case("provider token", context.format(t=token), (secret,), (f"token {family}",))
    for kind in ("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "):
        for _ in range(per_family // 2):
            pem, body = _pem(rng, kind)
            yield Case("provider token", f"# Keys\n{pem}\nThe deploy uses port 8443.", (body[:64],), ("token PEM",))


def header_cases(rng: random.Random, n: int) -> Iterator[Case]:
    for i in range(n):
        user, pw = rng.choice(WORDS), _run(rng, 12)
        basic = base64.b64encode(f"{user}:{pw}".encode()).decode()
        bearer = _run(rng, 40, ALNUM + "-._~")
        forms = (
            (f"Authorization: Basic {basic}", basic),
            (f'curl -H "Authorization: Basic {basic}" https://api.example.com', basic),
            (f"Authorization: Bearer {bearer}", bearer),
            (f"headers = {{'Authorization': 'Bearer {bearer}'}}", bearer),
            (f"Proxy-Authorization: Basic {basic}", basic),
        )
        text, secret = forms[i % len(forms)]
        yield Case("auth header", text, (secret,), (text.split(":")[0][:24],))


# ---- Markdown, command lines, cookies ----

# Labels as prose writes them: capitalised, or two words of which the first says which key.
PROSE_LABELS = (
    *("Password", "API key", "Secret key", "Access token", "Client secret", "Token", "Secret", "Auth token"),
    *("DB password", "Admin password", "Root password", "Passphrase", "Private key", "Refresh token", "Signing key"),
)
# {k} a key, {K} the key in upper case, {T} a prose label, {v} the value
MARKDOWN_FORMS = {
    "**Label**: v": "**{T}**: {v}",
    "**key:** v": "- **{k}:** {v}",
    "key: `v`": "{k}: `{v}`",
    "- `KEY`: `v`": "- `{K}`: `{v}`",
    "Label: `v`": "{T}: `{v}`",
    "__key__: v": "__{k}__: {v}",
    "*Label*: v": "*{T}*: {v}",
    "table row": "| prod db | {k} | {v} |",
    "table column": "| host | user | {T} |\n|------|------|------|\n| db1.internal | app | {v} |\n| db2 | ro | - |",
    "heading": "## {T}\n\n{v}\n\nRotate it monthly.",
}
COMMAND_FORMS = {
    "mysql -pV": "mysql -u root -p{v} -h db.internal shop",
    "mysql --password=V": "mysql --password={v} -h db.internal",
    "mysqldump -p'V'": "mysqldump -u backup -p'{v}' --all-databases > all.sql",
    "sshpass -p 'V'": "sshpass -p '{v}' ssh deploy@10.0.0.5",
    "sshpass -p V": "sshpass -p {v} scp build.tar deploy@host:/srv",
    "docker login -p V": "docker login -u me -p {v} registry.example.com",
    "helm registry login -p V": "helm registry login ghcr.io -u me -p {v}",
    "openssl -k V": "openssl enc -aes-256-cbc -salt -in db.sql -out db.enc -k {v}",
    "openssl -passin pass:V": "openssl rsa -in key.pem -passin pass:{v} -out plain.pem",
    "htpasswd -b": "htpasswd -b -c /etc/nginx/.htpasswd admin {v}",
    "htpasswd -nbB": "htpasswd -nbB admin {v}",
    "curl -u user:V": "curl -u admin:{v} https://api.example.com/v1/items",
    "redis-cli -a V": "redis-cli -h cache -p 6379 -a {v} ping",
}
COOKIE_FORMS = {
    "Cookie:": "Cookie: theme=dark; session={v}; lang=en",
    "Set-Cookie:": "Set-Cookie: sid={v}; Path=/; HttpOnly; Secure; SameSite=Lax",
    "curl -H 'Cookie: …'": "curl -H 'Cookie: JSESSIONID={v}' https://app.example.com/admin",
    "curl --cookie": 'curl --cookie "auth_session={v}" https://app.example.com',
    "json header": '"Cookie": "PHPSESSID={v}",',
}


def markdown_cases(rng: random.Random, per_form: int) -> Iterator[Case]:
    """A key and its value in Markdown: emphasis, code marks, bullets, table cells and columns, a heading."""
    kinds = value_kinds(rng)
    for form_name, form in MARKDOWN_FORMS.items():
        for _ in range(per_form):
            base = rng.choice(BASES)
            words = [
                *rng.choice([p for p in PREFIXES if p] if base in NEEDS_PREFIX else PREFIXES).split(),
                *base.split(),
            ]
            kind = rng.choice([k for k in kinds if k != "spaced"])
            value = kinds[kind]()
            key = convention(words, rng.choice(("lower_snake", "camelCase")))
            text = form.format(k=key, K=convention(words, "UPPER_SNAKE"), T=rng.choice(PROSE_LABELS), v=value)
            yield Case("markdown", text, (value,), (f"form {form_name}", f"value {kind}"))


def command_cases(rng: random.Random, per_form: int) -> Iterator[Case]:
    """A password given on a command line: a tool's own option, glued or not, quoted or not."""
    kinds = value_kinds(rng)
    for form_name, form in COMMAND_FORMS.items():
        for _ in range(per_form):
            kind = rng.choice([k for k in kinds if k != "spaced"])
            value = kinds[kind]()
            yield Case("command-line password", form.format(v=value), (value,), (f"form {form_name}", f"value {kind}"))


def cookie_cases(rng: random.Random, per_form: int) -> Iterator[Case]:
    """A session cookie's value in a Cookie or Set-Cookie header, or curl's --cookie."""
    kinds = value_kinds(rng)
    for form_name, form in COOKIE_FORMS.items():
        for _ in range(per_form):
            kind = rng.choice(("random", "hex", "base64", "uuid"))
            value = kinds[kind]()
            yield Case("cookie", form.format(v=value), (value,), (f"form {form_name}", f"value {kind}"))


def planted(seed: int, per_cell: int) -> list[Case]:
    rng = random.Random(seed)
    cases = list(env_cases(rng, per_cell))
    cases += real_name_cases(rng)
    cases += weak_cases(rng, 100)
    cases += connection_cases(rng, 400)
    cases += cloud_cases(rng, 250)
    cases += token_cases(rng, 20)
    cases += header_cases(rng, 100)
    cases += markdown_cases(rng, 30)
    cases += command_cases(rng, 20)
    cases += cookie_cases(rng, 30)
    return cases


def leaked(case: Case, out: str) -> bool:
    """Whether any 8-character piece of a planted secret (the whole, if shorter) is still in the output."""
    for secret in case.secrets:
        width = min(8, len(secret))
        if any(secret[i : i + width] in out for i in range(len(secret) - width + 1)):
            return True
    return False


def recall(cases: list[Case], redact: Redact) -> dict[str, Any]:
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed: list[str] = []
    for case in cases:
        caught = not leaked(case, redact(case.text))
        for group in (case.family, *(f"{case.family} / {t}" for t in case.tags)):
            by[group][0] += caught
            by[group][1] += 1
        if not caught:
            missed.append(case.text)
    return {
        "cases": len(cases),
        "recall": round(1 - len(missed) / len(cases), 4),
        "by": {g: round(c / n, 4) for g, (c, n) in sorted(by.items())},
        "counts": {g: n for g, (_, n) in sorted(by.items())},
        "missed": missed[:MISSED_KEPT],
        "missed_count": len(missed),
    }


def detect_secrets_misses(cases: list[Case], redact: Redact) -> dict[str, Any] | None:
    """detect-secrets' hits on the planted corpus whose value the redacted text still holds."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "planted.txt"
        starts, lines = [], []
        for case in cases:
            starts.append(len(lines) + 1)
            lines += [*case.text.split("\n"), ""]
        path.write_text("\n".join(lines) + "\n")
        found = SecretsCollection()
        with default_settings():
            found.scan_file(str(path))
        hits = [(s.line_number, s.type, s.secret_value) for s in found[str(path)]]
    index = [0] * (len(lines) + 2)
    for number, first in enumerate(starts):
        for line in range(first, starts[number + 1] if number + 1 < len(starts) else len(lines) + 1):
            index[line] = number
    outputs: dict[int, str] = {}
    misses: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for line, kind, value in hits:
        if not value or len(value) < 6:
            continue
        number = index[line]
        out = outputs.setdefault(number, redact(cases[number].text))
        if value in out and value not in (MASK,):
            misses[kind] += 1
            examples.setdefault(kind, out.split("\n")[line - starts[number]] if "\n" in out else out)
    return {"hits": len(hits), "left_in_output": dict(misses), "examples": examples}


# ---- ordinary text ----


def shared_texts() -> dict[str, str]:
    """The shared data sets' text: one string per set, documents separated by blank lines."""
    texts: dict[str, str] = {}
    with (SHARED / "data" / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh if line.strip()]
    texts["scifact"] = "\n\n".join(f"{d.get('title', '')}\n{d['text']}" for d in docs)
    for lang in ("en", "vi", "zh", "th"):
        texts[f"xquad-{lang}"] = "\n\n".join(text for _, text in load_xquad(lang).docs.values())
    turns = []
    for conv in load_locomo():
        for session in conv.sessions:
            turns += [f"{turn.speaker}: {turn.text}" for turn in session.turns]
    texts["locomo"] = "\n".join(turns)
    return texts


ROOT = Path(__file__).resolve().parents[1]
LOOKALIKES = (
    "the {k} field must be at least 12 characters",
    "{k} = the next word",
    "{k}: we never told anyone",
    "{k}: see 1Password",
    "{k}: <your-token>",
    "{k}=${{{K}}}",
    "{k}: $SECRET",
    '{k}: "{{{{ vault.db }}}}"',
    "{k}: xxx",
    "{k}: changeme",
    "{k}: ****",
    "{K}=",
    '{k} = request.form["{k}"]',
    "{k} = get_token()",
    '{k} = os.environ["{K}"]',
    "self.{k} = {k}",
    "{k}: str",
    "{k}: Optional[str] = None",
    "def login(user: str, {k}: str) -> bool:",
    "{k}_hash = bcrypt.hashpw({k}, salt)",
    "{k}_file: /run/secrets/db",
    "{K}_FILE=/run/secrets/{k}",
    "rotate the {k} every 90 days; the {k} policy lives in the wiki",
    "max_tokens: 4096",
    '"token-types": "^6.1.1",',
    "{k}: required",
    "export {K}=$(cat /run/secrets/{k})",
    "{k}: {{{{ .Values.{k} }}}}",
    "{k} = hashlib.sha256(salt + pw).hexdigest()",
    "{k} = base64.b64encode(os.urandom(32)).decode()",
    "{k} = secrets.token_hex(32)",
    "{k}: hashes.SHA384(),",
    "{k} = pw_hash1 + salt",
    "{k} = user.{k}_hash",
    '{k} = cfg.get("{k}", "")',
    "{T}: Incorrect",
    "{T}: ERC20",
    "{T}: ERC721",
    "{T}: JavaScript",
    "**{T}**: Required",
    "**{T}**: see the vault",
    "- `{K}`: the {k} for the app",
    "| `{K}` | str | The {k} to use |",
    "| name | {T} |\n|---|---|\n| Ethereum | ERC721 |\n| BSC | BEP-20 |",
    "## {T}\n\nAsk the admin for it.",
    "## {T}\nTBD",
    "mysql -u root -p shop",
    "docker login -u me --password-stdin registry.example.com",
    "Cookie: theme=dark; lang=en-US",
    "Set-Cookie: lang=en; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
)


def lookalikes(rng: random.Random, n: int) -> str:
    """Lines that name a secret without holding one: prose, placeholders, references, code, counts, paths."""
    lines = []
    for i in range(n):
        base = rng.choice(BASES)
        words = [*rng.choice(PREFIXES[1:] if base in NEEDS_PREFIX else PREFIXES).split(), *base.split()]
        key, upper = convention(words, rng.choice(("lower_snake", "camelCase"))), convention(words, "UPPER_SNAKE")
        label = rng.choice(PROSE_LABELS)
        lines.append(LOOKALIKES[i % len(LOOKALIKES)].format(k=key, K=upper, T=label))
    return "\n".join(lines)


def source_text() -> str:
    """This checkout's own code and docs (not tests or benchmarks, which plant secrets): code that names secrets."""
    found = []
    for folder in ("memoryd", "docs", "editors", "systemd", "launchd"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".toml", ".json", ".ts", ".js", ".service", ".plist") and path.is_file():
                found.append(path.read_text(encoding="utf-8", errors="replace"))
    found += [(ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "CHANGELOG.md", "pyproject.toml")]
    return "\n\n".join(found)


def false_positives(texts: dict[str, str], redact: Redact, samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, text in texts.items():
        masked = redact(text)
        spans = masked.count(MASK) - text.count(MASK)
        found = []  # redaction keeps line numbers, so the lines it changed pair up
        for before, after in zip(text.split("\n"), masked.split("\n"), strict=True):
            if before != after and len(found) < samples:
                found.append(f"{before.strip()[:160]!r} -> {after.strip()[:160]!r}")
        out[name] = {
            "chars": len(text),
            "masked_spans": spans,
            "per_1M_chars": round(spans / len(text) * 1e6, 2),
            "samples": found,
        }
    return out


def throughput(text: str, redact: Redact, rounds: int = 3) -> float:
    """MB/s (of UTF-8) over the text, best of some rounds."""
    size = len(text.encode()) / 1e6
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - start)
    return round(size / best, 2)


def measure(seed: int, per_cell: int, samples: int) -> dict[str, Any]:
    old, new = OldRedactor(), DEFAULT
    cases = planted(seed, per_cell)
    texts = shared_texts()
    everything = "\n\n".join(texts.values())
    hard = {"look-alikes": lookalikes(random.Random(seed), 2000), "memoryd code+docs": source_text()}
    secrets_text = "\n\n".join(c.text for c in cases)
    return {
        "seed": seed,
        "planted": {"old": recall(cases, old), "new": recall(cases, new)},
        "detect_secrets": detect_secrets_misses(cases, new),
        "false_positives": {
            "old": false_positives(texts, old, samples),
            "new": false_positives(texts, new, samples),
        },
        "look_alikes": {"old": false_positives(hard, old, samples), "new": false_positives(hard, new, samples)},
        "throughput_MBps": {
            "shared text": {"MB": round(len(everything.encode()) / 1e6, 1), "old": throughput(everything, old)}
            | {"new": throughput(everything, new)},
            "planted corpus": {"MB": round(len(secrets_text.encode()) / 1e6, 1), "old": throughput(secrets_text, old)}
            | {"new": throughput(secrets_text, new)},
        },
    }


def report(found: dict[str, Any], missed: int) -> str:
    old, new = found["planted"]["old"], found["planted"]["new"]
    lines = [f"planted secrets: {new['cases']} cases (seed {found['seed']})", "", f"{'family':58s} {'n':>5} old    new"]
    for group, n in new["counts"].items():
        lines.append(f"{group[:58]:58s} {n:5d} {old['by'][group]:.3f}  {new['by'][group]:.3f}")
    lines.append(f"{'overall':58s} {new['cases']:5d} {old['recall']:.3f}  {new['recall']:.3f}")
    if new["missed"]:
        lines += ["", f"missed by the new rules ({new['missed_count']}; first {missed}):"]
        lines += [f"  {text!r}" for text in new["missed"][:missed]]
    ds = found["detect_secrets"]
    if ds is not None:
        lines += ["", f"detect-secrets: {ds['hits']} hits on the planted corpus; left in the output by the new rules:"]
        lines += [f"  {kind}: {n}  e.g. {ds['examples'][kind]!r}" for kind, n in ds["left_in_output"].items()]
        if not ds["left_in_output"]:
            lines.append("  none")
    for part, title in (
        ("false_positives", "false positives on the shared text"),
        ("look_alikes", "false positives on text that names secrets without holding one"),
    ):
        lines += ["", f"{title} (masked spans, per 1M characters):"]
        for name, row in found[part]["new"].items():
            before = found[part]["old"][name]
            lines.append(
                f"  {name:18s} {row['chars']:>10,} chars  old {before['masked_spans']:4d} "
                f"({before['per_1M_chars']:.2f})  new {row['masked_spans']:4d} ({row['per_1M_chars']:.2f})"
            )
            lines += [f"      new: {sample}" for sample in row["samples"]]
            lines += [f"      old: {sample}" for sample in before["samples"]]
    lines += ["", "throughput MB/s:"]
    for name, row in found["throughput_MBps"].items():
        lines.append(f"  {name:15s} {row['MB']:6.1f} MB  old {row['old']:7.2f}  new {row['new']:7.2f}")
    return "\n".join(lines)


def markdown(found: dict[str, Any]) -> list[str]:
    """bench report's section."""
    old, new = found["planted"]["old"], found["planted"]["new"]
    lines = [
        "## Secret redaction (`python -m bench redaction`)",
        "",
        f"Recall on {new['cases']} planted secrets (seed {found['seed']}), the rules before the rule set and after:",
        "",
        "| family | cases | old | new |",
        "|---|---|---|---|",
    ]
    lines += [f"| {g} | {n} | {old['by'][g]} | {new['by'][g]} |" for g, n in new["counts"].items() if " / " not in g]
    lines += [f"| overall | {new['cases']} | {old['recall']} | {new['recall']} |", ""]
    lines += ["| text | characters | old masked spans | new masked spans |", "|---|---|---|---|"]
    for part in ("false_positives", "look_alikes"):
        for name, row in found[part]["new"].items():
            before = found[part]["old"][name]["masked_spans"]
            lines.append(f"| {name} | {row['chars']:,} | {before} | {row['masked_spans']} |")
    speed = found["throughput_MBps"]
    lines += ["", "MB/s: " + "; ".join(f"{k} old {v['old']}, new {v['new']}" for k, v in speed.items()) + "."]
    return lines


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """bench report's headline figures of this part."""
    if not found:
        return {}
    fp = found["false_positives"]["new"]
    chars = sum(row["chars"] for row in fp.values())
    return {
        "redaction recall, planted secrets": found["planted"]["new"]["recall"],
        "redaction masked spans per 1M chars, shared text": round(
            sum(row["masked_spans"] for row in fp.values()) / chars * 1e6, 2
        ),
        "redaction MB/s, shared text": found["throughput_MBps"]["shared text"]["new"],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.redaction", description=__doc__)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-cell", type=int, default=3, help="cases per convention x form x context")
    parser.add_argument("--samples", type=int, default=10, help="masked spans shown per data set")
    parser.add_argument("--missed", type=int, default=30, help="missed cases shown")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    found = measure(args.seed, args.per_cell, args.samples)
    print(report(found, args.missed))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2, ensure_ascii=False))
    return found


if __name__ == "__main__":
    main()
