"""safetensors: byte layout, round trips for every dtype, and rejection of
malformed files with an error naming the file and the problem."""

import json
import os
import struct
import tempfile
import unittest

import numpy as np

import refutil  # noqa: F401  (import path)

from zshard_ref import safetensors_io as st


def raw_file(header, data=b"", header_len=None):
    """Bytes of a file with ``header`` (dict or raw bytes) and ``data``."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(text) if header_len is None else header_len
    return struct.pack("<Q", n) + text + data


class FileCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name="t.safetensors"):
        return os.path.join(self.tmp.name, name)

    def write(self, blob, name="bad.safetensors"):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(blob)
        return path


class TestLayout(FileCase):
    def test_reads_a_hand_built_file(self):
        header = {"__metadata__": {"k": "v"},
                  "b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
                  "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                  "h": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [16, 20]}}
        data = struct.pack("<ffqHH", 1.5, -2.0, -7, 0x4049, 0xBF80)
        f = st.read_file(self.write(raw_file(header, data), "ok.safetensors"))
        self.assertEqual(f.metadata, {"k": "v"})
        self.assertEqual(f.dtypes, {"a": "F32", "b": "I64", "h": "BF16"})
        np.testing.assert_array_equal(f.tensors["a"], np.array([1.5, -2.0], np.float32))
        self.assertEqual(f.tensors["b"].shape, ())
        self.assertEqual(int(f.tensors["b"]), -7)
        self.assertEqual(f.tensors["h"].dtype, np.float32)
        np.testing.assert_array_equal(f.tensors["h"], [[3.140625, -1.0]])

    def test_written_bytes(self):
        path = self.path()
        st.save_file(path, {"x": np.array([[1.0, 2.0, 3.0]], np.float32),
                            "i": np.array([258], np.int32)}, metadata={"step": "3"})
        with open(path, "rb") as fh:
            blob = fh.read()
        (n,) = struct.unpack("<Q", blob[:8])
        self.assertEqual(n % 8, 0)
        header = json.loads(blob[8:8 + n])
        self.assertEqual(header["__metadata__"], {"step": "3"})
        self.assertEqual(header["x"], {"dtype": "F32", "shape": [1, 3], "data_offsets": [0, 12]})
        self.assertEqual(header["i"], {"dtype": "I32", "shape": [1], "data_offsets": [12, 16]})
        data = blob[8 + n:]
        self.assertEqual(data, struct.pack("<fffi", 1.0, 2.0, 3.0, 258))


class TestRoundTrip(FileCase):
    def test_every_dtype(self):
        rng = np.random.default_rng(3)
        tensors = {
            "f32": np.array([[0.0, -0.0, 1e-42, -3.4e38], [np.inf, -np.inf, 1.0, np.pi]],
                            np.float32),
            "f32_rand": rng.normal(size=(3, 4, 5)).astype(np.float32),
            "i32": np.array([-2 ** 31, -1, 0, 2 ** 31 - 1], np.int32),
            "u16": np.array([0, 1, 2 ** 15, 2 ** 16 - 1], np.uint16),
            "u32": np.array([[0, 2 ** 32 - 1], [12345, 2 ** 31]], np.uint32),
            "i64": np.array([-2 ** 63, -1, 2 ** 40 + 3, 2 ** 63 - 1], np.int64),
            "scalar": np.array(2.5, np.float32),
            "empty": np.zeros((0, 3), np.int32),
        }
        path = self.path()
        st.save_file(path, tensors, metadata={"a": "1", "b": "two"})
        f = st.read_file(path)
        self.assertEqual(list(f.tensors), list(tensors))
        self.assertEqual(f.metadata, {"a": "1", "b": "two"})
        for name, want in tensors.items():
            got = f.tensors[name]
            self.assertEqual(got.dtype, want.dtype, name)
            self.assertEqual(got.shape, want.shape, name)
            np.testing.assert_array_equal(got, want, err_msg=name)
        self.assertEqual(np.signbit(f.tensors["f32"][0, 1]), True)
        nan = np.array([np.nan], np.float32)
        st.save_file(path, {"nan": nan})
        self.assertTrue(np.isnan(st.load_file(path)["nan"][0]))

    def test_bf16_exact_values(self):
        vals = np.array([[1.0, -2.0, 3.140625, 0.0], [1e-3, 65280.0, -np.inf, 2.0 ** -130]],
                        np.float32)
        exact = st.bf16_bits_to_f32(st.f32_to_bf16_bits(vals))  # representable set
        path = self.path()
        st.save_file(path, {"w": exact}, dtypes={"w": "BF16"})
        f = st.read_file(path)
        self.assertEqual(f.dtypes["w"], "BF16")
        self.assertEqual(f.tensors["w"].dtype, np.float32)
        np.testing.assert_array_equal(f.tensors["w"], exact)
        np.testing.assert_array_equal(exact[0, :3], vals[0, :3])
        with open(path, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
        self.assertEqual(os.path.getsize(path) - 8 - n, 8 * 2)  # 2 bytes per element

    def test_bf16_rounding_and_raw_bits(self):
        bits = lambda *v: st.f32_to_bf16_bits(np.array(v, np.float32)).tolist()
        self.assertEqual(bits(1.0, -1.0, 3.140625), [0x3F80, 0xBF80, 0x4049])
        self.assertEqual(bits(1 + 2 ** -8), [0x3F80])             # tie -> even (down)
        self.assertEqual(bits(1 + 3 * 2 ** -8), [0x3F82])         # tie -> even (up)
        self.assertEqual(bits(1 + 2 ** -8 + 2 ** -20), [0x3F81])  # above the tie
        self.assertEqual(bits(np.inf), [0x7F80])
        self.assertEqual(bits(3.4e38), [0x7F80])                  # rounds to inf
        self.assertTrue(np.isnan(st.bf16_bits_to_f32(bits(np.nan))[0]))
        path = self.path()
        st.save_file(path, {"r": np.array([0x3F80, 0xC000], np.uint16)}, dtypes={"r": "BF16"})
        np.testing.assert_array_equal(st.load_file(path)["r"], [1.0, -2.0])

    def test_refuses_to_write_unsupported_numpy_dtype(self):
        with self.assertRaisesRegex(ValueError, "float64"):
            st.save_file(self.path(), {"x": np.zeros(2)})


class TestRejects(FileCase):
    GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    DATA = struct.pack("<ff", 1.0, 2.0)

    def assertRejected(self, blob, *phrases):
        path = self.write(blob)
        with self.assertRaises(ValueError) as ctx:
            st.load_file(path)
        msg = str(ctx.exception)
        self.assertIn(path, msg)
        for phrase in phrases:
            self.assertIn(phrase, msg)
        return msg

    def test_good_file_is_accepted(self):
        got = st.load_file(self.write(raw_file(self.GOOD, self.DATA)))
        self.assertEqual(list(got), ["a"])
        np.testing.assert_array_equal(got["a"], np.array([1.0, 2.0], np.float32))

    def test_truncated_length_prefix(self):
        self.assertRejected(b"\x10\x00\x00", "truncated", "3 bytes")
        self.assertRejected(b"", "truncated")

    def test_truncated_data(self):
        blob = raw_file(self.GOOD, self.DATA)
        self.assertRejected(blob[:-3], "'a'", "out of range")

    def test_header_length_past_end(self):
        self.assertRejected(raw_file(self.GOOD, self.DATA, header_len=10 ** 6),
                            "header length 1000000", "past the end")
        self.assertRejected(raw_file(self.GOOD, self.DATA, header_len=2 ** 64 - 1),
                            "past the end")

    def test_bad_json(self):
        self.assertRejected(raw_file(b'{"a": {"dtype": "F32",'), "not valid JSON")
        self.assertRejected(raw_file(b"\xff\xfe{}"), "UTF-8")
        self.assertRejected(raw_file(b"[1, 2]"), "JSON object")

    def test_data_offsets_out_of_range(self):
        hdr = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}
        self.assertRejected(raw_file(hdr, self.DATA), "data_offsets [4, 12] out of range",
                            "8 bytes")
        hdr = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}
        self.assertRejected(raw_file(hdr, self.DATA), "out of range")
        hdr = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}}
        self.assertRejected(raw_file(hdr, self.DATA), "out of range")
        hdr = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}}
        self.assertRejected(raw_file(hdr, self.DATA), "two integers")

    def test_data_offsets_do_not_match_shape(self):
        hdr = {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}
        self.assertRejected(raw_file(hdr, self.DATA), "span 8 bytes", "needs 12")

    def test_unknown_dtype(self):
        hdr = {"a": {"dtype": "F8_E4M3", "shape": [8], "data_offsets": [0, 8]}}
        self.assertRejected(raw_file(hdr, self.DATA), "unknown dtype 'F8_E4M3'")

    def test_bad_entries(self):
        self.assertRejected(raw_file({"a": {"dtype": "F32", "shape": [2]}}, self.DATA),
                            "exactly dtype, shape and data_offsets")
        hdr = {"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}
        self.assertRejected(raw_file(hdr, self.DATA), "shape")
        hdr = {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
               "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
        self.assertRejected(raw_file(hdr, self.DATA), "overlap")
        hdr = dict(self.GOOD, __metadata__={"step": 3})
        self.assertRejected(raw_file(hdr, self.DATA), "__metadata__")


if __name__ == "__main__":
    unittest.main()
