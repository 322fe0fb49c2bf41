"""The warm server's wire: one JSON object per line, each way (server.py, fork.py)."""

from __future__ import annotations

import json
import socket

ACCEPT_SECONDS = 5.0  # how long a client waits for the server's fork to accept its command, then runs it here


def line(conn: socket.socket, buffer: bytearray | None = None) -> dict | None:
    data = bytearray() if buffer is None else buffer
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    line, _, rest = bytes(data).partition(b"\n")
    data[:] = rest
    message = json.loads(line)
    return message if isinstance(message, dict) else None
