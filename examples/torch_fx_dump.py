#!/usr/bin/env python3
"""Write a numgap run directory from a PyTorch model traced with torch.fx.

One .npy per node output (float32, or the tensor's own dtype when NumPy has
it) and a graph.json listing the nodes producers-before-consumers, with their
op, inputs and outputs, in run directory format version 1 (see the README).

Usage as a library (the usual case: dump the reference and the candidate):

    import torch, torchvision
    from torch_fx_dump import dump_run
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    dump_run(model, (x,), "runs/reference")
    dump_run(model.half(), (x.half(),), "runs/fp16")
    # then: numgap compare runs/reference runs/fp16 --csv report.csv

or from the command line with a built-in toy model:

    python3 examples/torch_fx_dump.py OUT_DIR [--half]   (--half: weights and input rounded to float16)

Node names are the fx node names, so two dumps of one model match by name.
Outputs that are not tensors (tuples are split into "<node>.0", "<node>.1",
...; None and Python scalars are skipped) are handled so the directory only
holds arrays numgap can read. Needs torch and numpy; numgap itself does not.
"""
import json
import operator
import os
import sys


def _op_name(node):
    target = node.target
    if node.op == "placeholder":
        return "input"
    if node.op == "output":
        return "output"
    if node.op == "call_module":
        return "module:" + type(node.graph.owning_module.get_submodule(target)).__name__
    if node.op == "get_attr":
        return "get_attr"
    if target is operator.getitem:
        return "getitem"
    return getattr(target, "__name__", str(target))


def _save(directory, key, value):
    import numpy as np
    import torch

    array = value.detach().cpu()
    if array.dtype == torch.bfloat16:
        array = array.float()  # NumPy has no bfloat16; float32 holds it exactly
    array = array.numpy()
    if array.dtype == np.float16 or array.dtype == np.float32 or array.dtype == np.float64:
        pass
    elif array.dtype == np.bool_ or array.dtype.kind in "iu" and array.dtype.itemsize <= 4:
        pass
    else:
        array = array.astype(np.float32)
    path = os.path.join(directory, key + ".npy")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.ascontiguousarray(array))


def dump_run(model, example_inputs, directory):
    """Trace `model` with torch.fx, run it on `example_inputs`, write a run directory."""
    import torch
    import torch.fx

    traced = model if isinstance(model, torch.fx.GraphModule) else torch.fx.symbolic_trace(model)
    outputs = {}

    def snapshot(value):
        # A later in-place op (ReLU(inplace=True), add_) would otherwise change
        # what was recorded: a conv's dump would hold its ReLU's output.
        if isinstance(value, torch.Tensor):
            return value.detach().clone()
        if isinstance(value, (tuple, list)):
            return type(value)(snapshot(item) for item in value)
        return value

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            outputs[node.name] = snapshot(result)
            return result

    with torch.no_grad():
        Recorder(traced).run(*example_inputs)

    os.makedirs(directory, exist_ok=True)
    produced = {}  # fx node name -> tensor keys it wrote
    nodes = []
    for node in traced.graph.nodes:
        if node.op == "output":
            continue
        value = outputs.get(node.name)
        keys = []
        if isinstance(value, torch.Tensor):
            _save(directory, node.name, value)
            keys.append(node.name)
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if isinstance(item, torch.Tensor):
                    _save(directory, f"{node.name}.{i}", item)
                    keys.append(f"{node.name}.{i}")
        produced[node.name] = keys
        inputs = [key for arg in node.all_input_nodes for key in produced.get(arg.name, [])]
        nodes.append({"name": node.name, "op": _op_name(node), "inputs": inputs, "outputs": keys})
    with open(os.path.join(directory, "graph.json"), "w") as f:
        json.dump({"version": 1, "nodes": nodes, "metadata": {"producer": "numgap torch_fx_dump.py"}},
                  f, indent=1)
    return directory


def _toy_model():
    import torch

    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.GroupNorm(4, 8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, padding=1),
        torch.nn.GroupNorm(4, 16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    ).eval()


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--half"):
        sys.exit(__doc__)
    import torch

    torch.manual_seed(0)
    model = _toy_model()
    x = torch.randn(1, 3, 16, 16)
    if len(sys.argv) == 3:
        # Weights and input rounded to float16, arithmetic kept in float32:
        # many CPU builds of torch have no float16 convolution.
        model, x = model.half().float(), x.half().float()
    print("wrote", dump_run(model, (x,), sys.argv[1]))
