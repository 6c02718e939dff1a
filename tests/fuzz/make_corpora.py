#!/usr/bin/env python3
"""Writes the seed corpora of numgap's fuzz targets into corpus/<target>/.

Pure standard library (no numpy), deterministic (zip timestamps are pinned), so
re-running gives identical bytes. Seeds are small on purpose: libFuzzer grows
them; they only need to reach each format's main paths.
"""
import base64
import io
import json
import os
import shutil
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DESCR_SIZE = {"<f4": 4, "<f8": 8, "<f2": 2, "|i1": 1, "|u1": 1, "<i2": 2, "<u2": 2, "<i4": 4, "|b1": 1, "<V2": 2}


def npy(descr, shape, data, fortran=False, version=1, misalign=0):
    """A .npy file as NumPy writes it (data 64-byte aligned), or with the data
    `misalign` bytes past that, as a hand-made header can put it."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    length_bytes = 2 if version == 1 else 4
    unpadded = 8 + length_bytes + len(header) + 1
    header += " " * ((64 - unpadded % 64) % 64 + misalign) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("latin1") + data


def pack(fmt, values):
    return b"".join(struct.pack(fmt, v) for v in values)


def npz(members, compressed, zip64=False):
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = method
            with archive.open(info, "w", force_zip64=zip64) as member:
                member.write(data)
    return out.getvalue()


# ETDump seeds: a FlatBuffer laid out front to back (each vtable just before
# its table, children after their parent so every uoffset points forward),
# from ExecuTorch's public schema (field ids as in include/numgap/io/etdump.hpp).
# A node is ("table", [(field id, fmt, value) or (field id, node)]),
# ("tables", [nodes]), ("scalars", fmt, [values]) or ("string", text).
class _FlatBuffer:
    def __init__(self):
        self.out = bytearray(8)

    def align(self, to):
        self.out += bytes((-len(self.out)) % to)

    def patch(self, at, target):
        self.out[at:at + 4] = struct.pack("<I", target - at)

    def write(self, node):
        kind = node[0]
        if kind in ("scalars", "string"):
            self.align(8)
            at = len(self.out)
            if kind == "string":
                data = node[1].encode()
                self.out += struct.pack("<I", len(data)) + data + b"\0"
            else:
                self.out += struct.pack("<I", len(node[2])) + pack(node[1], node[2])
            return at
        if kind == "tables":
            self.align(8)
            at = len(self.out)
            self.out += struct.pack("<I", len(node[1]))
            slots = len(self.out)
            self.out += bytes(4 * len(node[1]))
            for i, child in enumerate(node[1]):
                self.patch(slots + 4 * i, self.write(child))
            return at
        fields = node[1]
        offsets = [0] * (max((f[0] for f in fields), default=-1) + 1)
        size, placed = 4, []
        for f in fields:
            width = 4 if len(f) == 2 else struct.calcsize("<" + f[1])
            size += (-size) % width
            placed.append(size)
            offsets[f[0]] = size
            size += width
        self.align(8)
        vtable_size = 4 + 2 * len(offsets)
        self.out += bytes((-vtable_size) % 8)
        vtable = len(self.out)
        self.out += struct.pack("<HH", vtable_size, size) + pack("<H", offsets)
        at = len(self.out)
        self.out += struct.pack("<i", at - vtable) + bytes(size - 4)
        for f, where in zip(fields, placed):
            if len(f) == 3:
                self.out[at + where:at + where + struct.calcsize("<" + f[1])] = struct.pack("<" + f[1], f[2])
        for f, where in zip(fields, placed):
            if len(f) == 2:
                self.patch(at + where, self.write(f[1]))
        return at


def etdump(runs, size_prefixed=True):
    """An ETDump file: runs are (name, [event node]); the runtime writes it size-prefixed."""
    root = ("table", [(0, "I", 0), (1, ("tables", [
        ("table", [(0, ("string", name)), (3, ("tables", events))]) for name, events in runs]))])
    builder = _FlatBuffer()
    builder.out[4:8] = b"ED00"
    builder.patch(0, builder.write(root))
    body = bytes(builder.out)
    return struct.pack("<I", len(body)) + body if size_prefixed else body


def et_tensor(scalar_type, sizes, offset, strides=None):
    fields = [(0, "b", scalar_type), (1, ("scalars", "<q", sizes)), (3, "q", offset)]
    if strides is not None:
        fields.append((2, ("scalars", "<q", strides)))
    return ("table", fields)


def et_event(value, name=None, delegate_int=None, instruction=None):
    """An Event holding a DebugEvent; value is ("tensor", t), ("list", [t]) or ("int", n)."""
    if value[0] == "tensor":
        entry = ("table", [(0, "b", 5), (1, value[1])])
    elif value[0] == "list":
        entry = ("table", [(0, "b", 6), (2, ("table", [(0, ("tables", value[1]))]))])
    else:
        entry = ("table", [(0, "b", 1), (3, ("table", [(0, "q", value[1])]))])
    fields = [(2, entry)]
    if instruction is not None:
        fields.append((1, "i", instruction))
    if delegate_int is not None:
        fields.append((3, "i", delegate_int))
    if name is not None:
        fields.append((5, ("string", name)))
    return ("table", [(2, ("table", fields))])


def two_runs(files):
    """The two_runs target's input: "@@ <path>\\n" before each file's bytes."""
    return b"\n".join(b"@@ " + path.encode() + b"\n" + data for path, data in files)


def graph(nodes, tensors=None, **extra):
    document = {"version": 1, "nodes": nodes}
    if tensors is not None:
        document["tensors"] = tensors
    document.update(extra)
    return json.dumps(document, indent=1).encode()


def safetensors(entries, metadata=None, pad_header=0):
    """A safetensors file: entries are (key, dtype, shape, data bytes), laid out in order."""
    header, offset, blob = {}, 0, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for key, dtype, shape, data in entries:
        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blob += data
    text = json.dumps(header, separators=(",", ":")).encode() + b" " * pad_header
    return struct.pack("<Q", len(text)) + text + blob


def polygraphy(runners, encode="lazy"):
    """A Polygraphy RunResults JSON: runners are (name, [iteration outputs {name: npy bytes}])."""
    def array(data):
        if encode == "latin1":
            return {"array": data.decode("latin-1"), "__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"}
        plain = {"array": base64.b64encode(data).decode(), "polygraphy_class": "ndarray"}
        return {"values": plain, "polygraphy_class": "LazyArray"} if encode == "lazy" else plain
    lst = [[name, [{"outputs": {k: array(v) for k, v in outputs.items()}, "runtime": 0.001, "runner_name": name,
                    "polygraphy_class": "IterationResult"} for outputs in iterations]] for name, iterations in runners]
    return json.dumps({"lst": lst, "polygraphy_class": "RunResults"}, indent=4).encode()


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)

    f32 = pack("<f", [0.5, -1.25, 2.0, 3.5])
    f32_other = pack("<f", [0.5, -1.0, 2.0, 3.0])
    f16 = pack("<e", [0.5, -1.25, 2.0, 3.5, 65504.0, 6e-8])
    special = pack("<d", [float("nan"), float("inf"), float("-inf"), -0.0, 1e-310, 1.0])

    npys = {
        "f4_vector.npy": npy("<f4", [4], f32),
        "f2_fortran.npy": npy("<f2", [2, 3], f16, fortran=True),
        "f8_special.npy": npy("<f8", [3, 2], special),
        "i1_scalar.npy": npy("|i1", [], b"\xfe"),
        "u1_empty.npy": npy("|u1", [2, 0], b""),
        "b1_matrix.npy": npy("|b1", [2, 2], b"\x00\x01\x01\x00"),
        "i4_rank3.npy": npy("<i4", [1, 2, 2], pack("<i", [1, -2, 2**31 - 1, -2**31])),
        "u2_v2.npy": npy("<u2", [3], pack("<H", [0, 1, 65535]), version=2),
        "i2_v3.npy": npy("<i2", [2], pack("<h", [-32768, 7]), version=3),
        "bf16_opaque.npy": npy("<V2", [2, 2], pack("<H", [0x3f80, 0xbf80, 0x7fc0, 0x0001])),
        # Data at an odd offset: typed loads from it would be misaligned (a finding of the npy target).
        "f8_misaligned.npy": npy("<f8", [3, 2], special, misalign=1),
        # Finite float64 values near the largest: their mean came out -Inf (a finding of the npy target).
        "f8_near_max.npy": npy("<f8", [3, 2], pack("<d", [6.741349255736239e307, -1.487016908477783e284,
                                                          3.4756671983726453e-152, 6.013470016999068e-154,
                                                          9.9999999999945e-311, 1.0])),
    }
    for name, data in npys.items():
        write("npy", name, data)

    write("npz", "stored.npz", npz([("a.npy", npys["f4_vector.npy"]), ("b.npy", npys["i4_rank3.npy"])], False))
    write("npz", "deflated.npz", npz([("a.npy", npys["f2_fortran.npy"]), ("dir/b.npy", npys["b1_matrix.npy"])], True))
    write("npz", "zip64.npz", npz([("x.npy", npys["f8_special.npy"])], True, zip64=True))
    write("npz", "other_member.npz", npz([("readme.txt", b"not a tensor"), ("z.npy", npys["bf16_opaque.npy"])], False))
    write("npz", "long_stream.npz", npz([("long.npy", npy("<f4", [256], pack("<f", [i % 7 for i in range(256)])))], True))

    jsons = {
        "object.json": b'{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
        "numbers.json": b"[0, -0, 1.5, -2.5e-3, 1E+2, 9007199254740993, 18446744073709551616, 1e308, 5e-324]",
        "escapes.json": b'["\\"\\\\\\/\\b\\f\\n\\r\\t", "\\u0000\\u001f\\u00e9\\ud83d\\ude00", "\xc3\xa9\xe2\x82\xac"]',
        "nested.json": b"[[[[[[[[{}]]]]]]]]",
        "bom.json": b'\xef\xbb\xbf {"x" : "y" }\n',
        "string.json": b'"plain"',
    }
    for name, data in jsons.items():
        write("json", name, data)

    chain = [
        {"name": "conv1", "op": "aten.convolution.default", "inputs": ["x"], "debug_handles": [1]},
        {"name": "relu1", "op": "aten.relu.default", "inputs": ["conv1"], "debug_handles": [2]},
        {"name": "add", "op": "aten.add.Tensor", "inputs": ["relu1", "x"], "debug_handles": [3, 4]},
    ]
    graphs = {
        "chain.json": graph(chain),
        "tensors.json": graph(chain, {
            "conv1": {"file": "out/conv1.raw", "dtype": "uint8", "shape": [1, 2, 2, 3], "axis_order": [0, 2, 3, 1],
                      "scale": 0.0235, "zero_point": 128},
            "relu1": {"dtype": "int8", "shape": [1, 3, 2, 2], "scale": [0.1, 0.2, 0.3], "zero_point": [0, 1, -1],
                      "quant_axis": 1},
            "x": {"dtype": "bfloat16"}}),
        "outputs.json": graph([
            {"name": "split", "op": "aten.split.Tensor", "inputs": ["x"], "outputs": ["split.0", "split.1"]},
            {"name": "cat", "op": "aten.cat.default", "inputs": ["split.1", "split.0"], "metadata": {"k": [1]}},
            {"name": "sink", "op": "aten.sum.default", "inputs": ["cat"], "outputs": []},
        ], metadata={"model": "m", "values": [1.5, None]}),
        "names.json": graph([
            {"name": "model/layer.0/Conv_1", "op": "Conv", "inputs": ["input:x"]},
            {"name": "model.layer.0.conv", "op": "aten.conv2d.default", "inputs": ["model/layer.0/Conv_1"]},
            {"name": "x", "op": "", "inputs": []},
        ]),
        "no_nodes.json": graph([], {"a": {}, "b": {"file": "b.bin", "dtype": "float16", "shape": [2]}}),
        # Tensor-parallel shards (io/sharded_tensor.hpp): out of order, a negative axis, a declared shape.
        "shards.json": graph([{"name": "w"}], {
            "w": {"shards": [{"file": "w.1.npy", "axis": -1, "offset": 3}, {"file": "w.0.npy", "axis": -1, "offset": 0}]},
            "q": {"dtype": "uint8", "shape": [2, 4], "scale": [0.1, 0.2, 0.3, 0.4], "quant_axis": 1,
                  "shards": [{"file": "q.0.raw", "axis": 1, "offset": 0}, {"file": "q.1.raw", "axis": 1, "offset": 1}]}}),
    }
    for name, data in graphs.items():
        write("graph_json", name, data)

    small = [{"name": "a", "op": "aten.relu.default", "inputs": ["x"]},
             {"name": "b", "op": "aten.add.Tensor", "inputs": ["a", "x"]}]
    write("two_runs", "npy_pair.txt", two_runs([
        ("ref/graph.json", graph(small)),
        ("ref/x.npy", npy("<f4", [4], f32)), ("ref/a.npy", npy("<f4", [4], f32)),
        ("ref/b.npy", npy("<f4", [2, 2], f32)),
        ("target/graph.json", graph(small)),
        ("target/x.npy", npy("<f4", [4], f32)), ("target/a.npy", npy("<f2", [4], f16[:8])),
        ("target/b.npy", npy("<f4", [2, 2], f32_other)),
    ]))
    write("two_runs", "quantized_raw.txt", two_runs([
        ("ref/graph.json", graph(small)),
        ("ref/x.npy", npy("<f4", [4], f32)), ("ref/a.npy", npy("<f4", [1, 2, 2, 1], f32)),
        ("target/graph.json", graph([{"name": "a", "op": "aten.relu.default", "inputs": ["x"]},
                                     {"name": "b_fused", "op": "aten.add.Tensor", "inputs": ["a", "x"]}],
                                    {"a": {"file": "out/a.raw", "dtype": "uint8", "shape": [1, 2, 1, 2],
                                           "axis_order": [0, 2, 3, 1], "scale": 0.5, "zero_point": 2}})),
        ("target/x.npy", npy("<f4", [4], f32)), ("target/out/a.raw", b"\x03\x00\x06\x09"),
    ]))
    write("two_runs", "sharded.txt", two_runs([
        ("ref/graph.json", graph(small)),
        ("ref/x.npy", npy("<f4", [4], f32)), ("ref/a.npy", npy("<f4", [4], f32)),
        ("ref/b.npy", npy("<f4", [2, 2], f32)),
        ("target/graph.json", graph(small, {"b": {"shards": [{"file": "b.0.npy", "axis": 1, "offset": 0},
                                                             {"file": "b.1.npy", "axis": 1, "offset": 1}]}})),
        ("target/x.npy", npy("<f4", [4], f32)), ("target/a.npy", npy("<f4", [4], f32)),
        ("target/b.0.npy", npy("<f4", [2, 1], f32[:8])), ("target/b.1.npy", npy("<f4", [2, 1], f32_other[:8])),
    ]))
    # The same shards as keys of per-rank safetensors files repeating the key "b".
    write("two_runs", "sharded_keys.txt", two_runs([
        ("ref/graph.json", graph(small)),
        ("ref/x.npy", npy("<f4", [4], f32)), ("ref/a.npy", npy("<f4", [4], f32)),
        ("ref/b.npy", npy("<f4", [2, 2], f32)),
        ("target/graph.json", graph(small, {"b": {"shards": [
            {"file": "rank0/d.safetensors", "key": "b", "axis": 1, "offset": 0},
            {"file": "rank1/d.safetensors", "key": "b", "axis": 1, "offset": 1}]}})),
        ("target/x.npy", npy("<f4", [4], f32)), ("target/a.npy", npy("<f4", [4], f32)),
        ("target/rank0/d.safetensors", safetensors([("b", "F32", [2, 1], f32[:8])])),
        ("target/rank1/d.safetensors", safetensors([("b", "F32", [2, 1], f32_other[:8])])),
    ]))
    write("two_runs", "no_graph.txt", two_runs([
        ("ref/t1.npy", npy("<f8", [3, 2], special)), ("ref/sub/t2.npy", npy("|i1", [2], b"\x01\xff")),
        ("target/t1.npy", npy("<f8", [3, 2], special)), ("target/sub/t2.npy", npy("|i1", [2], b"\x01\x7f")),
    ]))
    write("two_runs", "handles.txt", two_runs([
        ("ref/graph.json", graph([dict(n, outputs=[n["name"]]) for n in chain])),
        ("ref/relu1.npy", npy("<f4", [4], f32)), ("ref/add.npy", npy("<f4", [4], f32)),
        ("target/graph.json", graph([
            {"name": "fused_conv_relu", "op": "qnn.Conv2d", "inputs": ["x"], "debug_handles": [1, 2]},
            {"name": "add_q", "op": "qnn.ElementWiseAdd", "inputs": ["fused_conv_relu", "x"], "debug_handles": [3, 4]}])),
        ("target/fused_conv_relu.npy", npy("<f4", [4], f32_other)), ("target/add_q.npy", npy("<f4", [4], f32)),
    ]))
    write("safetensors", "every_dtype.safetensors", safetensors([
        ("f32", "F32", [2, 2], pack("<f", [1.0, -2.5, 0.0, 3.0])),
        ("f16", "F16", [3], pack("<e", [1.0, -0.5, 65504.0])),
        ("bf16", "BF16", [2], bytes([0x80, 0x3f, 0x00, 0xc0])),
        ("f64", "F64", [1], pack("<d", [1e-300])),
        ("i8", "I8", [4], bytes([0, 127, 128, 255])),
        ("u8", "U8", [2], bytes([0, 255])),
        ("i16", "I16", [1], pack("<h", [-3])),
        ("u16", "U16", [1], pack("<H", [65535])),
        ("i32", "I32", [1], pack("<i", [-7])),
        ("bool", "BOOL", [2], bytes([0, 1])),
    ], metadata={"format": "pt"}))
    write("safetensors", "scalar_empty.safetensors", safetensors([
        ("scalar", "F32", [], pack("<f", [4.0])), ("empty", "F32", [0, 3], b"")]))
    write("safetensors", "unsupported.safetensors", safetensors([
        ("fp8", "F8_E4M3", [2], bytes([0x38, 0xb8])), ("i64", "I64", [1], pack("<q", [5]))]))
    write("safetensors", "padded_misaligned.safetensors", safetensors([
        ("odd", "U8", [1], b"x"), ("f32", "F32", [2], pack("<f", [1.0, 2.0]))], pad_header=3))
    small = npy("<f4", [2], pack("<f", [1.0, -2.0]))
    write("polygraphy_json", "two_runners.json", polygraphy([
        ("onnxrt-runner-N0", [{"x": small, "y": npy("<f2", [1], pack("<e", [0.5]))}]),
        ("trt-runner-N0", [{"x": small}, {"x": npy("|u1", [3], b"abc")}])]))
    write("polygraphy_json", "plain_ndarray.json", polygraphy([("r", [{"x": small}])], encode="plain"))
    write("polygraphy_json", "latin1.json", polygraphy([("r", [{"x": small}])], encode="latin1"))
    # ETDump: the fuzz target uses the file itself as the debug buffer, so
    # offsets point into the file (small offsets land in its first bytes).
    write("etdump", "every_kind.etdp", etdump([("forward", [
        et_event(("tensor", et_tensor(6, [2], 0)), name="conv"),
        et_event(("list", [et_tensor(0, [4], 8), et_tensor(15, [2], 16)]), name="split"),
        et_event(("int", 3), instruction=2),
        et_event(("tensor", et_tensor(5, [1, 2, 1, 2], 0, [4, 1, 4, 2])), delegate_int=7),
        et_event(("tensor", et_tensor(4, [1], 0)), instruction=4),
        et_event(("tensor", et_tensor(6, [0], -1))),
        et_event(("tensor", et_tensor(6, [1], 4)), name="conv"),
    ])]))
    write("etdump", "two_runs.etdp", etdump([
        ("warmup", [et_event(("tensor", et_tensor(3, [2], 0)), name="x")]),
        ("measured", [et_event(("tensor", et_tensor(11, [3], 1)), name="x")]),
    ]))
    write("etdump", "plain.etdp", etdump([("r", [et_event(("tensor", et_tensor(7, [1], 0)), name="d")])],
                                         size_prefixed=False))
    # QNN model JSON: the fuzz target's raw folder holds empty.raw (0 bytes),
    # t.raw (1), x.raw (12) and conv_out.raw (48).
    def qnn(tensors):
        return json.dumps({"model.cpp": "m.cpp", "graph": {"nodes": {}, "tensors": tensors}}, indent=1).encode()
    write("qnn_net_json", "float_nhwc.json", qnn({
        "x": {"id": 0, "dims": [1, 1, 1, 3], "data_type": 562, "axis_format": "NHWC", "src_axis_format": "NCHW"},
        "conv/out": {"dims": [1, 2, 2, 3], "data_type": "QNN_DATATYPE_FLOAT_32", "axis_format": "NHWC"},
        "empty": {"dims": [0, 3], "data_type": 534}}))
    write("qnn_net_json", "quantized.json", qnn({
        "t": {"dims": [1], "data_type": 1032, "axis_format": "ANY",
              "quant_params": {"definition": 1, "encoding": 0, "scale_offset": {"scale": 0.5, "offset": -128}}},
        "x": {"dims": [12], "data_type": 776, "quant_params": {"scale_offset": {"scale": 0.25, "offset": 3}}},
        "conv_out": {"dims": [3, 4], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 1.0, "offset": 0}}}}))
    write("qnn_net_json", "per_axis.json", qnn({
        "x": {"dims": [1, 2, 2, 3], "data_type": 1032, "axis_format": "NHWC",
              "quant_params": {"definition": 1, "encoding": 1, "axis_scale_offset": {"axis": 3, "num_scale_offsets": 3,
                  "scale_offsets": [{"bitwidth": 8, "scale": 0.5, "offset": -128}, {"bitwidth": 8, "scale": 0.25, "offset": 0},
                                    {"bitwidth": 8, "scale": 2.0, "offset": -3}]}}},
        "conv_out": {"dims": [4, 12], "data_type": 776, "quant_params": {"encoding": 3,
                     "bw_axis_scale_offset": {"bitwidth": 4, "axis": 0, "num_elements": 4, "scales": [0.5, 1.0, 1.5, 2.0],
                                              "offsets": [0, -1, -2, -3]}}},
        "t": {"dims": [1], "data_type": 1032, "quant_params": {"encoding": 2, "bw_scale_offset": {"bitwidth": 4, "scale": 0.125, "offset": -8}}}}))
    write("qnn_net_json", "unsupported.json", qnn({
        "x": {"dims": [12], "data_type": 1032, "quant_params": {"encoding": 5, "blockwise_expansion": {"axis": 0, "block_size": 4}}},
        "conv_out": {"dims": [96], "data_type": 772},
        "t": {"dims": [1], "data_type": 1032, "quant_params": {"encoding": "QNN_QUANTIZATION_ENCODING_UNDEFINED"}},
        "conv.out": {"dims": [12], "data_type": 562}}))

    # Partial reports of `numgap compare --shard`: a -> b -> c, two groups and
    # an unmatched node, one failing with an error location; and the second
    # shard of two (merging it alone is refused: shard 0 is missing).
    def partial_row(source, index, ref, target, status, metrics, error=None):
        return {"from": source, "index": index, "ref_nodes": ref, "target_nodes": target,
                "ref_tensor": ref[0] if ref else "", "target_tensor": target[0] if target else "",
                "kind": "one_to_one" if source == "group" else "", "strategy": "name" if source == "group" else "",
                "confidence": 1 if source == "group" else None, "ambiguous_with": [], "repair": "none",
                "fails_every_candidate": False, "op": "relu", "shape": [4], "dtype_ref": "float32",
                "dtype_target": "float32", "quant_ref": "", "quant_target": "", "count": 4, "metrics": metrics,
                "status": status, "message": "", "error": error}
    def partial(shard, shards, owned, rows):
        return json.dumps({"format": "numgap-partial-report", "format_version": 1, "shard": shard,
                           "shards": shards, "fingerprint": "0123456789abcdef", "match_groups": 2,
                           "target_nodes": 3, "shard_bytes": 64, "metrics": ["cosine", "atol"],
                           "reference_graph": [{"name": "a", "op": "input", "producers": []},
                                               {"name": "b", "op": "relu", "producers": [0]},
                                               {"name": "c", "op": "add", "producers": [0, 1]}],
                           "owned_groups": owned, "rows": rows}).encode()
    cosine = {"name": "cosine", "value": -1, "comparison": ">=", "threshold": 0.99, "passed": False}
    atol = {"name": "atol", "value": "inf", "comparison": "", "threshold": None, "passed": True}
    write("partial_report", "whole.json", partial(0, 1, [0, 1], [
        partial_row("group", 0, ["a"], ["a"], "pass", [dict(cosine, value=1, passed=True), atol]),
        partial_row("group", 1, ["b"], ["b"], "fail", [cosine, dict(atol, value="nan")]),
        partial_row("unmatched_ref", 2, ["c"], [], "unmatched", []),
        partial_row("unmatched_target", 2, [], ["c2"], "error", [],
                    {"kind": "format", "file": "c2.npy", "item": "c2", "offset": 8, "line": 1, "column": 2})]))
    write("partial_report", "second_of_two.json", partial(1, 2, [1], [
        partial_row("group", 1, ["b"], ["b"], "fail", [cosine, atol])]))

    # A name that every writer must escape: formula lead, ESC, NUL, CR/LF, bidi
    # override, quote, comma, backslash.
    hostile = '=cmd|"a,b"\\\x1b[31m\x00\r\n\u202eend'
    hostile_graph = graph([{"name": hostile, "op": "aten.relu.default", "inputs": ["x"]}],
                          {hostile: {"file": "h.npy"}})
    write("two_runs", "hostile_name.txt", two_runs([
        ("ref/graph.json", hostile_graph), ("ref/h.npy", npy("<f4", [4], f32)), ("ref/x.npy", npy("<f4", [4], f32)),
        ("target/graph.json", hostile_graph), ("target/h.npy", npy("<f4", [4], f32_other)),
        ("target/x.npy", npy("<f4", [4], f32)),
    ]))


if __name__ == "__main__":
    main()
