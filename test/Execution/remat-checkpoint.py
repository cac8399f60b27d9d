"""recast.checkpoint (torch.utils.checkpoint) and --recast-remat{policy=full}
change when values are computed, never what: a deep MLP whose layers are
checkpoint regions trains to bitwise the same losses and parameters as the
same MLP written without them, and so does the plain MLP under policy=full
(blocks inferred) and with one layer's activation marked
recast.remat = "recompute". Each of them holds less memory at its peak.

# RUN: rm -rf %t
# RUN: %python %s --recast-run=recast-run --workdir=%t
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

BATCH, WIDTH, LAYERS = 128, 64, 8


def mlp(checkpoint, mark_recompute=False):
    """The step as MLIR text: LAYERS x (matmul, bias + ReLU), a mean-square
    loss and SGD; with `checkpoint` every layer is a recast.checkpoint
    region."""
    act = f"tensor<{BATCH}x{WIDTH}xf32>"
    wt = f"tensor<{WIDTH}x{WIDTH}xf32>"
    bt = f"tensor<{WIDTH}xf32>"
    params = [(f"w{i}", wt) for i in range(LAYERS)] + \
             [(f"b{i}", bt) for i in range(LAYERS)]
    lines = ["#id = affine_map<(d0, d1) -> (d0, d1)>",
             "#row = affine_map<(d0, d1) -> (d1)>",
             "#all = affine_map<(d0, d1) -> ()>",
             "module {",
             "  func.func private @loss(" +
             ", ".join(f"%{n}: {t}" for n, t in params) +
             f", %x: {act}) -> tensor<f32> {{",
             "    %zero = arith.constant 0.0 : f32"]
    previous = "%x"
    for i in range(LAYERS):
        pad = "      " if checkpoint else "    "
        out = f"%a{i}" if checkpoint else f"%h{i}"
        mark = ' {recast.remat = "recompute"}' if mark_recompute else ""
        body = [
            f"%mm{i}_e = tensor.empty() : {act}",
            f"%mm{i}_z = linalg.fill ins(%zero : f32) outs(%mm{i}_e : {act}) -> {act}",
            f"%mm{i} = linalg.matmul{mark} ins({previous}, %w{i} : {act}, {wt}) "
            f"outs(%mm{i}_z : {act}) -> {act}",
            f"%a{i}_e = tensor.empty() : {act}",
            f"{out} = linalg.generic {{indexing_maps = [#id, #row, #id], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%mm{i}, %b{i} : {act}, {bt}) outs(%a{i}_e : {act}) {{",
            "^bb0(%v: f32, %b: f32, %o: f32):",
            "  %s = arith.addf %v, %b : f32",
            "  %c0 = arith.constant 0.0 : f32",
            "  %p = arith.cmpf ogt, %s, %c0 : f32",
            "  %r = arith.select %p, %s, %c0 : f32",
            "  linalg.yield %r : f32",
            f"}} -> {act}",
        ]
        if checkpoint:
            lines.append(f"    %h{i} = recast.checkpoint -> {act} {{")
            lines += [pad + line for line in body]
            lines.append(f"      recast.yield %a{i} : {act}")
            lines.append("    }")
        else:
            lines += [pad + line for line in body]
        previous = f"%h{i}"
    scale = 1.0 / (BATCH * WIDTH)
    lines += [
        "    %l_e = tensor.empty() : tensor<f32>",
        "    %l_z = linalg.fill ins(%zero : f32) outs(%l_e : tensor<f32>) -> tensor<f32>",
        "    %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = "
        "[\"reduction\", \"reduction\"]} "
        f"ins({previous} : {act}) outs(%l_z : tensor<f32>) {{",
        "    ^bb0(%v: f32, %acc: f32):",
        f"      %c = arith.constant {scale:e} : f32",
        "      %sq = arith.mulf %v, %v : f32",
        "      %m = arith.mulf %sq, %c : f32",
        "      %t = arith.addf %acc, %m : f32",
        "      linalg.yield %t : f32",
        "    } -> tensor<f32>",
        "    return %l : tensor<f32>",
        "  }",
        "  func.func @train_step(" +
        ", ".join(f"%{n}: {t} {{recast.param}}" for n, t in params) +
        f", %x: {act}) -> (tensor<f32>, " + ", ".join(t for _, t in params) +
        ") {",
        "    %loss, " + ", ".join(f"%{n}_g" for n, _ in params) +
        " = recast.value_and_grad @loss(" +
        ", ".join(f"%{n}" for n, _ in params) + ", %x) {wrt = array<i64: " +
        ", ".join(str(k) for k in range(len(params))) + ">} : (" +
        ", ".join(t for _, t in params) + f", {act}) -> (tensor<f32>, " +
        ", ".join(t for _, t in params) + ")",
    ]
    for n, t in params:
        rank = 2 if t == wt else 1
        maps = "#id" if rank == 2 else "affine_map<(d0) -> (d0)>"
        iters = ", ".join(['"parallel"'] * rank)
        lines += [
            f"    %{n}_e = tensor.empty() : {t}",
            f"    %{n}_new = linalg.generic {{indexing_maps = [{maps}, {maps}, "
            f"{maps}], iterator_types = [{iters}]}} ins(%{n}, %{n}_g : {t}, "
            f"{t}) outs(%{n}_e : {t}) {{",
            "    ^bb0(%p: f32, %g: f32, %o: f32):",
            "      %lr = arith.constant 0.05 : f32",
            "      %d = arith.mulf %g, %lr : f32",
            "      %u = arith.subf %p, %d : f32",
            "      linalg.yield %u : f32",
            f"    }} -> {t}",
        ]
    lines += [
        "    return %loss, " + ", ".join(f"%{n}_new" for n, _ in params) +
        " : tensor<f32>, " + ", ".join(t for _, t in params),
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def run(options, name, text, extra):
    path = os.path.join(options.workdir, name + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    save = os.path.join(options.workdir, name)
    cmd = [options.recast_run, path, "--entry=train_step", "--steps=3",
           "--seed=5", "--report=json", f"--save={save}"] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{result.stderr}")
    return save, json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recast-run", required=True)
    parser.add_argument("--workdir", required=True)
    options = parser.parse_args()
    os.makedirs(options.workdir, exist_ok=True)

    base_dir, base = run(options, "plain", mlp(False), [])
    files = sorted(f for f in os.listdir(base_dir) if f.endswith(".npy"))
    losses = np.load(os.path.join(base_dir, "losses.npy"))
    if not (np.all(np.isfinite(losses)) and losses[-1] < losses[0]):
        sys.exit(f"FAIL: the plain MLP does not train: losses {losses}")

    variants = [
        ("checkpoint", mlp(True), []),
        ("full", mlp(False), ["--remat=full"]),
        ("recompute-mark", mlp(False, mark_recompute=True), []),
    ]
    failed = False
    for name, text, extra in variants:
        out_dir, report = run(options, name, text, extra)
        same = all(np.array_equal(np.load(os.path.join(base_dir, f)),
                                  np.load(os.path.join(out_dir, f)))
                   for f in files)
        lower = report["measured_peak_bytes"] < base["measured_peak_bytes"]
        ok = same and lower
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: bitwise equal {same}; "
              f"measured peak {report['measured_peak_bytes']} vs "
              f"{base['measured_peak_bytes']} bytes without recomputation "
              f"(static {report['static_peak_bytes']} vs "
              f"{base['static_peak_bytes']})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
