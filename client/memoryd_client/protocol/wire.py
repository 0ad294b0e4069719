"""MessagePack-RPC as memoryd speaks it: request `[0, msgid, method, params]` -> response
`[1, msgid, error, result]`; notification `[2, method, params]`. Errors are maps `{code, message}`."""

from __future__ import annotations

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # one message, either way
MAX_MSGID = 0xFFFFFFFF  # msgpack-rpc msgids are uint32
ERROR_NOTIFICATION = "memoryd.error"  # why the daemon closes a connection: [2, "memoryd.error", [{code, message}]]
