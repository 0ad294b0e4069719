"""The built-in secret rules: what redaction masks, as RE2 patterns and the checks a matched value must pass.

Three kinds of secret are masked, the label before each kept:

- a token whose own form says what it is (`ghp_…`, `glpat-…`, `AKIA…`, `xoxb-…`, `sk_live_…`, `SG.…`, `npm_…`,
  `pypi-…`, `gsk_…`, `sk-…`, `hf_…`, `AIza…`, a JWT, a Telegram bot token, a PEM private key block, terminated or
  not, a Slack or Discord webhook URL): masked wherever it stands;
- a password in a URL (`scheme://user:PASSWORD@host`), a bearer token (`Bearer …`), `curl -u user:PASSWORD`,
  a .netrc `login me password …`, a command's own password option (`mysql -pPASSWORD`, `sshpass -p`, a registry
  `login … -p`, `openssl … -k`, `redis-cli -a`, `htpasswd -b [file] user PASSWORD`), the values of a `Cookie:` or
  `Set-Cookie:` header or of `--cookie` (not its attributes: `Path=/`);
- the value of a sensitive key: `KEY=value`, `KEY: value`, `KEY = "value"`, `"KEY": "value"`, `KEY => 'value'`,
  `KEY := value`, `export KEY='value'`, `--key value`, `<key>value</key>`, `Authorization: Basic …`, `Password=…;`
  or `AccountKey=…;` in a connection string, `?access_token=…&` or `&sig=…` in a URL. The key is found in any case
  convention and with any prefix (`DB_PASSWORD`, `dbPassword`, `db-password`, `spring.datasource.password`,
  `aws_secret_access_key`, `_authToken`, `SharedAccessKey`): it is sensitive when one of its words is password,
  passwd, passphrase, pass, pwd, secret, token, credentials, auth, authorization, sig(nature) or an api, access,
  private, account, signing, client… key, and no word after it says the value is something else (`PASSWORD_FILE`,
  `token_url`, `SharedAccessKeyName`) nor a counter before it (`max_tokens`). A key of another kind (`OPENAI_KEY`,
  `SSH_KEY`, but also `SORT_KEY`), a PAT (`GH_PAT`) or a joined …pass (`PGPASS`) is a weak key: its value is masked
  only when it is 16 or more characters with letters and digits. The labels of the shared languages are keys too
  (`密码`, `密碼`, `口令`, `密钥`, `令牌`, `私钥`, `mật khẩu`, `รหัสผ่าน`, `โทเค็น`), and a full-width colon separates
  as `:` does (`密码：…`).

Markdown is formatting around a key and its value, not part of them: emphasis and code marks (`**Password**: …`,
`**password:** …`, `__password__: …`, `` `DB_PASSWORD`: `…` ``), list bullets, a table row whose cells hold the key
and the value (`| password | … |`), a table column whose header is the key (`| host | password |` over its rows),
a heading that is only the key with the value alone on the next line, a blank line between allowed (`## API key`,
then the key). A two-word label whose first word says which key (`API key`, `Secret key`) is one key.

A labelled value is masked when it looks like a credential, which keeps ordinary prose and code readable:

- a quoted value (`"…"`, `'…'`, spaces allowed) is masked unless it is empty, a placeholder or a reference;
- an unquoted value (a run up to a space, quote, `,`, `;` or `&`) is masked unless it is a placeholder (`xxx`,
  `****`, `changeme`, `<your-token>`, `none`, `str`, a count under eight digits, a version like `^6.1.1`), a
  reference (`$SECRET`, `${DB_PASSWORD}`, `{{ vars.x }}`, `%PW%`, `op://…`, a file path) or code (`get_token()`,
  `request.form[…]`, `settings.SECRET_KEY`, a variable named after the key, any plain identifier in a spaced
  `key = value` assignment), and either it looks like a credential by itself (six or more characters mixing at
  least two of lower case, upper case past the first letter, digits and symbols: `hunter2`, `Tr0ub4dor-99`) or
  the pair is written as configuration (it ends its line, or is glued `KEY=value`, and the key is a compound or
  upper-case name or a lower-case one that starts its line): `POSTGRES_PASSWORD=postgres`, `password: sunflower`
  on a line of its own. Code includes a call of a dotted or lower-case name (`hashlib.sha256(salt + pw)`) and a
  spaced assignment whose value an operator follows (`= salt + pw`). A name is not credential-shaped: a word,
  even with one capital inside (`JavaScript`), or capitals then digits (`ERC721`, `SHA256`).

So "token = the next word", "secret: we never told anyone", "password: see 1Password", "Password: Incorrect"
and "Token: ERC20" are left alone: their value is a plain word followed by more prose, or a name under a label
written as prose (capitalised, or two words), not as configuration. What this gives up: a plain-word password in
the middle of a sentence (`password: sunflower and then…`) or under a prose label (`Password: sunflower`), an
unquoted passphrase with spaces, and a password in prose with no separator (`the password is hunter2`). A value
in a script written without spaces runs on to the line's end: under a prose label that names no password (`auth:`,
`token:`), a value whose words between that script's runs are letters only, and the script at least half of it, is
a sentence ("auth: migrateระบบแคชจากMemcachedไปRedisเสร็จแล้ว"); "password: 你好世界Abc123" is still masked.

The patterns that find the candidates are in memoryd.sources.secret_patterns; every one compiles under RE2 (no
lookaround, no backreferences), and the checks here run in Python on a match's few characters, so the whole stays
linear in the text."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words of a key name: a sensitive one, and those that, after it, say the value is not the secret itself.
SENSITIVE = _words(
    "password passwords passwd passphrase passcode pass pwd pw secret secrets token credential credentials "
    "auth authorization apikey privatekey accesskey sig signature"
)
PASSWORD_WORDS = _words("password passwords passwd passphrase passcode pass pwd pw 密码 密碼 口令 khẩu รหัสผ่าน")
UNSPACED_LABELS = ("密码", "密碼", "口令", "密钥", "密鑰", "令牌", "私钥", "รหัสผ่าน", "โทเค็น")  # "mật khẩu" is two words
JOINED_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credentials", "accesskey")
KEY_HEADS = _words(
    "api access private account signing encryption master client app session license consumer subscription "
    "storage secret"
)
QUALIFIERS = _words(
    "file path dir url uri endpoint host length len min max size count ttl expiry expires expiration expire lifetime "
    "timeout age type kind name field label prompt policy hint header env var enabled enable disabled required "
    "rotation rotate format regex pattern mode method provider strategy scheme location ref reference arn version "
    "status state source store manager helper command cmd script prefix limit usage used budget "
    "estimate rate per types library lib sdk module package plugin floor md txt json yaml yml toml ini cfg conf csv "
    "log py js ts sh"
)
COUNTERS = _words("max min num number total input output prompt completion context limit")
PLACEHOLDERS = _words(
    "none null nil true false yes no on off undefined required optional empty unset default changeme changeit "
    "change_me change-me password passwd secret token example sample placeholder dummy redacted hidden masked "
    "omitted removed todo tbd str string int bool bytes secretstr any object text see ask same below above n/a "
    "1password lastpass bitwarden keychain vault keepass env environment expired revoked rotated invalid valid "
    "missing set needed pending provided unknown test testing foo bar baz foobar value your_token float number "
    "integer double list dict array boolean date"
)
REFERENCE_PREFIXES = ("${", "$(", "{{", "op://", "vault:", "secret:", "ref+", "arn:", "env:", "file:", "./", "../")
BRACKETS = ("<>", "[]", "{}", "%%")
MASK_CHARS = frozenset("*xX.#_-•?")
FORMAT_FIELDS = frozenset(("%s", "%d", "%r", "{}"))
PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/")
KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")
MAX_KEY = 64  # longer names are not keys a person wrote
TRAILING = frozenset(".:)]}")  # what trim may take off a value's end
COOKIE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-!#$%&'*+^`|~")
COOKIE_ATTRIBUTES = _words("path domain expires max-age samesite secure httponly priority partitioned version comment")


def key_words(name: str) -> tuple[str, ...]:
    """A key name's words, lower case: DB_PASSWORD, dbPassword, db-password and db.password give db, password;
    APIKey gives api, key; password2 gives password, 2."""
    return _key_words(name) if len(name) <= MAX_KEY else ()


@lru_cache(maxsize=4096)
def _key_words(name: str) -> tuple[str, ...]:
    words: list[str] = []
    start = 0
    for i, here in enumerate(name):
        if not here.isalnum() and not unicodedata.category(here).startswith("M"):  # a Thai vowel mark is a letter's
            words.append(name[start:i])
            start = i + 1
        elif i > start:
            before, after = name[i - 1], name[i + 1 : i + 2]
            camel = here.isupper() and (before.islower() or (before.isupper() and after.islower()))
            script = bool(_UNSPACED_RUN.match(here)) != bool(_UNSPACED_RUN.match(before))  # root密码, API密钥
            if camel or script or here.isdigit() != before.isdigit():
                words.append(name[start:i])
                start = i
    words.append(name[start:])
    return tuple(w.lower() for w in words if w)


NOT_SENSITIVE, WEAK, STRONG = 0, 1, 2


def sensitive_key(name: str) -> int:
    """How surely a value under this name is a secret, from its last sensitive word, unless a qualifier follows it
    (PASSWORD_FILE) or a counter precedes it (max_tokens): STRONG for a password, token, secret or an api/access/…
    key; WEAK for a key of another kind (OPENAI_KEY, SSH_KEY, but also SORT_KEY), a PAT, a joined …pass (PGPASS)."""
    return _sensitive_key(name) if len(name) <= MAX_KEY else NOT_SENSITIVE


@lru_cache(maxsize=4096)
def _sensitive_key(name: str) -> int:
    words = key_words(name)
    found = [(i, _strength(words, i)) for i in range(len(words))]
    last, strength = max(((i, s) for i, s in found if s), default=(-1, NOT_SENSITIVE))
    if strength == NOT_SENSITIVE or any(w in QUALIFIERS for w in words[last + 1 :]):
        return NOT_SENSITIVE
    return NOT_SENSITIVE if any(w in COUNTERS for w in words[:last]) else strength


def _strength(words: tuple[str, ...], i: int) -> int:
    word = words[i]
    if word in SENSITIVE or (len(word) > 6 and word.endswith(JOINED_ENDINGS)):  # pgpassword, authtoken
        return STRONG
    if not word.isascii() and any(label in word for label in UNSPACED_LABELS):  # รหัสผ่านใหม่, 数据库密码
        return STRONG
    if word == "khẩu" and words[i - 1 : i] == ("mật",):
        return STRONG
    if word in ("key", "keys"):
        return STRONG if i > 0 and words[i - 1] in KEY_HEADS else WEAK if i > 0 else NOT_SENSITIVE
    return WEAK if word == "pat" or (len(word) > 4 and word.endswith("pass")) else NOT_SENSITIVE


def placeholder(value: str) -> bool:
    """A stand-in for a secret, not one: xxx, ****, changeme, <your-token>, your-api-key-here, a template
    (sk-[project-name]-…); or a count or a version (4000, 20_000, ^6.1.1), or no letter or digit at all."""
    low = value.lower()
    if low in PLACEHOLDERS or set(value) <= MASK_CHARS or not any(map(str.isalnum, value)):
        return True
    if _number(value) or _version(value) or _template(value):
        return True
    if low.startswith(("your", "my-", "my_", "replace", "insert", "enter")) or low.endswith(("here", "...")):
        return True
    return any(word in low for word in ("example", "placeholder", "changeme", "xxxx", "redacted"))


def _template(value: str) -> bool:
    """Whether the value holds a bracketed name of what goes there: <your-token>, [project-name], [20 alnum]."""
    for opening, closing in ("<>", "[]"):
        start = value.find(opening)
        end = value.find(closing, start + 1)
        inner = value[start + 1 : end].replace("-", "").replace("_", "").replace(" ", "")
        if start >= 0 and end > start + 3 and inner.isalnum() and inner.islower():
            return True
    return False


def reference(value: str) -> bool:
    """A name for a secret kept elsewhere: $SECRET, ${DB_PASSWORD}, {{ x }}, %PW%, <token>, op://…, a file path."""
    if value.startswith(REFERENCE_PREFIXES) or value in FORMAT_FIELDS:
        return True
    if value[:1] == "$" and _identifier(value[1:]):
        return True
    if len(value) > 1 and any(value[0] == pair[0] and value[-1] == pair[1] for pair in BRACKETS):
        return True
    return _path(value)


def _number(value: str) -> bool:
    """Digits (with _ or an exponent) shorter than eight: a count, not a secret."""
    return len(value) < 8 and value.replace("_", "").replace("e", "").isdigit()


def _version(value: str) -> bool:
    core = value.lstrip("^~<>=v")
    return "." in core and core.replace(".", "").isdigit()


def _identifier(text: str) -> bool:
    return text.replace("_", "a").isalnum() and text.isascii() and not text[:1].isdigit()


def _path(value: str) -> bool:
    """/run/secrets/db, /etc/ssl/key.pem: a root of lower-case letters and a further part (base64 has neither)."""
    parts = value.split("/")
    return (
        len(parts) > 2
        and parts[0] == ""
        and parts[1].isalpha()
        and parts[1].islower()
        and all(parts[2:])
        and set(value) <= PATH_CHARS
    )


def code(value: str, key: str, spaced: bool) -> bool:
    """An expression, not a literal: a call or subscript, an attribute path, a variable named like the key; in a
    spaced assignment (`password = hashed`) any plain identifier."""
    if _UNSPACED_RUN.search(value):  # code is written in Latin letters: "中文SuperSecret中文" is no variable
        return False
    head = value.split("(", 1)[0].split("[", 1)[0]
    if head != value and (head == "" or _identifier_path(head) or _attribute(head)):
        return True
    if "." in value and _identifier_path(value) and not _all_classes(value):
        return True
    if not value.replace("_", "").isalpha():
        return False
    words = key_words(value)
    if spaced or value.lower() == key.lower() or any(w in words for w in key_words(key)[-1:]):
        return True
    return any(_strength(words, i) for i in range(len(words))) and len(words) > 1


def _all_classes(text: str) -> bool:
    """Upper and lower case letters and digits at once: what a generated credential holds (a0000.AAAAA), and a
    name path in code (settings.db_password, os.environ) almost never does."""
    return any(c.isupper() for c in text) and any(c.islower() for c in text) and any(c.isdigit() for c in text)


def _identifier_path(text: str) -> bool:
    return all(_code_name(part) for part in text.split("."))


def _attribute(text: str) -> bool:
    """hashes.SHA384, np.Float64: a name as code spells it, then a dot and any identifiers."""
    first, dot, rest = text.partition(".")
    return bool(dot) and _code_name(first) and all(_identifier(part) for part in rest.split("."))


def _code_name(part: str) -> bool:
    """A name as code spells it: letters and underscores, or lower case with digits (sha256, b64encode, token2)."""
    return _identifier(part) and (part.replace("_", "").isalpha() or part.islower())


def operator_follows(rest: str) -> bool:
    """Whether the text after a value goes on with an arithmetic operator (`= salt + pw`): the value is code."""
    rest = rest.lstrip(" \t")
    return rest[:1] in ("+", "*", "/", "%") and rest[1:2] in (" ", "=")


def prose_label(key: str) -> bool:
    """A label written as prose, not configuration: two words (API key) or one capitalised (Password, Token)."""
    return " " in key or (key.istitle() and len(key_words(key)) == 1)


def cookie_secret(name: str, value: str) -> bool:
    """Whether a cookie's value is a credential: a cookie's own (a plain name, not an attribute: Path=/) that looks
    like one, and not code (`cookie: SimpleCookie = http.cookies.SimpleCookie()`)."""
    if not name or not set(name) <= COOKIE_NAME_CHARS or name.lower() in COOKIE_ATTRIBUTES:
        return False
    return credential_shaped(value) and not code(value, name, False)


def long_credential(value: str) -> bool:
    """Sixteen or more characters with letters and digits and no space: what a weak key's value must be."""
    return len(value) >= 16 and " " not in value and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def credential_shaped(value: str) -> bool:
    """Six or more characters mixing at least two of lower case, upper case past the first letter, digits, symbols
    (a hyphen or a dot counts when there are two: correct-horse-battery), and not a name (JavaScript, ERC721)."""
    if len(value) < 6 or _name(value):
        return False
    rest = value[1:]
    symbols = value.replace("-", "").replace(".", "")
    classes = (
        value.upper() != value,
        rest.lower() != rest,
        any(map(str.isdigit, value)),
        (bool(symbols) and not symbols.isalnum()) or len(value) - len(symbols) >= 2,
    )
    return sum(classes) >= 2


# letters of scripts written without spaces (Thai, Lao, Khmer, Myanmar, kana, Han; not Hangul, which is spaced)
_UNSPACED = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNSPACED_RUN = re.compile(f"[{_UNSPACED}]+")
_HAN_OR_KANA = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def unspaced_prose(value: str) -> bool:
    """A sentence of a script written without spaces, which an unquoted value runs on to the line's end ("auth:
    migrateระบบแคชจากMemcachedไปRedisเสร็จแล้ว"): the words left between its runs of that script are letters only
    (a name, a word: no digit or symbol, as "abc12中文xyz34" and "P@ss中文word1" have; at least one), and the script
    holds at least half as much of it as they do (a Han or kana character counting twice)."""
    runs = _UNSPACED_RUN.findall(value)
    words = [word for piece in _UNSPACED_RUN.split(value) if (word := piece.strip(".:,;)]}!?- "))]
    if not runs or not words or not all(word.replace(" ", "").isalpha() for word in words):
        return False
    script = sum(len(run) + len(_HAN_OR_KANA.findall(run)) for run in runs)
    return 2 * script >= sum(len(word.replace(" ", "")) for word in words)


def password_key(name: str) -> bool:
    """A key that names a password (not a token or an auth: a service's name as often as a secret's)."""
    return bool(set(key_words(name)) & PASSWORD_WORDS)


def _name(value: str) -> bool:
    """A word, even in camel case with one capital inside (JavaScript, iPhone), or a standard's name: capitals
    then digits, eight characters at most (ERC721, SHA256, BEP-20)."""
    if value.isalpha():
        return sum(c.isupper() for c in value[1:]) < 2
    letters = value.rstrip("0123456789").rstrip("-")
    return len(value) <= 8 and letters.isalpha() and letters.isupper()


def trim(value: str) -> str:
    """The value without the sentence's punctuation after it: a final full stop, an unopened closing bracket."""
    if value[-1:] not in TRAILING:
        return value
    closing = {")": "(", "]": "[", "}": "{"}
    unopened = {c: value.count(c) - value.count(o) for c, o in closing.items()}
    end = len(value)
    while end:
        last = value[end - 1]
        if last in unopened and unopened[last] > 0:
            unopened[last] -= 1
        elif last not in ".:":
            break
        end -= 1
    return value[:end]
