# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "RECAST"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.recast_obj_root, "test")
# Inputs and helper modules are not tests; Unit/ is its own suite.
config.excludes = ["Inputs", "lib", "Unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "recast_reference.py"]

config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "ASAN_OPTIONS",
                                     "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

# A sanitized build (scripts/sanitize): Python is not instrumented, so the
# ASan runtime that recast's C API needs is preloaded into it; CPython's own
# allocations at exit are not leaks of recast's.
if config.recast_asan_runtime:
    config.substitutions.append(
        ("%python", "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0 %s"
         % (config.recast_asan_runtime, config.python_executable)))
    config.available_features.add("asan")
else:
    config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%recast_src_root", config.recast_src_root))
config.substitutions.append(("%recast_obj_root", config.recast_obj_root))
config.substitutions.append(("%examples", os.path.join(config.recast_src_root, "examples")))

tool_dirs = [config.recast_tools_dir, config.llvm_tools_dir]
tools = ["recast-opt", "recast-run", "mlir-opt", "mlir-runner",
         "recast-fuzz-graph", "recast-fuzz-mlir", "recast-fuzz-npy",
         "recast-fuzz-policy",
         ToolSubst("recast-solve", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.recast_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Shared libraries of the MLIR runner, for tests that run lowered code with
# upstream mlir-runner.
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils", os.path.join(config.llvm_tools_dir, "..", "lib", "libmlir_c_runner_utils.so")))

# CPUs with AVX-512, on which recast names OpenBLAS's kernels for it.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if " avx512f" in cpuinfo.read():
            config.available_features.add("avx512")
except OSError:
    pass
