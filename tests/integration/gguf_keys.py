#!/usr/bin/env python3
"""tests/integration/gguf_keys.py — a copy of a GGUF file with extra uint32 metadata keys (for
tests that need a model carrying keys the bundled one lacks, such as FIM token ids): the
key/value section walked, the keys appended, the tensor table kept and the tensor data
re-aligned after it."""
import struct

# Sizes of GGUF's fixed-size value types (uint8 .. float64; 8 string, 9 array handled apart).
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _skip_value(data, pos, kind):
    if kind == 8:
        (n,) = struct.unpack_from("<Q", data, pos)
        return pos + 8 + n
    if kind == 9:
        item, count = struct.unpack_from("<IQ", data, pos)
        pos += 12
        for _ in range(count):
            pos = _skip_value(data, pos, item)
        return pos
    return pos + _FIXED[kind]


def _string(text):
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def with_keys(src, dst, keys):
    """Writes `src` with the uint32 `keys` ({name: value}) added to `dst`."""
    with open(src, "rb") as f:
        data = f.read()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    assert magic == b"GGUF" and version >= 2, src
    pos, alignment = 24, 32
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", data, pos)
        name = data[pos + 8:pos + 8 + n].decode()
        (kind,) = struct.unpack_from("<I", data, pos + 8 + n)
        if name == "general.alignment":
            (alignment,) = struct.unpack_from("<I", data, pos + 12 + n)
        pos = _skip_value(data, pos + 12 + n, kind)
    kv_end = pos
    for _ in range(n_tensors):
        (n,) = struct.unpack_from("<Q", data, pos)
        (dims,) = struct.unpack_from("<I", data, pos + 8 + n)
        pos += 8 + n + 4 + 8 * dims + 4 + 8
    tensors_end = pos
    data_start = (tensors_end + alignment - 1) // alignment * alignment
    added = b"".join(_string(k) + struct.pack("<II", 4, v) for k, v in keys.items())
    head = struct.pack("<4sIQQ", magic, version, n_tensors, n_kv + len(keys)) + data[24:kv_end] + added + data[kv_end:tensors_end]
    head += b"\0" * (-len(head) % alignment)
    with open(dst, "wb") as out:
        out.write(head + data[data_start:])
