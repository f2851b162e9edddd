"""Frames between the pool and its workers: a 4-byte big-endian length, then a pickle.

Pickle is safe here: both ends are our own processes; job SQL travels as a string inside it.
"""

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
