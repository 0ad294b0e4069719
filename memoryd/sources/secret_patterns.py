"""Where secrets stand, as RE2 patterns: one alternative per rule, searched as one pattern (no lookaround, no
backreferences, so linear in the text). What a match must also pass to be masked is memoryd.sources.secret_rules'
to decide; its docstring says what is masked and what is left."""

from __future__ import annotations

# Tokens whose own form marks them, by family; each is masked whole.
TOKENS: dict[str, str] = {
    "aws access key id": r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    "github": r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}",
    "gitlab": r"\bgl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|oas)-[A-Za-z0-9_\-]{20,}",
    "slack token": r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|\bxapp-[0-9]-[A-Za-z0-9\-]{10,}",
    "stripe": r"\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9]{20,}",
    "twilio": r"\bSK[0-9a-fA-F]{32}\b",
    "sendgrid": r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    "npm": r"\bnpm_[A-Za-z0-9]{30,}",
    "pypi": r"\bpypi-Ag[A-Za-z0-9_\-]{50,}",
    "groq": r"\bgsk_[A-Za-z0-9]{20,}",
    "openai / anthropic": r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    "hugging face": r"\bhf_[A-Za-z0-9]{30,}|\bapi_org_[A-Za-z0-9]{30,}",
    "google": r"\bAIza[0-9A-Za-z_\-]{35}|\bya29\.[0-9A-Za-z_\-]{20,}|\bGOCSPX-[A-Za-z0-9_\-]{20,}",
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    "telegram bot": r"\b[0-9]{6,12}:AA[A-Za-z0-9_\-]{30,}",
    "mailgun": r"\b(?:pub)?key-[0-9a-f]{32}\b",
    "voyage": r"\bpa-[A-Za-z0-9_\-]{30,}\b",
    "azure ad client secret": r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
    "discord bot": r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}",
    "other providers": r"\bdo[pro]_v1_[a-f0-9]{64}|\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|\blin_api_[A-Za-z0-9]{40}"
    r"|\bhv[sb]\.[A-Za-z0-9_\-]{90,}|\bAGE-SECRET-KEY-1[0-9A-Z]{58}|\bdapi[a-f0-9]{32}"
    r"|\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|\bATATT3[A-Za-z0-9_\-=]{100,}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"
    r"|\bdp\.pt\.[A-Za-z0-9]{40,}|\bpul-[a-f0-9]{40}",
}
# A private key block, whole; an unterminated one up to the end of its base64 lines. The body holds no run of five
# dashes, so a search from one BEGIN stops at the next marker instead of scanning to the end of the text for an END.
PEM = (
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:[^\-]|-{1,4}[^\-])*-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:[ \t]*(?:\r?\n|\\n)[A-Za-z0-9+/=]{16,})+)"
)
WEBHOOK = (
    r"https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/)"
)
URL_USER = r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?#]*:"
BEARER = r"(?i:\bbearer)[ \t]+"
# Where a sensitive key may begin: no word boundary before it, so that DB_PASSWORD and dbPassword are found too.
KEY_STEM = (
    r"(?i:pass|pw|secret|token|credential|auth|api[_.\-]?key"
    r"|(?:access|private|account|signing|encryption|master|client|app|session|license|consumer|subscription"
    r"|storage)[_.\-]?key|sig|key|pat"
    r"|密码|密碼|口令|密钥|密鑰|令牌|私钥|mật khẩu|รหัสผ่าน|โทเค็น)"  # the labels of the shared languages
)
# Markdown around a key or a value: **Password**, __password__, `DB_PASSWORD`, *Token*.
MARK = r"(?:\*{1,2}|_{1,2}|`)"
# After the key: its closing mark, then =, :, => … (a bold label's colon may carry the mark: **password:** x), or a
# table's pipe between the key's cell and the value's (| password | x |).
SEPARATOR = (
    r"(?:\*{1,2}|`)?[\"']?[ \t]*(?:=>|:=|\?=|=|[:：](?:(?:\*{1,2}|__)[ \t])?|\|)[ \t]*"
    r"(?:[\"']?(?i:basic|bearer|token|digest|negotiate)[ \t]+)?"
)
DOUBLE_QUOTED = r'"(?:[^"\\\n]|\\.)*"'
SINGLE_QUOTED = r"'[^'\n]*'"
# not a run of dashes: a private key block after its label ("私钥：-----BEGIN …") is the PEM rule's, masked whole
UNQUOTED = r"(?:[^\s\"'`,;&=<>()\[\]{}|\\:\-]|-[^\s\"'`,;&\-])[^\s\"'`,;&]*"
NETRC = r"\b(?:login|user)[ \t]+[^\s\"']+[ \t]+password[ \t]+"  # .netrc: machine h login me password …
USER_OPTION = r"(?:\B-u|--user)[ \t]+[^\s:'\"]+:"  # curl -u user:password
FLAG = r"--(?i:password|passwd|pass|token|secret|api-key|apikey|auth-token|access-token|client-secret)[ \t]+"
# A command's own short password option: mysql -pPASSWORD (glued: `-p db` names a database), sshpass -p, a registry
# login's -p, openssl -k, redis-cli -a; the option may follow others on the command line.
COMMAND = (
    r"\b(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb)[ \t][^\n|;&]*?[ \t]-p"
    r"|sshpass[ \t]+-p[ \t]*"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|helm|oc|cf)[ \t]+(?:registry[ \t]+)?login[ \t][^\n|;&]*?[ \t]-p[ \t]*"
    r"|openssl[ \t][^\n|;&]*?[ \t]-k[ \t]+"
    r"|redis-cli[ \t][^\n|;&]*?[ \t]-a[ \t]+)"
)
# htpasswd -b [file] user PASSWORD (-n prints instead of writing a file, so the file is left out).
HTPASSWD_OPTIONS = r"(?:[ \t]+-[A-Za-z]+(?:[ \t]+[0-9]+)?)*"  # -B, -C 10
HTPASSWD = (
    rf"\bhtpasswd{HTPASSWD_OPTIONS}[ \t]+-[A-Za-z]*b[A-Za-z]*(?:[ \t]+[0-9]+)?{HTPASSWD_OPTIONS}"
    r"(?:[ \t]+[^\s\-]\S*)?[ \t]+[^\s\-]\S*[ \t]+"
)
# A Cookie or Set-Cookie header (or curl's --cookie): its name=value pairs, up to the end of the line or a quote.
COOKIE = r"(?:(?i:\b(?:set-)?cookie)[\"']?[ \t]*:|--cookie[ \t=])[ \t]*[\"']?"
# A heading that is only a sensitive key, its value alone on the next line (or the one after a blank line).
HEADING = (
    r"#{1,6}[ \t]+(?:\*{1,2}|`)?(?P<key>(?:[A-Za-z]+[ \t])?[\w.\-]*" + KEY_STEM + r"[\w.\-]*)(?:\*{1,2}|`)?:?"
    r"[ \t\r]*\n(?:[ \t\r]*\n)?[ \t]*`?(?P<value>[^\s\"'`,;&=:<>()\[\]{}|\\]+=*)`?[ \t\r]*(?m:$)"
)
# A Markdown table's delimiter row (|---|:--:|), below its header row.
TABLE_RULE = r"(?m)^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?[ \t\r]*$"


def alternatives() -> list[tuple[str, str]]:
    """Every built-in rule as (kind, pattern), in the order they are tried at one position; `value` (or `dq`/`sq`,
    quotes included) is the part masked, and ends last."""
    tokens = "|".join(f"(?:{p})" for p in TOKENS.values())
    value = f"(?:(?P<dq>{DOUBLE_QUOTED})|(?P<sq>{SINGLE_QUOTED})|(?P<mark>{MARK})?(?P<value>{UNQUOTED})`?)"
    return [
        ("whole", PEM),
        ("whole", tokens),
        ("always", f"{WEBHOOK}(?P<value>[A-Za-z0-9_/+\\-]{{16,}})"),
        ("unless stand-in", f"{URL_USER}(?P<value>[^\\s@/?#]+)@"),
        ("unless stand-in", f"{BEARER}(?P<value>[A-Za-z0-9._~+/\\-]{{16,}}=*)"),
        ("unless stand-in", f"{FLAG}{value}"),
        ("command", f"(?:{COMMAND}|{HTPASSWD}){value}"),
        ("cookie", f"{COOKIE}(?P<value>[^\\r\\n\"']+)"),
        ("credential", f"{NETRC}(?P<value>[^\\s\"']+)"),
        ("unless stand-in", f"{USER_OPTION}(?P<value>[^\\s'\"`,;]+)"),
        ("xml", f"<(?P<key>[\\w.:\\-]*{KEY_STEM}[\\w.\\-]*)>(?P<value>[^<\\s][^<\\n]*)</"),
        ("heading", HEADING),
        ("labelled", f"(?P<key>{KEY_STEM}[\\w.\\-]*)(?P<sep>{SEPARATOR}){value}"),
    ]


def pattern() -> str:
    """All built-in rules as one RE2 pattern, rule i wrapped in the group `rule_i` and its own groups suffixed
    with `_i` (`value_3`): one search finds where a rule matches, which rule it is and its parts."""
    return "|".join(f"(?P<rule_{i}>{_numbered(p, i)})" for i, (_, p) in enumerate(alternatives()))


def _numbered(pattern: str, i: int) -> str:
    for name in GROUPS:
        pattern = pattern.replace(f"(?P<{name}>", f"(?P<{name}_{i}>")
    return pattern


GROUPS = ("dq", "sq", "mark", "value", "key", "sep")
