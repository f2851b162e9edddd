"""Frames between the pool and its workers: a 4-byte big-endian length, then a pickle (the
messages and why pickle is safe here: docs/engines.md#worker-processes).

>>> frame = encode_frame(("ready",))
>>> HEADER.unpack(frame[:4])[0] == len(frame) - 4
True
>>> pickle.loads(frame[4:])
('ready',)"""

from __future__ import annotations

import os
import pickle
import struct

HEADER = struct.Struct(">I")


def encode_frame(message: object) -> bytes:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(payload)) + payload


def write_frame(fd: int, message: object) -> None:
    """Write one frame to a blocking file descriptor."""
    data = memoryview(encode_frame(message))
    while data:
        data = data[os.write(fd, data) :]
