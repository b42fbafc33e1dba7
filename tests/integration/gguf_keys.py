#!/usr/bin/env python3
"""tests/integration/gguf_keys.py — a copy of a GGUF file with metadata keys replaced or added
(for tests that need a model carrying keys the bundled one lacks): the key/value section walked,
the keys changed, the tensor table kept and the tensor data re-aligned after it. Also the model
the agent clients' tests (Codex CLI, Claude Code) run: the bundled TinyStories model ends a
story with its BOS token (as llama2.c samples it), which is no end-of-generation token to
llama.cpp or strata, and after an agent's long instructions it rambles until the context is
full; agents fail a turn that ends so. Its copy declares BOS its end of turn and a line break
its end of message (a reply is one paragraph, and surely ends), and its chat template renders
the user's last turn only."""
import struct

from daemon_harness import MODEL

# Sizes of GGUF's fixed-size value types (uint8 .. float64; 8 string, 9 array handled apart).
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
UINT32, STRING = 4, 8
NEWLINE = 13  # the bundled model's "\n" token
LAST_TURN_TEMPLATE = "{{- bos_token }}{{- messages[-1].content | trim }}\n"


def _skip_value(data, pos, kind):
    if kind == STRING:
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


def _value(value):
    """A uint32 (int) or string (str) value: its type and bytes."""
    if isinstance(value, int):
        return UINT32, struct.pack("<I", value)
    return STRING, _string(value)


def with_metadata(src, dst, changes):
    """Writes `src` to `dst` with the keys of `changes` ({name: int (uint32) or str}) replacing
    or adding those keys."""
    with open(src, "rb") as f:
        data = f.read()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    assert magic == b"GGUF" and version >= 2, src
    pos, alignment, kvs = 24, 32, []
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", data, pos)
        name = data[pos + 8:pos + 8 + n].decode()
        (kind,) = struct.unpack_from("<I", data, pos + 8 + n)
        if name == "general.alignment":
            (alignment,) = struct.unpack_from("<I", data, pos + 12 + n)
        end = _skip_value(data, pos + 12 + n, kind)
        if name not in changes:
            kvs.append(data[pos:end])
        pos = end
    for name, value in changes.items():
        kind, raw = _value(value)
        kvs.append(_string(name) + struct.pack("<I", kind) + raw)
    kv_end = pos
    for _ in range(n_tensors):
        (n,) = struct.unpack_from("<Q", data, pos)
        (dims,) = struct.unpack_from("<I", data, pos + 8 + n)
        pos += 8 + n + 4 + 8 * dims + 4 + 8
    tensors_end = pos
    data_start = (tensors_end + alignment - 1) // alignment * alignment
    head = struct.pack("<4sIQQ", magic, version, n_tensors, len(kvs)) + b"".join(kvs) + data[kv_end:tensors_end]
    head += b"\0" * (-len(head) % alignment)
    with open(dst, "wb") as out:
        out.write(head + data[data_start:])


def with_keys(src, dst, keys):
    """Writes `src` with the uint32 `keys` ({name: value}) added to `dst`."""
    with_metadata(src, dst, keys)


def agent_model(dst):
    """The bundled model as the agent clients' tests run it (see the module's comment)."""
    with_metadata(MODEL, dst, {"tokenizer.ggml.eot_token_id": 1, "tokenizer.ggml.eom_token_id": NEWLINE,
                               "tokenizer.chat_template": LAST_TURN_TEMPLATE})
