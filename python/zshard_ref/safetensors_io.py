"""safetensors read/write, implemented directly from the format.

A file is: an 8-byte little-endian unsigned header length ``N``; ``N`` bytes of
UTF-8 JSON, an object mapping each tensor name to
``{"dtype": ..., "shape": [...], "data_offsets": [begin, end]}`` (offsets in
bytes, relative to the start of the data section) plus an optional
``"__metadata__"`` object of string to string; then the data section, raw
little-endian, row-major.

Supported dtypes: F32, BF16, I32, U16, U32, I64. BF16 is read as its uint16
bit patterns widened to float32 (exact); it is written from float arrays with
round-to-nearest-even, or from uint16 arrays taken as raw bit patterns.
"""

import json
import math
import os
from collections import namedtuple

import numpy as np

# safetensors dtype -> little-endian numpy storage dtype
DTYPES = {
    "F32": np.dtype("<f4"),
    "BF16": np.dtype("<u2"),
    "I32": np.dtype("<i4"),
    "U16": np.dtype("<u2"),
    "U32": np.dtype("<u4"),
    "I64": np.dtype("<i8"),
}
# numpy dtype -> safetensors dtype, used when writing without an override
_FROM_NUMPY = {
    np.dtype(np.float32): "F32",
    np.dtype(np.int32): "I32",
    np.dtype(np.uint16): "U16",
    np.dtype(np.uint32): "U32",
    np.dtype(np.int64): "I64",
}
MAX_HEADER = 100 * 1000 * 1000  # the limit of the reference safetensors library

SafeTensors = namedtuple("SafeTensors", ["tensors", "metadata", "dtypes"])


# --------------------------------------------------------------------------- #
# BF16 <-> F32
# --------------------------------------------------------------------------- #

def bf16_bits_to_f32(bits):
    """uint16 bit patterns -> float32 (exact widening)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x):
    """float32 -> uint16 bf16 bit patterns, round to nearest even; NaN stays NaN."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x0040
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint16)


# --------------------------------------------------------------------------- #
# Writing
# --------------------------------------------------------------------------- #

def save_file(path, tensors, metadata=None, dtypes=None):
    """Write ``tensors`` (``{name: array}``) to ``path``.

    The dtype of each tensor comes from its numpy dtype (float32, int32, uint16,
    uint32, int64) unless ``dtypes[name]`` names one (e.g. ``"BF16"``); other
    numpy dtypes are refused (cast first). ``metadata`` is ``{str: str}``.
    Tensors are stored in the order given; the header is space-padded to a
    multiple of 8 bytes.
    """
    dtypes = dtypes or {}
    header, blobs, offset = {}, [], 0
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValueError(f"{path}: __metadata__ must map strings to strings")
        header["__metadata__"] = dict(metadata)
    for name, value in tensors.items():
        if name == "__metadata__":
            raise ValueError(f"{path}: '__metadata__' is not a valid tensor name")
        arr = np.asarray(value)
        st = dtypes.get(name) or _FROM_NUMPY.get(arr.dtype)
        if st is None:
            raise ValueError(f"{path}: tensor {name!r} has numpy dtype {arr.dtype}, which "
                             f"has no safetensors dtype here; cast it or name one")
        if st not in DTYPES:
            raise ValueError(f"{path}: tensor {name!r}: unknown dtype {st!r}")
        if st == "BF16":
            data = arr if arr.dtype == np.uint16 else f32_to_bf16_bits(arr)
        else:
            data = arr
        data = np.ascontiguousarray(data, dtype=DTYPES[st]).tobytes()
        header[name] = {"dtype": st, "shape": [int(s) for s in arr.shape],
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for blob in blobs:
            f.write(blob)


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #

def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def parse(buf, path="<bytes>"):
    """Parse a whole file's bytes; returns ``SafeTensors(tensors, metadata, dtypes)``.

    Raises ValueError naming ``path`` and the problem for any malformed input.
    """
    def bad(msg):
        return ValueError(f"{path}: invalid safetensors file: {msg}")

    size = len(buf)
    if size < 8:
        raise bad(f"truncated: {size} bytes, need at least 8 for the header length")
    n = int.from_bytes(buf[:8], "little")
    if n > size - 8:
        raise bad(f"header length {n} runs past the end of the file "
                  f"({size - 8} bytes follow the length)")
    if n > MAX_HEADER:
        raise bad(f"header length {n} exceeds the limit of {MAX_HEADER} bytes")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except UnicodeDecodeError as e:
        raise bad(f"header is not valid UTF-8 ({e})") from None
    except json.JSONDecodeError as e:
        raise bad(f"header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad(f"header must be a JSON object, got {type(header).__name__}")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise bad("__metadata__ must be an object mapping strings to strings")
    data_len = size - 8 - n
    tensors, dtypes, spans = {}, {}, []
    for name, info in header.items():
        where = f"tensor {name!r}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"{where}: entry must be an object with exactly dtype, shape "
                      f"and data_offsets")
        st, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if st not in DTYPES:
            raise bad(f"{where}: unknown dtype {st!r} (supported: {', '.join(DTYPES)})")
        if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
            raise bad(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(_is_int(o) for o in offs)):
            raise bad(f"{where}: data_offsets must be two integers, got {offs!r}")
        begin, end = offs
        if not 0 <= begin <= end <= data_len:
            raise bad(f"{where}: data_offsets [{begin}, {end}] out of range: the data "
                      f"section has {data_len} bytes")
        nbytes = math.prod(shape) * DTYPES[st].itemsize
        if end - begin != nbytes:
            raise bad(f"{where}: data_offsets [{begin}, {end}] span {end - begin} bytes "
                      f"but {st} {shape} needs {nbytes}")
        spans.append((begin, end, name))
        raw = np.frombuffer(buf, dtype=DTYPES[st], count=math.prod(shape),
                            offset=8 + n + begin).reshape(shape)
        if st == "BF16":
            arr = bf16_bits_to_f32(raw)
        else:
            arr = raw.astype(DTYPES[st].newbyteorder("="))
        tensors[name] = arr
        dtypes[name] = st
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise bad(f"tensors {n0!r} and {n1!r} overlap in the data section")
    return SafeTensors(tensors, metadata, dtypes)


def read_file(path):
    """Read ``path``; returns ``SafeTensors(tensors, metadata, dtypes)`` where
    ``dtypes`` maps each name to its safetensors dtype string."""
    with open(path, "rb") as f:
        buf = f.read()
    return parse(buf, os.fspath(path))


def load_file(path):
    """Read ``path``; returns ``{name: array}`` (BF16 widened to float32)."""
    return read_file(path).tensors
