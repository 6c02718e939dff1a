#!/usr/bin/env python3
"""Regenerates the io test fixtures in this folder (run from anywhere with numpy installed).

Every value is a formula the C++ tests recompute, so nothing is compared against
hard-coded output of this script. Deterministic: re-running gives identical bytes
(zip timestamps are pinned).
"""
import io
import os
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(*parts):
    full = os.path.join(HERE, *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def lcg_bytes(count):
    """uint8 values (state >> 16) & 15 of the LCG x = x * 1103515245 + 12345 mod 2^31, seed 12345,
    with elements 40000..49999 replaced by a 100-byte period (so the stream has long matches)."""
    out = np.empty(count, dtype=np.uint8)
    state = 12345
    for i in range(count):
        state = (state * 1103515245 + 12345) % (1 << 31)
        out[i] = (state >> 16) & 15
    out[40000:50000] = out[:100][np.arange(10000) % 100]
    return out


def geometric_bytes(count):
    """Byte i = trailing zero bits of (x >> 8) | 2^20 for the same LCG: value k has probability
    2^-(k+1), so the Huffman codes for rare values are longer than 10 bits."""
    out = bytearray(count)
    state = 12345
    for i in range(count):
        state = (state * 1103515245 + 12345) % (1 << 31)
        word = (state >> 8) | (1 << 20)
        out[i] = (word & -word).bit_length() - 1
    return bytes(out)


def write_with_descr(file_name, descr, shape, raw):
    """A .npy with an arbitrary descr (NumPy itself would refuse to write it)."""
    with open(path("npy", file_name), "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": shape})
        f.write(raw)


def save_npz(file_name, compression, members):
    """Like np.savez/np.savez_compressed (same zipfile calls) but with pinned timestamps."""
    with zipfile.ZipFile(path("npz", file_name), "w", compression=compression, allowZip64=True) as archive:
        for name, array in members.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = compression
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def main():
    # One file per supported dtype.
    np.save(path("npy", "f4.npy"), (np.arange(12, dtype="<f4") * 0.5 - 2).reshape(3, 4))
    np.save(path("npy", "f8.npy"), (np.arange(6, dtype="<f8") * 0.25 - 0.5).reshape(2, 3))
    np.save(path("npy", "f2.npy"), np.arange(8, dtype="<f2") * np.float16(0.5) - np.float16(1))
    np.save(path("npy", "i1.npy"), np.arange(-4, 4, dtype="i1"))
    np.save(path("npy", "u1.npy"), np.arange(250, 256, dtype="u1"))
    np.save(path("npy", "i2.npy"), np.array([-32768, -1, 0, 32767], dtype="<i2"))
    np.save(path("npy", "u2.npy"), np.array([0, 1, 65535], dtype="<u2"))
    np.save(path("npy", "i4.npy"), np.array([-(2**31), -1, 0, 2**31 - 1], dtype="<i4"))
    np.save(path("npy", "b1.npy"), np.array([True, False, True], dtype="?"))
    # Layouts and header versions.
    np.save(path("npy", "fortran.npy"), np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4)))
    np.save(path("npy", "scalar.npy"), np.array(3.5, dtype="<f4"))
    np.save(path("npy", "empty.npy"), np.zeros((0, 3), dtype="<f4"))
    for version in (2, 3):
        with open(path("npy", "v%d.npy" % version), "wb") as f:
            np.lib.format.write_array(f, np.arange(5, dtype="<f4"), version=(version, 0))
    # Refused or conditional descrs.
    np.save(path("npy", "big_endian.npy"), np.arange(3, dtype=">f4"))
    np.save(path("npy", "int64.npy"), np.arange(3, dtype="<i8"))
    bf16_bits = np.array([0x3F80, 0x4000, 0xC040], dtype="<u2")  # 1.0, 2.0, -3.0
    write_with_descr("bf16_v2.npy", "<V2", (3,), bf16_bits.tobytes())  # what NumPy+ml_dtypes writes
    write_with_descr("native_order.npy", "=f4", (2,), np.array([1.5, -2.5], dtype="<f4").tobytes())

    # Archives.
    a = (np.arange(12, dtype="<f4") * 0.5 - 2).reshape(3, 4)
    nested = np.arange(-4, 4, dtype="i1")
    scalar = np.array(3.5, dtype="<f4")
    save_npz("stored.npz", zipfile.ZIP_STORED, {"a": a, "block/b": nested, "c": scalar})
    save_npz("compressed.npz", zipfile.ZIP_DEFLATED,
             {"big": lcg_bytes(65536), "small": np.arange(10, dtype="<f4"), "c": scalar})
    # ZIP64 end records and directory extra fields, as NumPy writes for archives over 4 GiB,
    # forced on a small archive by lowering zipfile's limits.
    saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 0, 0
    try:
        save_npz("zip64.npz", zipfile.ZIP_STORED, {"a": a, "c": scalar})
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved

    # Raw DEFLATE streams of one source, one per block type.
    source = bytes(lcg_bytes(65536)[:20000] + ord("a"))
    with open(path("inflate", "source.bin"), "wb") as f:
        f.write(source)
    for name, level, strategy in (("stored", 0, zlib.Z_DEFAULT_STRATEGY), ("fixed", 9, zlib.Z_FIXED),
                                  ("dynamic", 9, zlib.Z_DEFAULT_STRATEGY)):
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
        with open(path("inflate", name + ".deflate"), "wb") as f:
            f.write(compressor.compress(source) + compressor.flush())
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_HUFFMAN_ONLY)
    with open(path("inflate", "long_codes.deflate"), "wb") as f:
        f.write(compressor.compress(geometric_bytes(30000)) + compressor.flush())


if __name__ == "__main__":
    main()
