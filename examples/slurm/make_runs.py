#!/usr/bin/env python3
"""Writes a reference and a target run directory for trying sharded comparisons
(numgap compare --shard I/N, numgap merge), with no dependency beyond Python.

The graph is a chain with fan-out (node i reads i-1 and i/2), tensor sizes vary
(so shards are balanced by bytes, not by count), and the target diverges at a
few nodes: some are error origins, the ones right after them propagate.
Usage: make_runs.py DIR [--nodes N] [--max-elements M] [--seed S]
"""
import argparse
import json
import os
import random
import struct


def write_npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        out.write(struct.pack("<%df" % len(values), *values))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--max-elements", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    diverging = {args.nodes // 7, args.nodes // 7 + 1, args.nodes // 2, (4 * args.nodes) // 5}
    nodes = []
    for i in range(args.nodes):
        inputs = ([f"t{i - 1}"] if i > 0 else []) + ([f"t{i // 2}"] if i > 3 and i // 2 != i - 1 else [])
        nodes.append({"name": f"layer{i}", "op": ["conv", "relu", "add", "matmul"][i % 4],
                      "inputs": inputs, "outputs": [f"t{i}"]})
    for side in ("reference", "target"):
        os.makedirs(os.path.join(args.dir, side), exist_ok=True)
        with open(os.path.join(args.dir, side, "graph.json"), "w") as out:
            json.dump({"nodes": nodes}, out)
    for i in range(args.nodes):
        values = [rng.uniform(-1, 1) for _ in range(rng.randint(1, args.max_elements))]
        write_npy(os.path.join(args.dir, "reference", f"t{i}.npy"), values)
        if i in diverging:
            values = [-v for v in values]
        write_npy(os.path.join(args.dir, "target", f"t{i}.npy"), values)


if __name__ == "__main__":
    main()
