#!/usr/bin/env python3
"""End-to-end benchmark of `numgap compare` against the two baselines the issue names.

Generates a reference and a target run directory (a chain of float32 tensors
with graph.json; the target is the reference plus small noise, so every metric
is computed over real data), warms the page cache, then times:

  read      both dumps read once, sequentially (8 MiB reads, data discarded):
            the floor any tool that looks at every byte must pay;
  numgap    `numgap compare REF TARGET` (default metrics cosine, atol, mse);
  python    today's Python-debugger way, imports already paid: for every
            tensor np.load both files, then one NumPy pass per metric
            (cosine, max abs diff, mse), in a child process.

With --shards N the tensors are [rows, 256 * N] matrices and a third run
directory holds the target as tensor-parallel shards: each tensor as N files
of 256 columns each, split along axis 1 (graph.json "shards"); the table gains

  numgap, sharded target   `numgap compare REF TARGET_SHARDED`: the same
            comparison, the target read shard by shard (never concatenated);
  numgap, per-rank files   the same shards as keys of one safetensors file
            per rank (graph.json "shards" entries with "key"): one file per
            rank instead of one per shard, as tensor-parallel ranks dump.

Each method runs --repeat times; the best time is reported with GB/s of tensor
data (both runs) and the child's peak RSS (from wait4). Usage:

  python3 benchmarks/end_to_end.py --numgap build/examples/numgap --total-gb 2 [--shards 8]

Default size is small (0.2 GB total) so it also works as a smoke test.
"""
import argparse
import json
import os
import subprocess
import sys
import time


SHARD_COLUMNS = 256  # columns per shard: rows of a shard are runs the kernel reads in place


def generate(directory, total_bytes, tensors, seed, shards=0):
    import numpy as np

    per_run = total_bytes // 2
    elements = max(1, per_run // tensors // 4)
    shape = (elements,)
    if shards:
        columns = SHARD_COLUMNS * shards
        shape = (max(1, elements // columns), columns)
        elements = shape[0] * shape[1]
    rng = np.random.default_rng(seed)
    sides = ("reference", "target") + (("target_sharded", "target_ranks") if shards else ())
    for side in sides:
        os.makedirs(os.path.join(directory, side), exist_ok=True)
    nodes, sharded_tensors, keyed_tensors = [], {}, {}
    # target_ranks: the same shards as keys of one safetensors file per rank
    # (rank<r>/dump.safetensors, every file repeating the layer names), the
    # layout of per-rank dumps; headers first, then the data layer by layer.
    rank_files = []
    if shards:
        slice_bytes = shape[0] * SHARD_COLUMNS * 4
        header = {f"layer{i:04d}": {"dtype": "F32", "shape": [shape[0], SHARD_COLUMNS],
                                    "data_offsets": [i * slice_bytes, (i + 1) * slice_bytes]}
                  for i in range(tensors)}
        header_bytes = json.dumps(header).encode()
        header_bytes += b" " * (-len(header_bytes) % 8)
        for rank in range(shards):
            os.makedirs(os.path.join(directory, "target_ranks", f"rank{rank}"), exist_ok=True)
            f = open(os.path.join(directory, "target_ranks", f"rank{rank}", "dump.safetensors"), "wb")
            f.write(len(header_bytes).to_bytes(8, "little") + header_bytes)
            rank_files.append(f)
    for i in range(tensors):
        name = f"layer{i:04d}"
        reference = rng.standard_normal(elements, dtype=np.float32).reshape(shape)
        noise = rng.standard_normal(elements, dtype=np.float32).reshape(shape) * np.float32(1e-3)
        np.save(os.path.join(directory, "reference", name + ".npy"), reference)
        np.save(os.path.join(directory, "target", name + ".npy"), reference + noise)
        if shards:
            entries, keyed = [], []
            for rank in range(shards):
                begin = rank * SHARD_COLUMNS
                file = f"{name}.rank{rank}.npy"
                piece = np.ascontiguousarray((reference + noise)[:, begin:begin + SHARD_COLUMNS])
                np.save(os.path.join(directory, "target_sharded", file), piece)
                rank_files[rank].write(piece.tobytes())
                entries.append({"file": file, "axis": 1, "offset": begin})
                keyed.append({"file": f"rank{rank}/dump.safetensors", "key": name, "axis": 1, "offset": begin})
            sharded_tensors[name] = {"shards": entries}
            keyed_tensors[name] = {"shards": keyed}
        nodes.append({"name": name, "op": "aten.add.Tensor",
                      "inputs": [f"layer{i - 1:04d}"] if i else []})
    for f in rank_files:
        f.close()
    for side in sides:
        with open(os.path.join(directory, side, "graph.json"), "w") as f:
            document = {"version": 1, "nodes": nodes}
            if side == "target_sharded":
                document["tensors"] = sharded_tensors
            if side == "target_ranks":
                document["tensors"] = keyed_tensors
            json.dump(document, f)
    with open(os.path.join(directory, "params.json"), "w") as f:
        json.dump({"total_bytes": total_bytes, "tensors": tensors, "elements": elements, "shards": shards,
                   "per_rank_files": bool(shards)}, f)


def data_bytes(directory, sides=("reference", "target")):
    total = 0
    for side in sides:
        for root, _, files in os.walk(os.path.join(directory, side)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.endswith(".npy"))
    return total


def read_all(directory, sides=("reference", "target")):
    buffer = bytearray(8 << 20)
    view = memoryview(buffer)
    for side in sides:
        for root, _, files in os.walk(os.path.join(directory, side)):
            for name in sorted(files):
                if name.endswith((".npy", ".safetensors")):
                    with open(os.path.join(root, name), "rb", buffering=0) as f:
                        while f.readinto(view):
                            pass


def run_child(command):
    """Runs a command; returns (seconds, peak RSS in MiB, exit status)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024.0, process.returncode


def python_way(directory):
    """The child-process body of the `python` method; prints seconds after imports."""
    import numpy as np

    start = time.perf_counter()
    names = sorted(f[:-4] for f in os.listdir(os.path.join(directory, "reference")) if f.endswith(".npy"))
    results = {}
    for name in names:
        # float32 as stored: casting to float64 first would make this baseline slower still.
        # ravel: a view of the contiguous data (the --shards runs store matrices).
        reference = np.load(os.path.join(directory, "reference", name + ".npy")).ravel()
        target = np.load(os.path.join(directory, "target", name + ".npy")).ravel()
        cosine = float(np.dot(reference, target) / (np.linalg.norm(reference) * np.linalg.norm(target)))
        atol = float(np.max(np.abs(reference - target)))
        mse = float(np.mean((reference - target) ** 2))
        results[name] = (cosine, atol, mse)
    print(time.perf_counter() - start)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--numgap", default="build/examples/numgap", help="path to the numgap binary")
    parser.add_argument("--dir", default="/tmp/numgap_bench", help="where the run directories go")
    parser.add_argument("--total-gb", type=float, default=0.2, help="tensor data of both runs together")
    parser.add_argument("--tensors", type=int, default=64, help="tensors per run")
    parser.add_argument("--threads", type=int, default=0, help="numgap --threads (0: all cores)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="reuse existing data of the same size")
    parser.add_argument("--shards", type=int, default=0,
                        help="also time a target stored as this many shards along axis 1 (0: no sharded case)")
    parser.add_argument("--python-way", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.python_way:
        python_way(args.python_way)
        return 0

    total_bytes = int(args.total_gb * 1e9)
    params_path = os.path.join(args.dir, "params.json")
    wanted = {"total_bytes": total_bytes, "tensors": args.tensors, "shards": args.shards,
              "per_rank_files": bool(args.shards)}
    have = json.load(open(params_path)) if os.path.exists(params_path) else {}
    if not (args.keep and all(have.get(k) == v for k, v in wanted.items())):
        subprocess.run(["rm", "-rf", args.dir], check=True)
        print(f"generating {total_bytes / 1e9:.2f} GB in {args.tensors} tensor pairs under {args.dir} ...",
              file=sys.stderr)
        generate(args.dir, total_bytes, args.tensors, seed=1, shards=args.shards)
    size = data_bytes(args.dir)
    reference, target = os.path.join(args.dir, "reference"), os.path.join(args.dir, "target")

    read_all(args.dir, ("reference", "target", "target_sharded", "target_ranks") if args.shards
             else ("reference", "target"))
    # the page cache is warm: every method below runs warm
    rows = []

    best = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        read_all(args.dir)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    rows.append(("read both dumps once (8 MiB reads)", best, None))

    def time_numgap(target_run, label):
        command = [args.numgap, "compare", reference, target_run, "--threads", str(args.threads)]
        best, rss, status = None, 0.0, 0
        for _ in range(args.repeat):
            elapsed, peak, status = run_child(command)
            if status not in (0, 1):
                sys.exit(f"numgap failed with exit status {status}: {' '.join(command)}")
            if best is None or elapsed < best:
                best, rss = elapsed, peak
        rows.append((f"{label} (threads={args.threads or os.cpu_count()})", best, rss))

    time_numgap(target, "numgap compare")

    best, rss = None, 0.0
    for _ in range(args.repeat):
        process = subprocess.Popen([sys.executable, __file__, "--python-way", args.dir], stdout=subprocess.PIPE)
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = float(output.decode().strip())
        if best is None or elapsed < best:
            best, rss = elapsed, usage.ru_maxrss / 1024.0
    rows.append(("Python: np.load + one NumPy pass per metric", best, rss))
    if args.shards:
        time_numgap(os.path.join(args.dir, "target_sharded"),
                    f"numgap compare, target in {args.shards} shards along axis 1")
        time_numgap(os.path.join(args.dir, "target_ranks"),
                    f"numgap compare, the same shards as keys of {args.shards} per-rank safetensors files")

    read_seconds = rows[0][1]
    print(f"\n{size / 1e9:.2f} GB of tensor data ({args.tensors} pairs), warm page cache, "
          f"{os.cpu_count()} CPUs, best of {args.repeat}\n")
    print("| method | seconds | GB/s | peak RSS (MiB) | vs read |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds, peak in rows:
        peak_text = "-" if peak is None else f"{peak:.0f}"
        print(f"| {name} | {seconds:.3f} | {size / 1e9 / seconds:.2f} | {peak_text} | {seconds / read_seconds:.2f}x |")
    numgap_seconds, python_seconds = rows[1][1], rows[2][1]
    print(f"\nnumgap / read = {numgap_seconds / read_seconds:.2f} (target <= 1.5); "
          f"python / numgap = {python_seconds / numgap_seconds:.1f} (target >= 5)")
    if args.shards:
        print(f"unsplit / sharded numgap time = {numgap_seconds / rows[3][1]:.2f} with a file per shard, "
              f"{numgap_seconds / rows[4][1]:.2f} with per-rank safetensors files (target >= 0.85)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
