"""recast.compile / Program.step / Module / solve over the C API."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import recast
from recast.api import parse_diagnostics

import recast_reference as ref


@pytest.fixture(scope="module")
def mlp():
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    return recast.compile(os.path.join(root, "examples", "mlp", "train_step.mlir"))


def test_arguments(mlp):
    assert [(a.name, a.role, a.element_type, a.shape) for a in mlp.arguments] == [
        ("w1", "param", "f32", (784, 256)), ("b1", "param", "f32", (256,)),
        ("w2", "param", "f32", (256, 10)), ("b2", "param", "f32", (10,)),
        ("x", "batch", "f32", (64, 784)), ("y", "batch", "f32", (64, 10))]
    assert [a.name for a in mlp.params] == ["w1", "b1", "w2", "b2"]
    assert [a.name for a in mlp.batch] == ["x", "y"]


def test_step_matches_numpy_reference(mlp):
    params, batch = mlp.init_params(seed=0), mlp.init_batch(seed=0)
    # The initial values are recast-run's (the reference reimplements them).
    expected = ref.init_arguments(
        [ref.ArgSpec("w1", (784, 256), param=True),
         ref.ArgSpec("b1", (256,), param=True),
         ref.ArgSpec("w2", (256, 10), param=True),
         ref.ArgSpec("b2", (10,), param=True),
         ref.ArgSpec("x", (64, 784)), ref.ArgSpec("y", (64, 10), init="onehot")], 0)
    for name, value in {**params, **batch}.items():
        np.testing.assert_array_equal(value, expected[name])
    before = {k: v.copy() for k, v in params.items()}
    loss, new = mlp.step(params, batch)
    for k in params:  # the inputs are not modified
        np.testing.assert_array_equal(params[k], before[k])
    want_loss, *want_params = ref.mlp_train_step(
        *[params[k] for k in ("w1", "b1", "w2", "b2")], batch["x"], batch["y"])
    assert loss == pytest.approx(float(want_loss), rel=1e-5)
    for name, want in zip(("w1", "b1", "w2", "b2"), want_params):
        np.testing.assert_allclose(new[name], want, rtol=1e-4, atol=1e-6)


def test_losses_match_recast_run(mlp, build_dir, mlp_path):
    losses, _ = mlp.train(mlp.init_params(0), mlp.init_batch(0), steps=3)
    out = subprocess.run(
        [os.path.join(build_dir, "bin", "recast-run"), "--steps=3",
         "--report=json", mlp_path], capture_output=True, text=True, check=True)
    assert losses == json.loads(out.stdout)["losses"]
    assert mlp.measured_peak_bytes > 0


def test_report_is_a_dict(mlp):
    report = mlp.report
    assert report["function"] == "train_step"
    assert report["peak_bytes"] == max(report["live_bytes"]) == 1885740
    assert report["num_steps"] == len(report["live_bytes"])


def test_mixed_precision_and_remat_options(mlp_path):
    program = recast.compile(mlp_path, mixed_precision="bf16", opt_level=0)
    loss, _ = program.step(program.init_params(0), program.init_batch(0))
    assert loss == pytest.approx(2.3118, abs=5e-3)
    # With the updates in place the FP32 gradients die at once; with the
    # updates at the end of the step, the gradients held until then make the
    # peak FP32's (parameters, gradients and new parameters). The bf16
    # copies of the weights keep either above FP32's 1885740 bytes on this
    # MLP, whose activations are small next to its weights.
    at_end = recast.compile(mlp_path, mixed_precision="bf16", opt_level=0,
                            update_in_place=False)
    assert program.report["peak_bytes"] == 1953324
    assert at_end.report["peak_bytes"] == 2634324
    with pytest.raises(recast.RecastError) as info:
        recast.compile(mlp_path, remat=0.5)
    error = info.value
    assert error.errors[0].location.endswith("train_step.mlir:26:3")
    assert "cannot fit @train_step" in error.errors[0].message


def test_step_argument_checks(mlp):
    params, batch = mlp.init_params(0), mlp.init_batch(0)
    with pytest.raises(KeyError, match="'x'"):
        mlp.step(params, {"y": batch["y"]})
    with pytest.raises(ValueError, match=r"'w1' has shape \(784, 256\)"):
        mlp.step(dict(params, w1=params["w1"].T), batch)
    with pytest.raises(KeyError, match="no argument named z"):
        mlp.step(params, dict(batch, z=batch["x"]))
    # An array of another dtype is refused (float64 would be rounded
    # silently); other layouts and plain Python lists are converted.
    with pytest.raises(TypeError, match="'w1' is f32, stored as float32; "
                                        "got an array of float64"):
        mlp.step(dict(params, w1=params["w1"].astype(np.float64)), batch)
    loss, _ = mlp.step({k: np.asfortranarray(v) for k, v in params.items()},
                       dict(batch, x=batch["x"].tolist()))
    assert loss == pytest.approx(2.311801, abs=1e-6)


def test_compile_errors_carry_diagnostics(mlp_path):
    with pytest.raises(recast.RecastError) as info:
        recast.compile("func.func @f() {\n  %x = \n}", filename="bad.mlir")
    [diag] = info.value.diagnostics
    assert (diag.location, diag.severity) == ("bad.mlir:2:7", "error")
    assert diag.message == "expected operation name in quotes"
    assert "%x =" in diag.excerpt
    with pytest.raises(recast.RecastError, match="no function @nope with a body"):
        recast.compile(mlp_path, entry="nope")
    with pytest.raises(FileNotFoundError):
        recast.compile("missing/model.mlir")


def test_module_pipelines_and_reports(mlp_path, models_dir):
    module = recast.parse(mlp_path)
    module.run("recast-autodiff,func.func(canonicalize)")
    assert "recast.value_and_grad" not in str(module)
    report = module.memory_report("train_step")
    assert report["peak_bytes"] == max(report["live_bytes"])
    assert [f["function"] for f in module.memory_report()["functions"]] == ["train_step"]
    with pytest.raises(recast.RecastError, match="does not refer to a registered pass"):
        module.run("no-such-pass")
    with pytest.raises(recast.RecastError, match="use bf16, f16"):
        module.run("recast-mixed-precision{compute-type=f4}")
    # Diagnostics carry the op's place in the source.
    model = os.path.join(models_dir, "mlp-small.mlir")
    with pytest.raises(recast.RecastError) as info:
        recast.parse(model).run("recast-mixed-precision")
    assert "run --recast-autodiff before it" in str(info.value)
    assert info.value.errors[0].location.startswith(model)
    with pytest.raises(recast.RecastError, match="no function @nope"):
        module.memory_report("nope")


def test_memory_report_helper(mlp_path):
    as_written = recast.memory_report(mlp_path, pipeline="")
    differentiated = recast.memory_report(mlp_path)
    assert differentiated["peak_bytes"] == 2634324
    assert as_written["function"] == differentiated["function"] == "train_step"


def test_solve(root):
    graph = os.path.join(root, "test", "Remat", "Inputs", "chain4.json")
    solution = recast.solve(graph, 1.0, solver="chain-dp")
    assert solution["graph"] == "chain4" and solution["optimal"]
    assert max(solution["step_bytes"]) == solution["peak_bytes"]
    with open(graph) as f:
        as_dict = json.load(f)
    tight = recast.solve(as_dict, 28)
    assert tight["peak_bytes"] <= 28
    assert tight["recomputations"] > 0
    with pytest.raises(recast.RecastError, match="no schedule fits the budget of 1 bytes"):
        recast.solve(as_dict, 1)
    with pytest.raises(recast.RecastError, match="expected 'edges'"):
        recast.solve({"nodes": 3}, 100)
    with pytest.raises(ValueError):
        recast.solve(as_dict, 1.5)


def test_parse_diagnostics():
    diags = parse_diagnostics(
        "a.mlir:1:2: error: bad\n  x = \n  ^\n"
        "a.mlir:3:4: note: see here\nerror: no location\n")
    assert [(d.location, d.severity, d.message) for d in diags] == [
        ("a.mlir:1:2", "error", "bad"), ("a.mlir:3:4", "note", "see here"),
        ("", "error", "no location")]
    assert diags[0].excerpt == "  x = \n  ^"


def test_compile_a_module(mlp_path):
    module = recast.parse(mlp_path)
    module.run("func.func(canonicalize)")
    program = recast.compile(module, opt_level=0)
    assert [a.name for a in program.arguments][:2] == ["arg0", "arg1"]
    loss, _ = program.step(program.init_params(0), program.init_batch(0))
    assert loss == pytest.approx(2.311801, abs=1e-6)
    assert "llvm.func" in str(module)  # lowered in place


def test_function_passes_nest_explicitly(models_dir):
    path = os.path.join(models_dir, "gpt-tiny.mlir")
    before = recast.memory_report(path)
    module = recast.parse(path)
    module.run("recast-autodiff,func.func(recast-remat{budget=0.85})")
    assert module.memory_report("train_step")["peak_bytes"] < before["peak_bytes"]
    with pytest.raises(recast.RecastError, match="did you intend to nest"):
        recast.parse(path).run("recast-autodiff,recast-remat{budget=0.8}")


def test_loss_scaling_and_fp8_options(models_dir):
    path = os.path.join(models_dir, "mlp-small.mlir")
    # Dynamic loss scaling adds its state (GradScaler's scale and growth
    # tracker), which the step carries like parameters.
    program = recast.compile(path, mixed_precision="f16",
                             loss_scale="dynamic", opt_level=0)
    state = [a for a in program.arguments if a.role == "state"]
    assert [(a.name, a.shape) for a in state] == [
        ("loss_scale", ()), ("loss_scale_growth_tracker", ())]
    params = program.init_params(0)
    assert params["loss_scale"] == 65536.0
    loss, updated = program.step(params, program.init_batch(0))
    assert loss == pytest.approx(2.3118, abs=5e-3)
    assert updated["loss_scale"] == 65536.0
    assert updated["loss_scale_growth_tracker"] == 1.0

    # The FP8 options reach the pass: the current recipe keeps no amax
    # history, the delayed one carries it as state.
    current = recast.compile(path, mixed_precision="fp8", fp8_recipe="current",
                             margin=1, fp8_keep_first_last=False, opt_level=0)
    assert not [a for a in current.arguments if a.role == "state"]
    delayed = recast.compile(path, mixed_precision="fp8", amax_history=4,
                             opt_level=0)
    histories = [a for a in delayed.arguments
                 if a.name.startswith("fp8_amax_history_")]
    assert histories and all(a.role == "state" and a.shape == (4,)
                             for a in histories)
    loss, _ = current.step(current.init_params(0), current.init_batch(0))
    assert loss == pytest.approx(2.3118, abs=0.02)

    with pytest.raises(recast.RecastError, match="compute type fp8, not 'bf16'"):
        recast.compile(path, mixed_precision="bf16", fp8_recipe="current")
    with pytest.raises(recast.RecastError, match="loss-scale"):
        recast.compile(path, mixed_precision="f16", loss_scale="sometimes")
    # Values are checked once, by the pass.
    with pytest.raises(recast.RecastError, match=r"amax-history=0 must be in"):
        recast.compile(path, mixed_precision="fp8", amax_history=0)
    # Option names too, by the pipeline.
    with pytest.raises(recast.RecastError, match="no-such-option"):
        recast.compile(path, no_such_option=1)


def test_saved_activations_option(models_dir):
    path = os.path.join(models_dir, "gpt-tiny.mlir")
    # The attention's FP32 exponentials are saved for the backward in bf16 by
    # default; "as-computed" keeps them FP32.
    default = recast.compile(path, mixed_precision="bf16", opt_level=0)
    kept = recast.compile(path, mixed_precision="bf16", opt_level=0,
                          saved_activations="as-computed")
    assert (default.report["saved_activation_bytes"]
            < kept.report["saved_activation_bytes"])
    assert (default.report["saved_param_copy_bytes"]
            == kept.report["saved_param_copy_bytes"] > 0)
    with pytest.raises(recast.RecastError, match="saved-activations='f8'"):
        recast.compile(path, mixed_precision="bf16", saved_activations="f8")
    with pytest.raises(recast.RecastError,
                       match="saved-activations applies to mixed precision"):
        recast.compile(path, saved_activations="as-computed")


def test_precision_policy_and_fp8_other_type(models_dir, tmp_path):
    path = os.path.join(models_dir, "mlp-small.mlir")
    # A policy file reaches the pass: with linalg.matmul out of the
    # contractions the matmuls and their gradients read the FP32 batch, so
    # no bf16 copy of it is saved for the backward; the step still trains.
    policy = tmp_path / "policy.json"
    policy.write_text('{"contraction": {"remove": ["linalg.matmul"]}}')
    default = recast.compile(path, mixed_precision="bf16", opt_level=0)
    edited = recast.compile(path, mixed_precision="bf16", opt_level=0,
                            precision_policy=policy)
    assert (edited.report["saved_activation_bytes"]
            < default.report["saved_activation_bytes"])
    loss, _ = edited.step(edited.init_params(0), edited.init_batch(0))
    assert loss == pytest.approx(2.3118, abs=5e-3)
    with pytest.raises(recast.RecastError, match="unknown op 'linalg.matmull'"):
        policy.write_text('{"contraction": {"remove": ["linalg.matmull"]}}')
        recast.compile(path, mixed_precision="bf16", precision_policy=policy)
    with pytest.raises(recast.RecastError,
                       match="a precision policy applies to mixed precision"):
        recast.compile(path, precision_policy="contractions-only")
    # fp8_other_type reaches the pass too.
    with pytest.raises(recast.RecastError, match="fp8-other-type='f16'"):
        recast.compile(path, mixed_precision="fp8", fp8_other_type="f16")
    bf16_between = recast.compile(path, mixed_precision="fp8", opt_level=0,
                                  fp8_other_type="bf16")
    loss, _ = bf16_between.step(bf16_between.init_params(0),
                                bf16_between.init_batch(0))
    assert loss == pytest.approx(2.3118, abs=0.02)


def test_step_refuses_ids_outside_their_table(models_dir):
    # GPT-tiny's vocabulary has 128 tokens: id 128 would read past the
    # embedding and the logits.
    program = recast.compile(os.path.join(models_dir, "gpt-tiny.mlir"),
                             opt_level=0)
    params = program.init_params(0)
    tokens = program.init_batch(0)["tokens"]
    tokens[1, 5] = 128
    with pytest.raises(recast.RecastError,
                       match=r"batch argument %tokens holds 128 at element "
                             r"38, outside \[0, 128\)"):
        program.step(params, {"tokens": tokens})
    tokens[1, 5] = 127
    assert np.isfinite(program.step(params, {"tokens": tokens})[0])


def test_cpu_blas_kernels_for_this_cpu_after_numpy(root, build_dir):
    """numpy loads OpenBLAS before recast can name the core, and OpenBLAS
    0.3.21 takes recent Xeons for a generic "Prescott" (several times
    slower): recast's steps must still run OpenBLAS's kernels for this CPU,
    and train as recast-run does. recast runs its OpenBLAS on one thread
    (its own threads split the products): numpy's keeps its threads."""
    flags = open("/proc/cpuinfo").read()
    script = (
        "import ctypes, json, numpy, recast\n"
        "blas = ctypes.CDLL('libopenblas.so.0')\n"
        "blas.openblas_get_corename.restype = ctypes.c_char_p\n"
        "numpy_core = blas.openblas_get_corename().decode()\n"
        "threads = blas.openblas_get_num_threads()\n"
        "info = recast.cpu_blas()\n"
        "a = numpy.ones((64, 64), numpy.float32)\n"
        "program = recast.compile('examples/mlp/train_step.mlir')\n"
        "program.step(program.init_params(0), program.init_batch(0))\n"
        "assert blas.openblas_get_num_threads() == threads == 2, threads\n"
        "assert float((a @ a)[0, 0]) == 64.0\n"
        "print(json.dumps([numpy_core, info]))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    env["PYTHONPATH"] = os.path.join(root, "python")
    env["RECAST_BUILD_DIR"] = build_dir
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=root,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    numpy_core, info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["library"].startswith("libopenblas")
    if " avx512f " in flags:
        assert info["core"] == "SkylakeX", (numpy_core, info)
    elif " avx2 " in flags:
        assert info["core"] == "Haswell", (numpy_core, info)
    assert info["threads"] >= 1
