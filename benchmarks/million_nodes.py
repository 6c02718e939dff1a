#!/usr/bin/env python3
"""Million-node benchmark of `numgap compare` (issue 13, item 1).

Generates a reference and a target run directory whose graph.json lists N
nodes, each dumping one small float32 tensor (16 elements), then times `numgap compare REF TARGET` and reads its peak RSS (wait4),
without reports and with --json and --csv. CPU time (user + system, from
wait4) is reported beside wall time: on a shared, loaded machine it says more
about numgap than the wall clock does. Two graph shapes:

  chain    node i reads node i-1's output; names layer0000000, ...; the target
           has the same names (matched by name);
  fanout   transformer-like blocks (a norm feeding q/k/v projections, residual
           adds, a gated MLP): fan-out and fan-in, dotted names, one debug
           handle per node; the target's names are rewritten QNN-style
           (separators to '_', an '_output_0' suffix), so only the handles
           match them (match_auto picks handles).

Two ways to store the tensors (--storage):

  npy          one .npy file per tensor (a directory of 2N files in all);
  safetensors  one tensors.safetensors file per run holding every tensor under
               its node's name, beside graph.json (a run directory reads the
               keys of every .safetensors file in it); split into
               tensors-00001.safetensors, ... where one header would pass the
               format's 100 MB (the 10^6 fan-out target).

One target tensor in every 1000 (at least one) is perturbed, so the report has
failing groups, a first divergence and origins to summarise.

Generation writes the .npy bytes directly (one header for all files), so it
takes about a minute per million files on a 2-core VM; --keep reuses data of
the same parameters. Usage:

  python3 benchmarks/million_nodes.py --numgap build/examples/numgap --nodes 10000 100000 1000000
  python3 benchmarks/million_nodes.py --shape fanout --nodes 1000000 --keep

No NumPy needed. Reports wall seconds, peak RSS and the load average.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time

ELEMENTS = 16


def npy_bytes(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    # magic + version + length + header + newline, padded to a multiple of 64
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(
        "<%df" % len(values), *values)


def tensor_variants():
    """A few distinct reference tensors, their near-equal targets and one broken target."""
    references, targets = [], []
    for v in range(8):
        values = [((i * 37 + v * 11) % 17 - 8) / 4.0 for i in range(ELEMENTS)]
        references.append(npy_bytes(values))
        targets.append(npy_bytes([x + 1e-6 * ((i % 3) - 1) for i, x in enumerate(values)]))
    broken = npy_bytes([-x + 0.5 for x in [((i * 37) % 17 - 8) / 4.0 for i in range(ELEMENTS)]])
    return references, targets, broken


BLOCK = ["input_layernorm", "q_proj", "k_proj", "v_proj", "attention", "o_proj", "residual_add",
         "post_attention_layernorm", "gate_proj", "up_proj", "act_mul", "down_proj", "mlp_add"]


def fanout_nodes(count):
    """Transformer-like nodes: (name, op, input names). Blocks of 13 nodes, cut at `count`."""
    nodes = []
    block_input = "embed"
    nodes.append(("embed", "aten.embedding.default", []))
    layer = 0
    while len(nodes) < count:
        p = f"model.layers.{layer}."
        inputs = {
            "input_layernorm": [block_input],
            "q_proj": [p + "input_layernorm"], "k_proj": [p + "input_layernorm"], "v_proj": [p + "input_layernorm"],
            "attention": [p + "q_proj", p + "k_proj", p + "v_proj"],
            "o_proj": [p + "attention"],
            "residual_add": [block_input, p + "o_proj"],
            "post_attention_layernorm": [p + "residual_add"],
            "gate_proj": [p + "post_attention_layernorm"], "up_proj": [p + "post_attention_layernorm"],
            "act_mul": [p + "gate_proj", p + "up_proj"],
            "down_proj": [p + "act_mul"],
            "mlp_add": [p + "residual_add", p + "down_proj"],
        }
        ops = {"input_layernorm": "aten.rms_norm.default", "post_attention_layernorm": "aten.rms_norm.default",
               "attention": "aten.scaled_dot_product_attention.default", "act_mul": "aten.mul.Tensor",
               "residual_add": "aten.add.Tensor", "mlp_add": "aten.add.Tensor"}
        for part in BLOCK:
            if len(nodes) == count:
                break
            nodes.append((p + part, ops.get(part, "aten.linear.default"), inputs[part]))
        block_input = p + "mlp_add"
        layer += 1
    return nodes


def qnn_name(name):
    return name.replace(".", "_") + "_output_0"


# The safetensors format caps a header at 100 MB (numgap and the reference
# implementation refuse more); a run whose keys need more is split into
# several files, as large checkpoints are.
MAX_HEADER_BYTES = 90_000_000


def write_safetensors(path, header, data):
    """One safetensors file: `header` maps each key to its entry, `data` holds the bytes in order."""
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(b"".join(data))


def write_safetensors_files(directory, entries, payloads):
    """Every payload's float32 data under its entry's name: tensors.safetensors, or
    tensors-00001.safetensors, ... when one header would pass MAX_HEADER_BYTES."""
    files, header, data, offset, header_bytes = [], {}, [], 0, 2
    for name, payload in zip(entries, payloads):
        values = payload[len(payload) - 4 * ELEMENTS:]  # the .npy data follows its header
        entry = {"dtype": "F32", "shape": [ELEMENTS], "data_offsets": [offset, offset + len(values)]}
        size = len(json.dumps({name: entry}, separators=(",", ":")))
        if header and header_bytes + size > MAX_HEADER_BYTES:
            files.append((header, data))
            header, data, offset, header_bytes = {}, [], 0, 2
            entry["data_offsets"] = [0, len(values)]
        header[name] = entry
        header_bytes += size
        offset += len(values)
        data.append(values)
    files.append((header, data))
    for i, (file_header, file_data) in enumerate(files):
        name = "tensors.safetensors" if len(files) == 1 else f"tensors-{i + 1:05d}.safetensors"
        write_safetensors(os.path.join(directory, name), file_header, file_data)


def write_run(directory, entries, payloads, graph, storage):
    os.makedirs(directory, exist_ok=True)
    if storage == "safetensors":
        write_safetensors_files(directory, entries, payloads)
        entries = []
    for name, payload in zip(entries, payloads):
        fd = os.open(os.path.join(directory, name + ".npy"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, payload)
        os.close(fd)
    with open(os.path.join(directory, "graph.json"), "w") as f:
        json.dump(graph, f, separators=(",", ":"))


def generate(directory, count, shape, storage):
    references, targets, broken = tensor_variants()
    broken_every = min(1000, count)
    if shape == "chain":
        names = [f"layer{i:07d}" for i in range(count)]
        ref_nodes = [{"name": n, "op": "aten.add.Tensor", **({"inputs": [names[i - 1]]} if i else {})}
                     for i, n in enumerate(names)]
        tgt_nodes, tgt_names = ref_nodes, names
    else:
        spec = fanout_nodes(count)
        names = [n for n, _, _ in spec]
        ref_nodes = [{"name": n, "op": op, "inputs": ins, "debug_handles": [i + 1]}
                     for i, (n, op, ins) in enumerate(spec)]
        tgt_names = [qnn_name(n) for n in names]
        tgt_nodes = [{"name": qnn_name(n), "op": op.split(".")[1], "inputs": [qnn_name(x) for x in ins],
                      "debug_handles": [i + 1]} for i, (n, op, ins) in enumerate(spec)]
    ref_payloads = (references[i % 8] for i in range(count))
    tgt_payloads = (broken if i % broken_every == broken_every // 2 else targets[i % 8] for i in range(count))
    children = []
    for side, entries, payloads, nodes in (("reference", names, ref_payloads, ref_nodes),
                                           ("target", tgt_names, tgt_payloads, tgt_nodes)):
        pid = os.fork()
        if pid == 0:
            write_run(os.path.join(directory, side), entries, payloads, {"version": 1, "nodes": nodes}, storage)
            os._exit(0)
        children.append(pid)
    for pid in children:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit("generation failed")


def run_child(command):
    """Runs a command; returns (seconds, CPU seconds, peak RSS in MiB, exit status)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    return (time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0,
            os.waitstatus_to_exitcode(status))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numgap", default="build/examples/numgap", help="path to the numgap binary")
    parser.add_argument("--dir", default="/tmp/numgap_million", help="where the run directories go")
    parser.add_argument("--nodes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--shape", choices=["chain", "fanout"], default="chain")
    parser.add_argument("--storage", choices=["npy", "safetensors"], default="npy",
                        help="one .npy file per tensor, or one safetensors file per run")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="reuse existing data of the same parameters")
    parser.add_argument("--no-reports", action="store_true", help="skip the run with --json and --csv")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more numgap compare arguments")
    args = parser.parse_args()

    rows = []
    for count in args.nodes:
        suffix = "" if args.storage == "npy" else "-" + args.storage
        directory = os.path.join(args.dir, f"{args.shape}-{count}{suffix}")
        params_path = os.path.join(directory, "params.json")
        wanted = {"nodes": count, "shape": args.shape, "elements": ELEMENTS, "storage": args.storage, "version": 1}
        have = json.load(open(params_path)) if os.path.exists(params_path) else {}
        if not (args.keep and have == wanted):
            subprocess.run(["rm", "-rf", directory], check=True)
            start = time.perf_counter()
            generate(directory, count, args.shape, args.storage)
            with open(params_path, "w") as f:
                json.dump(wanted, f)
            print(f"generated {args.shape} ({args.storage}) with {count} nodes in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr)
        reference, target = os.path.join(directory, "reference"), os.path.join(directory, "target")
        subprocess.run(["cat", os.path.join(reference, "graph.json"), os.path.join(target, "graph.json")],
                       stdout=subprocess.DEVNULL)
        variants = [("no reports", [])]
        if not args.no_reports:
            variants.append(("--json --csv", ["--json", os.path.join(directory, "report.json"),
                                               "--csv", os.path.join(directory, "report.csv")]))
        for label, extra in variants:
            command = [args.numgap, "compare", reference, target] + extra + args.extra
            run_child(command)  # warm the page cache (directory entries, inodes, data)
            best = None
            for _ in range(args.repeat):
                seconds, cpu, rss, status = run_child(command)
                if status not in (0, 1):
                    sys.exit(f"numgap failed with exit status {status}: {' '.join(command)}")
                if best is None or cpu < best[1]:
                    best = (seconds, cpu, rss)
            rows.append((count, label, *best, os.getloadavg()[0]))
            print(f"{args.shape} {args.storage} {count} {label}: {best[0]:.2f} s, {best[1]:.2f} s CPU, {best[2]:.0f} MiB",
                  file=sys.stderr)

    print(f"\n{args.shape}, {args.storage}, warm page cache, {os.cpu_count()} CPUs, best of {args.repeat} (by CPU time)\n")
    print("| nodes | reports | wall s | CPU s (user+sys) | peak RSS (MiB) | CPU µs per node | load average |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for count, label, seconds, cpu, rss, load in rows:
        print(f"| {count} | {label} | {seconds:.2f} | {cpu:.2f} | {rss:.0f} | {cpu / count * 1e6:.1f} | {load:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
