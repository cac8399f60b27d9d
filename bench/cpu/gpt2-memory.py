"""Activations saved for the backward: recast's GPT-2 small against the same
model in PyTorch eager (bench/gpu/gpt_torch.py), fp32 and bf16.

  gpt2-memory.py [--config gpt2-small|tiny] [--recast-opt PATH]

PyTorch's side is measured: torch.autograd.graph.saved_tensors_hooks sees
every tensor autograd keeps during one forward; each storage counts once,
the parameters' own storages not at all (autocast's bf16 copies of the
weights are counted apart, as recast's parameter copies are). recast's side
is its memory report of the step (--recast-memory-report), which
recast-run's measured peak confirms. Prints one line per precision with
both figures in MiB and their ratio.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "gpu"))
import gpt_torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 2.0 ** 20


def torch_saved(cfg, precision):
    """(activation bytes, parameter-copy bytes) autograd saves for one step."""
    torch.manual_seed(0)
    model = gpt_torch.GPT(**cfg)
    tokens = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    params |= {b.untyped_storage().data_ptr() for b in model.buffers()}
    shapes = {p.shape for p in model.parameters() if p.dim() == 2}
    shapes |= {p.t().shape for p in model.parameters() if p.dim() == 2}
    seen = {}
    copies = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key not in params:
            # A bf16 copy of a weight: autocast casts parameters once per
            # forward and keeps them for the backward.
            target = copies if tensor.dtype == torch.bfloat16 and \
                tensor.dim() == 2 and tensor.shape in shapes else seen
            target[key] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16,
                            enabled=precision == "bf16"):
            loss = model(tokens)
    del loss
    return sum(seen.values()), sum(copies.values())


def recast_saved(recast_opt, path, precision):
    """(saved activation bytes, saved parameter-copy bytes, peak bytes) of
    @train_step from recast's memory report."""
    passes = ["--recast-mixed-precision"] if precision == "bf16" else ["--recast-autodiff"]
    out = subprocess.run([recast_opt, path] + passes +
                         ["--recast-memory-report=report=-", "-o", "/dev/null"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    step = next(f for f in report["functions"] if f["function"] == "train_step")
    return (step["saved_activation_bytes"], step["saved_param_copy_bytes"],
            step["peak_bytes"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="gpt2-small", choices=sorted(gpt_torch.CONFIGS))
    parser.add_argument("--recast-opt", default=os.path.join(ROOT, "build", "bin", "recast-opt"))
    args = parser.parse_args()
    cfg = gpt_torch.CONFIGS[args.config]
    name = "gpt-gpt2-small" if args.config == "gpt2-small" else "gpt-" + args.config
    path = os.path.join(ROOT, "examples", "models", name + ".mlir")
    print("%-5s %14s %14s %6s %18s %18s %12s" % (
        "prec", "recast MiB", "torch MiB", "ratio", "recast copies MiB",
        "torch copies MiB", "recast peak"))
    for precision in ("fp32", "bf16"):
        saved, copies, peak = recast_saved(args.recast_opt, path, precision)
        torch_bytes, torch_copies = torch_saved(cfg, precision)
        print("%-5s %14.1f %14.1f %6.3f %18.1f %18.1f %12.1f" % (
            precision, saved / MIB, torch_bytes / MIB, saved / torch_bytes,
            copies / MIB, torch_copies / MIB, peak / MIB))


if __name__ == "__main__":
    main()
