#!/usr/bin/env python3
"""Capture every intermediate tensor of an eager PyTorch model as a numgap run.

Works on any eager model (nothing is traced, so models torch.fx cannot trace,
such as torchvision's vit_b_16, work too), at one of two levels:

  --level aten    (default) every aten op the model runs: a TorchDispatchMode
                  sees each op below autograd, writes its tensor outputs and
                  records which earlier outputs it consumed (the edges);
  --level module  the output of every nn.Module call (forward hooks).

The result is a run directory (README, "Run directory format"): one .npy per
tensor and graph.json with the nodes in execution order (producers before
consumers), their op, inputs and outputs.

Command line, one model in two precisions, then the comparison:

    python3 examples/torch_capture.py --model resnet18 --dtype f32  --out runs/f32
    python3 examples/torch_capture.py --model resnet18 --dtype bf16 --out runs/bf16
    build/examples/numgap compare runs/f32 runs/bf16

Built-in models (random weights from --seed; nothing is downloaded): resnet18,
mobilenet_v3_small, vit_b_16 (torchvision) and transformer_block (a small
pre-norm attention + MLP block, below). --dtype bf16|f16|f32 casts the model
and its floating inputs; f16 needs --device cuda for most models, as PyTorch's
CPU kernels lack float16 convolutions and matrix products.

Your own model, as a library (put examples/ on sys.path):

    from torch_capture import capture
    capture(model.eval(), (x,), "runs/f32")                 # aten level
    capture(model.eval().to(torch.bfloat16), (x.bfloat16(),), "runs/bf16")
    capture(model.eval(), (x,), "runs/modules", level="module")

Names (what makes two captures of one model match by name in numgap):
  - aten level: "<module path>/<aten op>" for the first call of that op
    directly inside that module, "<module path>/<aten op>#<k>" for the k-th
    repeat, e.g. "layer1.0.conv1/convolution", "layer1.0.relu/relu_#1" (the
    block's ReLU module is called twice). Ops of the top-level forward have
    no module path (resnet18's torch.flatten is "_reshape_alias"). Counting
    per module and per op keeps names stable when a lower precision adds
    ops: a bf16 run that upcasts a softmax adds "_to_copy" ops that an fp32
    run does not have (.float() on a float32 tensor is no op at all); only
    the _to_copy names differ, every other name is the same in both runs.
  - module level: the module's qualified name ("layer1.0.conv1"), "#<k>" for
    the k-th repeated call of one module, "__model__" for the model itself.
  - model inputs: "input_<position>" or "input_<keyword>".
  - An op or module returning several tensors (a tuple, list or dict) gives one
    node per tensor, "<name>:<index or key>", so each tensor is compared and a
    consumer's edge names exactly the tensor it read.

What is stored:
  - float32/float64/float16 as themselves, bfloat16 as bfloat16 ('<V2' with
    "dtype": "bfloat16" declared in graph.json), int8/uint8/int16/int32/bool
    as themselves;
  - quantized tensors as their integers (int_repr) with scale, zero_point and,
    per channel, quant_axis in graph.json, so numgap dequantizes them;
  - int64 results of ops (indices, counts) are not stored: numgap compares no
    int64, and indices (max_pool2d_with_indices) differ whenever rounding
    makes two window values equal, which is no numerical error. An int64
    model input (token ids) is stored as int32 when its values fit;
  - zero-element tensors and complex tensors are not stored (graph.json's
    metadata lists the tensors left out and why).
  - Ops that read no activation (a weight transpose, a buffer allocation) are
    constants, not steps of the run: they are not recorded.
  - Every tensor is written when it is produced, so an in-place op that later
    changes it (ReLU(inplace=True), +=) cannot change what was stored; after
    an in-place op its result's consumers point at that op, also when they
    read the changed memory through another view of it.

Needs torch and numpy (torchvision for its models); numgap itself does not.
"""
import argparse
import json
import os
import shutil
import struct
import sys
import weakref

PRODUCER = "numgap examples/torch_capture.py"

# torch dtype name -> (.npy descr, dtype declared in graph.json or None).
# bfloat16 has no NumPy type: '<V2' is how NumPy saves ml_dtypes.bfloat16, and
# numgap reads it when graph.json declares the dtype.
_NPY_DESCR = {
    "float32": ("<f4", None), "float64": ("<f8", None), "float16": ("<f2", None),
    "bfloat16": ("<V2", "bfloat16"), "int8": ("|i1", None), "uint8": ("|u1", None),
    "int16": ("<i2", None), "int32": ("<i4", None), "bool": ("|b1", None),
}
# Quantized dtype -> the dtype of its integer representation.
_QUANTIZED_STORAGE = {"quint8": "uint8", "qint8": "int8", "qint32": "int32"}


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _write_npy(path, descr, array):
    """Writes `array` (a contiguous NumPy array) as a version 1.0 .npy file
    whose header says `descr`, data 64-byte aligned like NumPy's own files."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, tuple(array.shape))
    preamble = 10  # magic, version, header length
    header += " " * ((-(preamble + len(header) + 1)) % 64) + "\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        array.tofile(f)


def _stored_form(tensor, is_model_input):
    """(numpy array, descr, graph.json tensor entry) for `tensor`, or a string
    saying why it is not stored."""
    import torch

    tensor = tensor.detach()
    if tensor.numel() == 0:
        return "no elements"
    entry = {}
    if tensor.is_quantized:
        scheme = tensor.qscheme()
        if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            entry = {"scale": float(tensor.q_scale()), "zero_point": int(tensor.q_zero_point())}
        elif scheme in (torch.per_channel_affine, torch.per_channel_symmetric):
            entry = {"scale": [float(s) for s in tensor.q_per_channel_scales().tolist()],
                     "zero_point": [int(z) for z in tensor.q_per_channel_zero_points().tolist()],
                     "quant_axis": int(tensor.q_per_channel_axis())}
        else:
            return "quantization scheme %s is not per tensor or per channel affine" % scheme
        if _dtype_name(tensor.dtype) not in _QUANTIZED_STORAGE:
            return "quantized dtype %s has no integer storage numgap reads" % _dtype_name(tensor.dtype)
        tensor = tensor.int_repr()
    elif tensor.dtype == torch.int64:
        if not is_model_input:
            return "int64 (indices or counts; numgap compares no int64)"
        if tensor.min() < -2**31 or tensor.max() >= 2**31:
            return "int64 values outside the int32 range"
        tensor = tensor.to(torch.int32)
    name = _dtype_name(tensor.dtype)
    if name not in _NPY_DESCR:
        return "dtype %s is not one numgap reads" % name
    descr, declared = _NPY_DESCR[name]
    if declared:
        entry["dtype"] = declared
    tensor = tensor.cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.int16)  # the same bits, in a type NumPy has
    return tensor.numpy(), descr, entry


class _RunWriter:
    """Writes tensors as they come and collects graph.json's nodes."""

    def __init__(self, directory, overwrite):
        self.directory = os.path.abspath(directory)
        if os.path.isdir(self.directory) and os.listdir(self.directory):
            if not overwrite:
                raise RuntimeError("'%s' is not empty: a run directory's every .npy is a tensor, so stale "
                                   "files would be compared too (use overwrite=True / --overwrite)"
                                   % self.directory)
            if not _written_by_us(self.directory):
                raise RuntimeError("'%s' was not written by this script (no graph.json from %s); "
                                   "not removing it" % (self.directory, PRODUCER))
            shutil.rmtree(self.directory)
        os.makedirs(self.directory, exist_ok=True)
        self.nodes = []
        self.tensors = {}
        self.skipped = []
        self.node_index = {}

    def add_node(self, name, op, inputs, tensor, metadata=None, is_model_input=False):
        """Stores `tensor` as key `name` and adds its node; False (and a note
        in the skipped list) when the tensor is not stored."""
        stored = _stored_form(tensor, is_model_input)
        if isinstance(stored, str):
            self.skipped.append({"name": name, "op": op, "reason": stored})
            return False
        if name in self.node_index:
            raise RuntimeError("capture produced the name '%s' twice; module names that differ only in "
                               "characters replaced by '_' are not supported" % name)
        array, descr, entry = stored
        _write_npy(os.path.join(self.directory, name + ".npy"), descr, array)
        if entry:
            self.tensors[name] = entry
        node = {"name": name, "op": op, "inputs": inputs, "outputs": [name]}
        if metadata:
            node["metadata"] = metadata
        self.node_index[name] = len(self.nodes)
        self.nodes.append(node)
        return True

    def close(self, metadata):
        metadata = dict(metadata, producer=PRODUCER, not_stored=self.skipped)
        document = {"version": 1, "nodes": self.nodes}
        if self.tensors:
            document["tensors"] = self.tensors
        document["metadata"] = metadata
        path = os.path.join(self.directory, "graph.json")
        with open(path + ".tmp", "w") as f:
            json.dump(document, f, indent=1)
        os.replace(path + ".tmp", path)


def _written_by_us(directory):
    try:
        with open(os.path.join(directory, "graph.json")) as f:
            return json.load(f).get("metadata", {}).get("producer") == PRODUCER
    except (OSError, ValueError, AttributeError):
        return False


def _safe(text):
    """A module name as a file-name-safe key part (ModuleDict keys may hold anything)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _tensor_leaves(value, suffix=""):
    """(suffix, tensor) for every tensor in a nested tuple/list/dict output."""
    import torch

    if isinstance(value, torch.Tensor):
        yield suffix, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _tensor_leaves(item, "%s:%d" % (suffix, i) if suffix else str(i))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _tensor_leaves(item, "%s:%s" % (suffix, _safe(str(key))) if suffix else _safe(str(key)))


class _Producers:
    """Which nodes a tensor object's values come from: tensor identity ->
    node names. At the aten level that is the one op that produced it; at the
    module level, where functional code between modules (torch.flatten
    before a classifier, a residual +=) makes no node, it is every node the
    value was computed from.

    No names marks an activation without a stored node (an int64 index): ops
    reading it are still steps of the run, with no edge to it."""

    def __init__(self):
        self._by_id = {}
        self._last_writer_by_storage = {}

    def produced(self, tensor, names, in_place):
        # The weak reference tells a live tensor from a new one that reuses a
        # freed tensor's id(); its callback forgets the entry.
        names = tuple(names)
        self._by_id[id(tensor)] = (weakref.ref(tensor, self._forget(id(tensor))), names, _version(tensor))
        if in_place:
            self._last_writer_by_storage[_storage(tensor)] = names

    def _forget(self, key):
        by_id = self._by_id

        def forget(reference):
            entry = by_id.get(key)
            if entry is not None and entry[0] is reference:
                del by_id[key]
        return forget

    def lookup(self, tensor):
        """(tracked, node names)."""
        entry = self._by_id.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return False, ()
        if _version(tensor) != entry[2]:
            # Changed in place through another view since it was produced:
            # the last op that wrote its memory holds its current value.
            return True, self._last_writer_by_storage.get(_storage(tensor), entry[1])
        return True, entry[1]


def _version(tensor):
    try:
        return tensor._version
    except RuntimeError:  # inference-mode tensors have no version counter
        return 0


def _storage(tensor):
    try:
        return tensor.storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def _input_tensors(value):
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _input_tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _input_tensors(item)


def _edges(producers, values):
    """(reads an activation, the distinct node names it reads, in order)."""
    tracked_any, names = False, []
    for tensor in _input_tensors(values):
        tracked, producer_names = producers.lookup(tensor)
        tracked_any |= tracked
        names.extend(name for name in producer_names if name not in names)
    return tracked_any, names


class _ModuleStack:
    """The qualified name of the module whose forward is running, kept by
    forward pre-hooks and hooks on every module of the model."""

    def __init__(self, model):
        self.paths = {id(module): _safe(path) for path, module in model.named_modules()}
        self.classes = {_safe(path): type(module).__name__ for path, module in model.named_modules()}
        self.stack = []

    def current(self):
        return self.stack[-1] if self.stack else ""

    def current_class(self):
        return self.classes.get(self.current(), "")


class _Counter:
    """Occurrence numbers per (scope, what): names get '#k' for the k-th repeat."""

    def __init__(self):
        self.counts = {}

    def name(self, scope, what):
        k = self.counts.get((scope, what), 0)
        self.counts[(scope, what)] = k + 1
        base = "%s/%s" % (scope, what) if scope and what else scope or what
        return base if k == 0 else "%s#%d" % (base, k)


def _record_outputs(writer, producers, name, op, inputs, result, metadata, written=()):
    import torch

    single = isinstance(result, torch.Tensor)
    for suffix, tensor in _tensor_leaves(result):
        key = name if single else "%s:%s" % (name, suffix)
        stored = writer.add_node(key, op, inputs, tensor, metadata)
        producers.produced(tensor, (key,) if stored else (), any(tensor is w for w in written))


def _make_dispatch_mode(writer, producers, modules, record_ops):
    """A TorchDispatchMode that sees every aten op below autograd. With
    record_ops (the aten level) each op reading an activation becomes nodes;
    without (the module level) its outputs only inherit where their inputs
    came from. Torch ops called in __torch_dispatch__ run with the mode
    popped; `paused` lets module hooks store tensors without being seen."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counter = _Counter()

    class Recorder(TorchDispatchMode):
        paused = False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            if self.paused:
                return result
            reads_activation, inputs = _edges(producers, (args, kwargs))
            if not reads_activation:
                return result  # a constant: weights, buffers, allocations
            written = list(_input_tensors([value for argument, value in _schema_values(func, args, kwargs)
                                           if argument.alias_info is not None and argument.alias_info.is_write]))
            if record_ops:
                scope = modules.current()
                name = counter.name(scope, func.overloadpacket.__name__)
                metadata = {"module": scope, "module_class": modules.current_class()} if scope else None
                _record_outputs(writer, producers, name, str(func), inputs, result, metadata, written)
            else:
                for _, tensor in _tensor_leaves(result):
                    producers.produced(tensor, inputs, any(tensor is w for w in written))
            return result

    return Recorder()


def _schema_values(func, args, kwargs):
    """(schema argument, value) pairs of one call."""
    for i, argument in enumerate(func._schema.arguments):
        if i < len(args) and not argument.kwarg_only:
            yield argument, args[i]
        elif argument.name in kwargs:
            yield argument, kwargs[argument.name]


def capture(model, inputs, out_dir, level="aten", modules="all", kwargs=None, overwrite=False):
    """Runs `model(*inputs, **kwargs)` once under torch.no_grad() and writes
    a numgap run directory to `out_dir` (which must be empty or absent, or
    one this function wrote, replaced when overwrite=True).

    level: "aten" (every aten op) or "module" (every module call; with
    modules="leaves", only modules without children and the model itself).
    The model is run as given: put it in eval mode and cast it first.
    Returns the model's output."""
    import torch

    if level not in ("aten", "module"):
        raise ValueError("level must be 'aten' or 'module', not %r" % (level,))
    if modules not in ("all", "leaves"):
        raise ValueError("modules must be 'all' or 'leaves', not %r" % (modules,))
    if model.training:
        print("torch_capture: warning: the model is in training mode (dropout, batch statistics); "
              "call model.eval() for an inference run", file=sys.stderr)
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    kwargs = dict(kwargs or {})
    writer = _RunWriter(out_dir, overwrite)
    producers = _Producers()
    stack = _ModuleStack(model)

    def add_inputs(values):
        for label, value in values:
            for suffix, tensor in _tensor_leaves(value):
                key = "input_%s" % label if not suffix else "input_%s:%s" % (label, suffix)
                stored = writer.add_node(key, "input", [], tensor, is_model_input=True)
                producers.produced(tensor, (key,) if stored else (), False)

    add_inputs([(str(i), value) for i, value in enumerate(inputs)])
    add_inputs([(_safe(name), value) for name, value in kwargs.items()])

    handles = []
    module_counter = _Counter()
    module_calls = []  # per running module call: (path, input edges)

    def pre_hook(module, args):
        path = stack.paths.get(id(module), "")
        stack.stack.append(path)
        if level == "module":
            module_calls.append((path, _edges(producers, args)[1]))

    def hook(module, args, output):
        stack.stack.pop()
        if level != "module":
            return
        path, inputs_read = module_calls.pop()
        is_root = module is model
        if modules == "leaves" and not is_root and any(True for _ in module.children()):
            return
        # The node reads its positional tensor arguments (hooks of PyTorch
        # 1.13 do not see keyword arguments) and every node its output was
        # computed from: the child a container passes on, so a container
        # passing on its child's error is not taken for where the error
        # began, and the inputs of an attention called with query=x, key=x.
        _, produced_by = _edges(producers, output)
        inner = [n for n in produced_by if n not in inputs_read]
        name = module_counter.name("__model__" if is_root else path, "")
        mode.paused = True
        try:
            _record_outputs(writer, producers, name, "module:" + type(module).__name__, inputs_read + inner,
                            output, None)
        finally:
            mode.paused = False

    mode = _make_dispatch_mode(writer, producers, stack, record_ops=level == "aten")
    for _, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(pre_hook))
        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad(), mode:
            output = model(*inputs, **kwargs)
    except BaseException as failure:
        # Half a run without graph.json would read as a run of unconnected
        # tensors; the directory was empty or ours, so it goes.
        shutil.rmtree(writer.directory, ignore_errors=True)
        if isinstance(failure, RuntimeError) and "not implemented for 'Half'" in str(failure):
            raise RuntimeError("%s\n(PyTorch's CPU kernels lack this op in float16: capture float16 on a "
                               "GPU, or use bfloat16 on the CPU)" % failure) from failure
        raise
    finally:
        for handle in handles:
            handle.remove()
    writer.close({"level": level, "modules": modules, "model_class": type(model).__name__,
                  "torch_version": torch.__version__})
    return output


# --- Built-in models ---------------------------------------------------------

def _transformer_block_class():
    import torch

    class TransformerBlock(torch.nn.Module):
        """Pre-norm self-attention and MLP with separate q/k/v projections.
        The softmax runs in float32 whatever the model's dtype, as most LLM
        code does, so a bf16 capture has casts an fp32 capture does not."""

        def __init__(self, dim=64, heads=4, hidden=256):
            super().__init__()
            self.heads = heads
            self.norm1 = torch.nn.LayerNorm(dim)
            self.q_proj = torch.nn.Linear(dim, dim)
            self.k_proj = torch.nn.Linear(dim, dim)
            self.v_proj = torch.nn.Linear(dim, dim)
            self.out_proj = torch.nn.Linear(dim, dim)
            self.norm2 = torch.nn.LayerNorm(dim)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(),
                                           torch.nn.Linear(hidden, dim))

        def forward(self, x):
            batch, tokens, dim = x.shape
            h = self.norm1(x)

            def split_heads(t):
                return t.view(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)

            q, k, v = split_heads(self.q_proj(h)), split_heads(self.k_proj(h)), split_heads(self.v_proj(h))
            scores = (q @ k.transpose(-2, -1)) * (dim // self.heads) ** -0.5
            attention = torch.softmax(scores.float(), dim=-1).to(q.dtype)
            context = (attention @ v).transpose(1, 2).reshape(batch, tokens, dim)
            x = x + self.out_proj(context)
            return x + self.mlp(self.norm2(x))

    return TransformerBlock


BUILT_IN_MODELS = ("resnet18", "mobilenet_v3_small", "vit_b_16", "transformer_block")


def build_model(name, seed=0, image_size=64, batch=1):
    """(model in eval mode, example inputs) for a built-in model: random
    weights from `seed`, the input from seed + 1 (so it does not depend on
    how many random numbers building the model drew)."""
    import torch

    torch.manual_seed(seed)
    if name == "transformer_block":
        model = _transformer_block_class()()
        shape = (batch, 16, 64)
    elif name in ("resnet18", "mobilenet_v3_small", "vit_b_16"):
        import torchvision

        extra = {"image_size": image_size} if name == "vit_b_16" else {}
        model = getattr(torchvision.models, name)(weights=None, **extra)
        shape = (batch, 3, image_size, image_size)
    else:
        raise ValueError("unknown model %r (built-in: %s)" % (name, ", ".join(BUILT_IN_MODELS)))
    generator = torch.Generator().manual_seed(seed + 1)
    return model.eval(), (torch.randn(*shape, generator=generator),)


DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def cast(model, inputs, dtype):
    """The model and its floating inputs in `dtype` ("f32", "bf16", "f16" or a torch.dtype)."""
    import torch

    if isinstance(dtype, str):
        dtype = getattr(torch, DTYPES.get(dtype, dtype))
    return model.to(dtype), tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Capture a built-in model's intermediate tensors as a numgap run directory.",
        epilog="See the top of this file for names, storage rules and library use.")
    parser.add_argument("--model", required=True, choices=BUILT_IN_MODELS)
    parser.add_argument("--out", required=True, help="run directory to write (empty or absent)")
    parser.add_argument("--level", choices=("aten", "module"), default="aten")
    parser.add_argument("--modules", choices=("all", "leaves"), default="all",
                        help="with --level module: every module, or only those without children")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--image-size", type=int, default=64, help="CNN and ViT input size (default 64)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace --out when an earlier capture wrote it")
    options = parser.parse_args(argv)

    model, inputs = build_model(options.model, options.seed, options.image_size, options.batch)
    model, inputs = cast(model.to(options.device), tuple(x.to(options.device) for x in inputs), options.dtype)
    try:
        capture(model, inputs, options.out, level=options.level, modules=options.modules,
                overwrite=options.overwrite)
    except RuntimeError as failure:
        sys.exit("torch_capture: %s" % failure)
    print("wrote", options.out)


if __name__ == "__main__":
    main()
