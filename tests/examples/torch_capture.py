#!/usr/bin/env python3
"""End-to-end test of examples/torch_capture.py with the numgap CLI.

For resnet18, mobilenet_v3_small, vit_b_16 and the transformer block:
  1. capture float32 and bfloat16 with the script's command line;
  2. check the names: every float32 node is in the bfloat16 run, which adds
     only casts (_to_copy); bfloat16 tensors are stored as '<V2' with the
     dtype declared in graph.json, float32 ones as '<f4';
  3. `numgap compare` the pair: every group matched by name, nothing
     unmatched on the reference side, every group passes (bfloat16 rounding
     is far inside the default thresholds), no first divergence;
  4. capture bfloat16 again through the library function capture(), with
     noise added to one layer's weights, and compare: the first divergence
     and the only error origin must be that layer's op, which also checks
     the edges (every later failure must lead back to it).
Then the module level (names are module paths; resnet18 and vit_b_16 faults
found at the faulty module), float16 storage ('<f2') and quantized storage
(integers with scale and zero point; numgap dequantizes them).

Usage: python3 tests/examples/torch_capture.py --numgap build/examples/numgap [--keep DIR]
Exits 77 (CTest's SKIP_RETURN_CODE) when torch or torchvision is missing.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "examples", "torch_capture.py")

# model -> (module whose weights get noise, the node that must be the first divergence)
FAULTS = {
    "transformer_block": ("k_proj", "k_proj/addmm"),
    "resnet18": ("layer2.0.conv2", "layer2.0.conv2/convolution"),
    "mobilenet_v3_small": ("features.4.block.1.0", "features.4.block.1.0/convolution"),
    "vit_b_16": ("encoder.layers.encoder_layer_5.mlp.0", "encoder.layers.encoder_layer_5.mlp.0/addmm"),
}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def load_capture_module():
    spec = importlib.util.spec_from_file_location("torch_capture", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(*args):
    result = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError("torch_capture.py %s failed (%d):\n%s" % (" ".join(args), result.returncode,
                                                                       result.stderr))


def compare(numgap, reference, target, report, *extra):
    result = subprocess.run([numgap, "compare", reference, target, "--json", report, *extra],
                            capture_output=True, text=True)
    check(result.returncode in (0, 1), "numgap compare %s %s exited %d: %s" %
          (reference, target, result.returncode, result.stderr))
    with open(report) as f:
        return json.load(f), result


def graph(run):
    with open(os.path.join(run, "graph.json")) as f:
        return json.load(f)


def npy_descr(path):
    with open(path, "rb") as f:
        start = f.read(10)
        header = f.read(int.from_bytes(start[8:10], "little")).decode("latin1")
    return header.split("'descr': '")[1].split("'")[0]


def add_noise(model, module_name, seed=7):
    import torch

    weight = model.get_submodule(module_name).weight
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(weight.shape, generator=generator).to(weight.dtype) * weight.float().std().to(weight.dtype)
    with torch.no_grad():
        weight += noise


def check_pair_stays_named(model, reference, target):
    ref_names = [node["name"] for node in graph(reference)["nodes"]]
    target_graph = graph(target)
    target_names = [node["name"] for node in target_graph["nodes"]]
    missing = sorted(set(ref_names) - set(target_names))
    check(not missing, "%s: float32 names missing from the bfloat16 run: %s" % (model, missing[:5]))
    extra_ops = {node["op"] for node in target_graph["nodes"] if node["name"] not in set(ref_names)}
    check(extra_ops <= {"aten._to_copy.default"},
          "%s: the bfloat16 run adds ops other than casts: %s" % (model, sorted(extra_ops)))
    stored = next(node["name"] for node in target_graph["nodes"] if node["op"] != "input")
    check(npy_descr(os.path.join(target, stored + ".npy")) == "<V2",
          "%s: bfloat16 tensor '%s' is not stored as '<V2'" % (model, stored))
    check(target_graph.get("tensors", {}).get(stored, {}).get("dtype") == "bfloat16",
          "%s: graph.json does not declare '%s' bfloat16" % (model, stored))
    check(npy_descr(os.path.join(reference, stored + ".npy")) == "<f4",
          "%s: float32 tensor '%s' is not stored as '<f4'" % (model, stored))
    return len(ref_names)


def check_healthy_report(model, report, reference_nodes):
    summary = report["summary"]
    by_name = sum(1 for group in report["groups"] if group.get("strategy") == "name")
    check(by_name == summary["groups"] and summary["groups"] == reference_nodes,
          "%s: %d of %d groups matched by name, %d reference nodes" % (model, by_name, summary["groups"],
                                                                      reference_nodes))
    check(summary["unmatched_ref"] == 0, "%s: %d reference nodes unmatched" % (model, summary["unmatched_ref"]))
    check(summary["failed"] == 0 and summary["first_divergence"] is None,
          "%s: a healthy bfloat16 run failed %d groups, first divergence %s" %
          (model, summary["failed"], summary["first_divergence"]))


def check_fault_report(model, report, expected):
    summary = report["summary"]
    by_name = sum(1 for group in report["groups"] if group.get("strategy") == "name")
    check(by_name >= 0.95 * summary["groups"], "%s (fault): only %d of %d groups matched by name" %
          (model, by_name, summary["groups"]))
    check(summary["first_divergence"] == expected, "%s: first divergence %r, expected %r (the faulty layer)" %
          (model, summary["first_divergence"], expected))
    check(summary["origins"] == [expected], "%s: error origins %s, expected only %r" %
          (model, summary["origins"], expected))
    check(summary["failed"] >= 2, "%s: the fault did not propagate (%d failed groups)" % (model, summary["failed"]))


def check_module_level(numgap, capture_module, work):
    """The module level: names are module paths, resnet18 in bfloat16 passes
    against float32, and a fault is found at its module in resnet18 (whose
    classifier reads torch.flatten's result, made by no module) and vit_b_16
    (whose attention is called with keyword arguments, which module hooks of
    PyTorch 1.13 do not see): both need the edges through functional code."""
    runs = {tag: os.path.join(work, "resnet18-module-" + tag) for tag in ("f32", "bf16")}
    run_script("--model", "resnet18", "--level", "module", "--dtype", "f32", "--out", runs["f32"], "--overwrite")
    run_script("--model", "resnet18", "--level", "module", "--dtype", "bf16", "--out", runs["bf16"], "--overwrite")
    names = [node["name"] for node in graph(runs["f32"])["nodes"]]
    for expected in ("input_0", "conv1", "layer1.0.conv1", "layer1.0.relu", "layer1.0.relu#1", "layer1.0",
                     "layer1", "fc", "__model__"):
        check(expected in names, "module level: no node named %r (nodes: %s ...)" % (expected, names[:8]))
    check(names == [node["name"] for node in graph(runs["bf16"])["nodes"]],
          "module level: the bfloat16 run's names differ from the float32 run's")
    report, _ = compare(numgap, runs["f32"], runs["bf16"], os.path.join(work, "resnet18-module-bf16.json"))
    check_healthy_report("resnet18 (module level)", report, len(names))

    for model, layer in (("resnet18", "layer2.0.conv2"), ("vit_b_16", "encoder.layers.encoder_layer_5.mlp.0")):
        reference, faulty = (os.path.join(work, "%s-module-%s" % (model, tag)) for tag in ("f32-library", "fault"))
        net, inputs = capture_module.build_model(model)
        capture_module.capture(net, inputs, reference, level="module", overwrite=True)
        net, inputs = capture_module.cast(*capture_module.build_model(model), "bf16")
        add_noise(net, layer)
        capture_module.capture(net, inputs, faulty, level="module", overwrite=True)
        report, _ = compare(numgap, reference, faulty, os.path.join(work, model + "-module-fault.json"))
        check_fault_report(model + " (module level)", report, layer)


def check_storage(numgap, capture_module, work):
    """float16 as '<f2'; quantized tensors as integers with their parameters,
    which numgap applies (a statically quantized CNN against its float self,
    a per-channel quantized input against the values it holds)."""
    import torch

    class Elementwise(torch.nn.Module):
        def forward(self, x):
            return x * 2 + 1  # ops PyTorch 1.13's CPU kernels have in float16

    run = os.path.join(work, "float16")
    capture_module.capture(Elementwise().eval(), (torch.randn(4, 5).half(),), run, overwrite=True)
    check(npy_descr(os.path.join(run, "add.npy")) == "<f2", "float16 tensor 'add' is not stored as '<f2'")

    class Quantizable(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = torch.ao.quantization.QuantStub()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.relu = torch.nn.ReLU()
            self.dequant = torch.ao.quantization.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.relu(self.conv(self.quant(x))))

    engine = "qnnpack" if "qnnpack" in torch.backends.quantized.supported_engines else "fbgemm"
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    model, x = Quantizable().eval(), torch.randn(1, 3, 16, 16)
    capture_module.capture(model, (x,), os.path.join(work, "quant-f32"), level="module", overwrite=True)
    model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    prepared = torch.ao.quantization.prepare(model)
    prepared(x)
    quantized = torch.ao.quantization.convert(prepared)
    capture_module.capture(quantized, (x,), os.path.join(work, "quant-int8"), level="module", overwrite=True)
    entry = graph(os.path.join(work, "quant-int8")).get("tensors", {}).get("conv", {})
    check("scale" in entry and "zero_point" in entry, "quantized 'conv' has no scale/zero_point: %s" % entry)
    check(npy_descr(os.path.join(work, "quant-int8", "conv.npy")) == "|u1", "quantized 'conv' is not uint8")
    report, _ = compare(numgap, os.path.join(work, "quant-f32"), os.path.join(work, "quant-int8"),
                        os.path.join(work, "quant.json"))
    conv = [group for group in report["groups"] if group["ref_nodes"] == ["conv"]]
    check(len(conv) == 1 and conv[0]["dtype_target"] == "uint8" and conv[0]["status"] == "pass" and
          conv[0]["metrics"]["cosine"]["value"] > 0.999,
          "quantized conv against float conv: %s" % (conv[0] if conv else "no group"))

    class Dequantize(torch.nn.Module):
        def forward(self, x):
            return x.dequantize()

    per_channel = torch.quantize_per_channel(torch.randn(2, 4, 3), torch.tensor([0.1, 0.02, 0.03, 0.05]),
                                             torch.tensor([0, 1, -2, 3]), 1, torch.qint8)
    capture_module.capture(Dequantize().eval(), (per_channel,), os.path.join(work, "per-channel"), overwrite=True)
    capture_module.capture(Dequantize().eval(), (per_channel.dequantize(),), os.path.join(work, "per-channel-f32"),
                           overwrite=True)
    entry = graph(os.path.join(work, "per-channel"))["tensors"]["input_0"]
    check(entry.get("quant_axis") == 1 and entry.get("zero_point") == [0, 1, -2, 3],
          "per-channel input: graph.json entry %s" % entry)
    report, _ = compare(numgap, os.path.join(work, "per-channel-f32"), os.path.join(work, "per-channel"),
                        os.path.join(work, "per-channel.json"), "--metric", "max_abs:<=1e-6")
    check(report["summary"]["passed"] == 2, "per-channel input dequantized by numgap differs from "
          "PyTorch's dequantize: %s" % report["summary"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numgap", required=True, help="the numgap CLI binary")
    parser.add_argument("--keep", help="write the runs here instead of a temporary directory")
    parser.add_argument("--models", default=",".join(FAULTS), help="comma-separated subset")
    options = parser.parse_args()
    try:
        import numpy  # noqa: F401
        import torch
        import torchvision  # noqa: F401
    except ImportError as missing:
        print("SKIPPED: %s (install python3-torch and python3-torchvision; NUMGAP_WITH_TORCH=1 bash cmake/install-deps.sh does)" % missing)
        return 77
    torch.set_num_threads(2)
    capture_module = load_capture_module()
    with tempfile.TemporaryDirectory(prefix="numgap_torch_capture_") as scratch:
        work = options.keep or scratch
        os.makedirs(work, exist_ok=True)
        for model in options.models.split(","):
            started = time.monotonic()
            reference, bf16, faulty = (os.path.join(work, "%s-%s" % (model, tag)) for tag in ("f32", "bf16", "fault"))
            run_script("--model", model, "--dtype", "f32", "--out", reference, "--overwrite")
            run_script("--model", model, "--dtype", "bf16", "--out", bf16, "--overwrite")
            reference_nodes = check_pair_stays_named(model, reference, bf16)
            report, _ = compare(options.numgap, reference, bf16, os.path.join(work, model + "-bf16.json"))
            check_healthy_report(model, report, reference_nodes)

            layer, expected = FAULTS[model]
            net, inputs = capture_module.build_model(model)
            net, inputs = capture_module.cast(net, inputs, "bf16")
            add_noise(net, layer)
            capture_module.capture(net, inputs, faulty, overwrite=True)
            report, _ = compare(options.numgap, reference, faulty, os.path.join(work, model + "-fault.json"))
            check_fault_report(model, report, expected)
            print("%s: %.1f s" % (model, time.monotonic() - started))
        started = time.monotonic()
        check_module_level(options.numgap, capture_module, work)
        check_storage(options.numgap, capture_module, work)
        print("module level and storage: %.1f s" % (time.monotonic() - started))
        if not failures:
            print("all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
