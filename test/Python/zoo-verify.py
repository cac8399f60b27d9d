"""Every model of the zoo parses and verifies, stays within the forward op set,
and goes through the memory report.

  - `recast-opt --verify-each` on every examples/models/*.mlir (small and
    large configurations; the recast dialect is registered there);
  - @loss uses only the ops --recast-autodiff is meant to take (the list in
    python/recast/builder.py): at function level func, arith.constant,
    tensor.empty, linalg.fill, linalg.generic, the named linalg ops and tensor
    reshapes / slices / pad; inside bodies arith and math scalar ops,
    linalg.index, and the gathers of embeddings and of integer labels
    (tensor.extract behind a cf.assert bounds check). No scf, no
    linalg.softmax;
  - @train_step is recast.value_and_grad of @loss for every parameter plus
    SGD, and returns the loss and one new value per parameter;
  - `recast-opt --recast-memory-report=report=-` prints a report for @loss and
    @train_step.
"""

# RUN: %python %s --recast-opt=recast-opt --models=%examples/models

import argparse
import glob
import json
import os
import re
import subprocess
import sys

TOP_LEVEL_OPS = {
    "arith.constant", "tensor.empty", "linalg.fill", "linalg.generic",
    "linalg.matmul", "linalg.batch_matmul", "linalg.transpose", "linalg.broadcast",
    "linalg.conv_2d_nhwc_hwcf", "linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum",
    "tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice",
    "tensor.insert_slice", "tensor.pad",
}
BODY_OPS = {
    "arith.constant", "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf",
    "arith.maximumf", "arith.cmpf", "arith.cmpi", "arith.select", "arith.index_cast",
    "math.exp", "math.log", "math.tanh", "math.erf", "math.sqrt", "math.rsqrt",
    "linalg.index", "tensor.extract", "cf.assert",
}
TERMINATORS = {"linalg.yield", "tensor.yield", "return"}


def functions(text):
    """{name: body text} of the module's functions (the generator's layout:
    `  func.func ... @name(` ... `  }`)."""
    out = {}
    for m in re.finditer(r"^  func\.func (?:private )?@(\w+)\(.*?^  }$", text, re.M | re.S):
        out[m.group(1)] = m.group(0)
    return out


def check_loss_ops(body):
    """Ops of @loss outside the allowed sets, by nesting (4 spaces: function
    level, deeper: inside a region)."""
    bad = set()
    for line in body.split("\n"):
        m = re.match(r"^( +)(?:%[\w.]+(?::\d+)? = )?([a-z_]+\.[a-z_0-9]+|return)\b", line)
        if not m:
            continue
        depth, op = len(m.group(1)), m.group(2)
        if op in TERMINATORS or op == "func.func":
            continue
        allowed = TOP_LEVEL_OPS if depth == 4 else BODY_OPS
        if op not in allowed:
            bad.add("%s (%s)" % (op, "function level" if depth == 4 else "in a body"))
    return sorted(bad)


def check_train_step(body):
    params = re.findall(r"%(\w+): tensor<[^>]*> \{recast\.param", body)
    call = re.search(r"recast\.value_and_grad @loss\(.*?\{wrt = array<i64: ([\d, \n]*)>\}", body, re.S)
    if not call:
        return "no recast.value_and_grad @loss call"
    wrt = [int(i) for i in re.split(r"[,\s]+", call.group(1).strip())]
    if wrt != list(range(len(params))):
        return "wrt %s does not cover the %d parameters" % (wrt, len(params))
    ret = re.search(r"return (.*?) :", body, re.S)
    results = [r.strip() for r in ret.group(1).split(",")] if ret else []
    expected = ["%loss"] + ["%" + p + "_new" for p in params]
    if results != expected:
        return "returns %s, expected the loss and %d new parameters" % (results[:4], len(params))
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recast-opt", required=True)
    parser.add_argument("--models", required=True, help="examples/models")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(args.models, "*.mlir")))
    if not paths:
        print("FAIL no models in %s" % args.models)
        return 1
    failures = 0
    for path in paths:
        name = os.path.basename(path)
        problems = []
        verify = subprocess.run([args.recast_opt, "--verify-each", path, "-o", os.devnull],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if verify.returncode:
            problems.append("recast-opt --verify-each failed:\n" + verify.stdout[-2000:])
        with open(path) as f:
            funcs = functions(f.read())
        if set(funcs) != {"loss", "train_step"}:
            problems.append("functions %s, expected @loss and @train_step" % sorted(funcs))
        else:
            bad = check_loss_ops(funcs["loss"])
            if bad:
                problems.append("@loss uses ops outside the forward set: " + ", ".join(bad))
            step = check_train_step(funcs["train_step"])
            if step:
                problems.append("@train_step: " + step)
        report = subprocess.run([args.recast_opt, path, "--recast-memory-report=report=-", "-o", os.devnull],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        peaks = {}
        if report.returncode:
            problems.append("memory report failed:\n" + report.stderr[-2000:])
        else:
            try:
                peaks = {f["function"]: f["peak_bytes"] for f in json.loads(report.stdout)["functions"]}
            except (ValueError, KeyError) as err:
                problems.append("memory report is not the expected JSON: %s" % err)
            if set(peaks) != {"loss", "train_step"}:
                problems.append("memory report covers %s" % sorted(peaks))
        if problems:
            failures += 1
            print("FAIL %s:\n  %s" % (name, "\n  ".join(problems)))
        else:
            print("PASS %s: verifies, forward op set, memory report (@loss peak %d bytes)"
                  % (name, peaks["loss"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
