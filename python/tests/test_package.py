"""`import recast` stays light: no native extension until the API is used."""

import os
import subprocess
import sys


def run_python(code, root, **env):
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(root, "python"), **env))


def test_import_does_not_load_the_extension(root):
    result = run_python(
        "import sys, recast; print('recast._recast' in sys.modules)", root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_builder_is_part_of_the_package(root):
    result = run_python(
        "from recast.builder import Model; import recast.zoo\n"
        "m = Model('t'); w = m.param('w', (4, 2)); x = m.input('x', (3, 4))\n"
        "m.set_loss(m.loss.reduce_sum(m.loss.matmul(x, w), dims=[0, 1]))\n"
        "print('recast.value_and_grad' in m.render_train_step(lr=0.1))", root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_api_names_load_lazily(root):
    result = run_python(
        "import recast; print(recast.compile.__module__, "
        "recast.RecastError.__mro__[1].__name__)", root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["recast.api", "Exception"]


def test_missing_extension_explains_itself(root, tmp_path):
    # A copy of the package without any build directory next to it.
    import shutil
    shutil.copytree(os.path.join(root, "python", "recast"),
                    tmp_path / "recast",
                    ignore=shutil.ignore_patterns("_recast*", "__pycache__"))
    result = subprocess.run(
        [sys.executable, "-c", "import recast; recast.compile"],
        capture_output=True, text=True, cwd=tmp_path,
        env={k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "RECAST_BUILD_DIR")})
    assert result.returncode != 0
    assert "native extension (recast._recast) is not built" in result.stderr
