"""The committed model zoo is exactly what the generator writes.

Regenerates examples/models into a scratch directory with
python/recast/zoo.py and compares the two directories file by file, byte for
byte: a change to the builder or the zoo must come with regenerated files
(scripts/gen-models), and the generator must not depend on anything but its
code (no dates, paths, dict or hash ordering).
"""

# RUN: %python %s --root=%recast_src_root --workdir=%t

import argparse
import difflib
import filecmp
import os
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", required=True, help="the source tree")
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()

    committed = os.path.join(args.root, "examples", "models")
    fresh = os.path.join(os.path.abspath(args.workdir), "models")
    shutil.rmtree(fresh, ignore_errors=True)
    generator = os.path.join(args.root, "python", "recast", "zoo.py")
    # Two runs: the output must not depend on the run either.
    for out in (fresh, fresh + "-again"):
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, generator, "--out", out], check=True)

    failures = []
    names = sorted(set(os.listdir(committed)) | set(os.listdir(fresh)))
    for name in names:
        a, b = os.path.join(committed, name), os.path.join(fresh, name)
        if not os.path.exists(a):
            failures.append("%s is generated but not committed" % name)
        elif not os.path.exists(b):
            failures.append("%s is committed but no longer generated" % name)
        elif not filecmp.cmp(a, b, shallow=False):
            with open(a) as fa, open(b) as fb:
                diff = list(difflib.unified_diff(fa.readlines(), fb.readlines(),
                                                 "committed/" + name, "generated/" + name, n=1))
            failures.append("%s differs from the generator's output:\n%s"
                            % (name, "".join(diff[:40])))
        elif not filecmp.cmp(b, os.path.join(fresh + "-again", name), shallow=False):
            failures.append("%s differs between two runs of the generator" % name)
    if failures:
        print("FAIL: examples/models is out of date; run scripts/gen-models\n" + "\n".join(failures))
        return 1
    print("PASS %d files in examples/models match the generator byte for byte" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
