"""How long a request's strings may be: the schema refuses longer ones, and the hooks (which must not pay for
importing the schema on every prompt) fit what a platform hands them to these before they ask."""

MAX_PATH_CHARS = 4096  # PATH_MAX
MAX_PROMPT_CHARS = 100_000  # longer is refused (a hook cuts it); recall reads its topic from far less
MAX_SESSION_CHARS = 256  # session ids are UUIDs or alike
MAX_CLIENT_CHARS = 64
