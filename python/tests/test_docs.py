"""Every shell and Python example of README.md, docs/ and the examples'
READMEs runs as written, and their MLIR parses (test/Docs/run_doc_examples.py),
in this venv: the examples use torch and IREE where the docs say so."""

import glob
import os
import subprocess
import sys

CHECKER = ("test", "Docs", "run_doc_examples.py")


def run_checker(root, build_dir, files):
    return subprocess.run(
        [sys.executable, os.path.join(root, *CHECKER), "--root", root,
         "--build", build_dir, "--python", sys.executable, *files],
        capture_output=True, text=True)


def test_doc_examples_run(root, build_dir):
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "examples", "*",
                                           "README.md")))
    result = run_checker(root, build_dir, files)
    assert result.returncode == 0, result.stdout + result.stderr
    # The examples run scripts/ through the scratch directory's links: what
    # they set up (scripts/setup's recast.pth) still points at the checkout.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [sys.executable, "-c", "import recast; print(recast.__file__)"],
        cwd="/", env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert os.path.realpath(where.stdout.strip()).startswith(
        os.path.realpath(root)), where.stdout
    # The docs hold examples, and most of those that are commands run (IR
    # excerpts of before/after examples are skipped apart).
    lines = result.stdout.splitlines()
    passed = [l for l in lines if l.startswith("PASS ")]
    skipped = [l for l in lines
               if l.startswith("SKIP ") and "an excerpt of IR" not in l]
    assert len(passed) >= 20 and len(passed) > len(skipped), result.stdout
    # Whole-module IR in the docs parses: the remat guide's checkpoint and
    # random ops, the memory report's example in the pass reference.
    for example in ("PASS docs/Remat.md:", "PASS docs/Passes.md:"):
        assert any(l.startswith(example) for l in lines), result.stdout


def test_doc_checker_fails_on_drift(root, build_dir, tmp_path):
    """A failing command, an option a tool lacks in a block that cannot
    run, a tool that does not exist, a failing Python example and IR that
    does not verify are each reported; a working command and valid IR
    pass (indented in a list item too), a fragment marked as one is
    skipped."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```sh\n"
        "recast-opt examples/mlp/train_step.mlir "
        "--recast-memory-report=report=- -o /dev/null\n"
        "```\n\n"
        "```sh\n"
        "recast-run examples/mlp/train_step.mlir --steps=2 --no-such-option\n"
        "```\n\n"
        "<!-- doc-test: skip: stands for a long run -->\n"
        "```sh\n"
        "build/bin/recast-run step.mlir --steps=2 --nor-this-one=3\n"
        "```\n\n"
        "<!-- doc-test: skip: a tool that does not exist -->\n"
        "```sh\n"
        "recast-frobnicate x.mlir\n"
        "```\n\n"
        "```python\n"
        "import recast\n"
        "recast.compile('examples/mlp/train_step.mlir', remat=0.5)\n"
        "```\n\n"
        "```mlir\n"
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  return %x : tensor<4xf32>\n"
        "}\n"
        "```\n\n"
        "```mlir\n"
        "func.func @g(%x: tensor<4xf32>) -> tensor<8xf32> {\n"
        "  return %x : tensor<4xf32>\n"
        "}\n"
        "```\n\n"
        "<!-- doc-test: skip: a fragment -->\n"
        "```mlir\n"
        "%y = linalg.exp ins(%x : ...) ...\n"
        "```\n\n"
        "- a list item's block is indented:\n\n"
        "  ```mlir\n"
        "  func.func @h(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    return %x : tensor<4xf32>\n"
        "  }\n"
        "  ```\n")
    result = run_checker(root, build_dir, [str(doc)])
    assert result.returncode == 1
    lines = [l for l in result.stdout.splitlines() if not l.startswith(" ")]
    assert lines[0].startswith("PASS ")
    assert lines[1].startswith("FAIL ") and lines[1].endswith(":6:")
    assert "recast-run has no option --nor-this-one" in lines[2]
    assert "no tool recast-frobnicate" in lines[3]
    assert lines[4].startswith("FAIL ") and "cannot fit" in result.stdout
    assert lines[5].startswith("PASS ")
    assert lines[6].startswith("FAIL ") and "tensor<8xf32>" in result.stdout
    assert lines[7].startswith("SKIP ") and "a fragment" in lines[7]
    assert lines[8].startswith("PASS ")
