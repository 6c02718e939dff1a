#!/usr/bin/env python3
"""Larger-than-memory benchmark of `numgap compare` (issue 13, item 2).

Generates a reference and a target run directory of float32 tensors whose
sizes are spread log-uniformly over [--min-mb, --max-mb] (deterministic seed)
until both runs together hold --total-gb, with a graph.json chain in each. The
target is the reference plus small noise (one tensor in 100 perturbed more, so
the report has failing groups). Then it times, from the same storage:

  read      both dumps read once, sequentially (8 MiB reads, data discarded);
  numgap    `numgap compare REF TARGET --quiet --threads T`, wall time, CPU
            time and peak RSS (wait4).

With --total-gb above the machine's memory the page cache cannot hold the
data, so both methods read from the disk whatever the cache held before;
--drop-caches (root only) empties the cache before each method as well, so
small sizes can be measured cold too. Peak RSS is what numgap itself keeps
resident: the mapped tensors it is comparing (each worker maps one pair at a
time and unmaps it when done) plus its own tables.

Generation writes .npy files directly from a pool of random numbers (no
per-tensor random draws), about the disk's write speed. Usage:

  python3 benchmarks/larger_than_memory.py --numgap build/examples/numgap --total-gb 64 --dir /big/disk/numgap_ltm
  python3 benchmarks/larger_than_memory.py --numgap build/examples/numgap --total-gb 2 --drop-caches

--keep reuses data generated with the same parameters. Needs NumPy.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time


def npy_header(elements):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % elements
    padding = 64 - (10 + len(header) + 1) % 64
    header += " " * padding + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1")


def tensor_sizes(total_bytes, min_mb, max_mb, seed):
    """Byte sizes (multiples of 4) of one run's tensors, log-uniform in [min_mb, max_mb]."""
    import numpy as np

    rng = np.random.default_rng(seed)
    sizes, remaining = [], total_bytes // 2
    while remaining >= min_mb << 20:
        size = int(math.exp(rng.uniform(math.log(min_mb << 20), math.log(max_mb << 20)))) // 4 * 4
        size = min(size, remaining // 4 * 4)
        sizes.append(size)
        remaining -= size
    return sizes


def generate(directory, sizes, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    pool_elements = max(sizes) // 4 + (1 << 16)
    pool = rng.standard_normal(pool_elements, dtype=np.float32)
    noise = rng.standard_normal(pool_elements, dtype=np.float32) * np.float32(1e-3)
    for side in ("reference", "target"):
        os.makedirs(os.path.join(directory, side), exist_ok=True)
    nodes = []
    for i, size in enumerate(sizes):
        elements = size // 4
        start = int(rng.integers(0, pool_elements - elements + 1))
        reference = pool[start:start + elements] * np.float32(1.0 + (i % 7) * 0.25)
        shift = (start * 7919 + i) % (pool_elements - elements + 1)
        target = reference + noise[shift:shift + elements] * np.float32(30.0 if i % 100 == 99 else 1.0)
        name = f"layer{i:05d}"
        for side, values in (("reference", reference), ("target", target)):
            with open(os.path.join(directory, side, name + ".npy"), "wb") as f:
                f.write(npy_header(elements))
                f.write(values.tobytes())
        nodes.append({"name": name, "op": "aten.linear.default", "inputs": [f"layer{i - 1:05d}"] if i else []})
    for side in ("reference", "target"):
        with open(os.path.join(directory, side, "graph.json"), "w") as f:
            json.dump({"version": 1, "nodes": nodes}, f)


def data_bytes(directory):
    total = 0
    for side in ("reference", "target"):
        for entry in os.scandir(os.path.join(directory, side)):
            if entry.name.endswith(".npy"):
                total += entry.stat().st_size
    return total


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def read_all(directory):
    buffer = bytearray(8 << 20)
    view = memoryview(buffer)
    for side in ("reference", "target"):
        for name in sorted(os.listdir(os.path.join(directory, side))):
            if name.endswith(".npy"):
                with open(os.path.join(directory, side, name), "rb", buffering=0) as f:
                    while f.readinto(view):
                        pass


def memory_total_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numgap", default="build/examples/numgap", help="path to the numgap binary")
    parser.add_argument("--dir", default="/tmp/numgap_larger_than_memory", help="where the run directories go")
    parser.add_argument("--total-gb", type=float, default=1.0, help="tensor data of both runs together")
    parser.add_argument("--min-mb", type=int, default=4)
    parser.add_argument("--max-mb", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="numgap --threads (0: all cores)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--drop-caches", action="store_true", help="empty the page cache before each method (root)")
    parser.add_argument("--keep", action="store_true", help="reuse existing data of the same parameters")
    args = parser.parse_args()

    total_bytes = int(args.total_gb * 1e9)
    wanted = {"total_bytes": total_bytes, "min_mb": args.min_mb, "max_mb": args.max_mb, "seed": 1}
    params_path = os.path.join(args.dir, "params.json")
    have = json.load(open(params_path)) if os.path.exists(params_path) else {}
    if not (args.keep and have == wanted):
        subprocess.run(["rm", "-rf", args.dir], check=True)
        sizes = tensor_sizes(total_bytes, args.min_mb, args.max_mb, seed=1)
        print(f"generating {total_bytes / 1e9:.1f} GB in {len(sizes)} tensor pairs under {args.dir} ...",
              file=sys.stderr)
        start = time.perf_counter()
        generate(args.dir, sizes, seed=1)
        with open(params_path, "w") as f:
            json.dump(wanted, f)
        print(f"generated in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    size = data_bytes(args.dir)
    pairs = sum(1 for n in os.listdir(os.path.join(args.dir, "reference")) if n.endswith(".npy"))
    largest = max(os.path.getsize(os.path.join(args.dir, "reference", n))
                  for n in os.listdir(os.path.join(args.dir, "reference")) if n.endswith(".npy"))

    read_best = None
    for _ in range(args.repeat):
        if args.drop_caches:
            drop_caches()
        start = time.perf_counter()
        read_all(args.dir)
        elapsed = time.perf_counter() - start
        read_best = elapsed if read_best is None else min(read_best, elapsed)

    threads = args.threads or os.cpu_count()
    command = [args.numgap, "compare", os.path.join(args.dir, "reference"), os.path.join(args.dir, "target"),
               "--quiet", "--threads", str(threads)]
    best = None
    for _ in range(args.repeat):
        if args.drop_caches:
            drop_caches()
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            sys.exit(f"numgap failed with exit status {code}: {' '.join(command)}")
        run = (elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0)
        best = run if best is None or run[0] < best[0] else best

    memory = memory_total_bytes()
    print(f"\n{size / 1e9:.1f} GB of tensor data ({pairs} pairs of 4-byte floats, {args.min_mb}-{args.max_mb} MB "
          f"each, largest {largest / 2**20:.0f} MiB), {memory / 2**30:.1f} GiB of memory, {os.cpu_count()} CPUs, "
          f"{'caches dropped before each method' if args.drop_caches else 'page cache as left'}, "
          f"best of {args.repeat}, load average {os.getloadavg()[0]:.1f}\n")
    print("| method | seconds | GB/s | CPU seconds | peak RSS (MiB) | vs read |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| read both dumps once (8 MiB reads) | {read_best:.1f} | {size / 1e9 / read_best:.2f} | - | - | 1.00x |")
    elapsed, cpu, rss = best
    print(f"| numgap compare --threads {threads} | {elapsed:.1f} | {size / 1e9 / elapsed:.2f} | {cpu:.1f} | "
          f"{rss:.0f} | {elapsed / read_best:.2f}x |")
    print(f"\nnumgap / read = {elapsed / read_best:.2f} (target <= 1.5); peak RSS {rss:.0f} MiB = "
          f"{rss * 2**20 / largest:.1f} x the largest tensor ({threads} workers, each mapping one pair)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
