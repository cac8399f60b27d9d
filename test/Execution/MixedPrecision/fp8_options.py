"""Summarizes the runs of fp8-options.test: the FP8 state each saved and how
its losses compare. Usage: fp8-options.test.py DIR"""
import glob
import json
import os
import sys

import numpy as np

root = sys.argv[1]


def losses(name):
    return json.load(open(os.path.join(root, name + ".json")))["losses"]


def scales(name):
    return sorted(glob.glob(os.path.join(root, name, "fp8_scale_*.npy")),
                  key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))


def history(name, k):
    return np.load(os.path.join(root, name, "fp8_amax_history_%d.npy" % k))


d = scales("default")
h0 = history("default", 0)
print("default: scales %d, history %s, first amaxes %s" %
      (len(d), h0.shape, bool((h0[:3] > 0).all() and (h0[3:] == 0).all())))
print("current: scales %d, losses differ from default %s" %
      (len(scales("current")), losses("current") != losses("default")))
print("history: scales %d, history %s, losses equal default %s" %
      (len(scales("history")), history("history", 0).shape,
       losses("history") == losses("default")))
# The formats follow the tensors: forward E4M3 (448), gradients E5M2
# (57344); either way the scale times 2^3 times the amax is the format's max.
ok = True
for k, path in enumerate(scales("margin")):
    s = float(np.load(path))
    m = float(history("margin", k).max())
    ok &= any(np.isclose(s * 8 * m, fmax, rtol=1e-6) for fmax in (448, 57344))
print("margin: scales %d, scale * 2^3 * amax == FP8_MAX %s" %
      (len(scales("margin")), bool(ok)))
print("ends: scales %d, losses equal fp32 %s" %
      (len(scales("ends")), losses("ends") == losses("fp32")))
