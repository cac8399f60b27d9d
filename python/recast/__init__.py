"""recast's Python package.

Pure Python, importable without a built recast:

- `recast.builder` writes MLIR training graphs as text, and `recast.zoo` uses
  it to generate the model zoo in examples/models;
- `recast.torch` exports PyTorch models through torch-mlir into training
  steps (needs torch and torch-mlir: the venv of scripts/setup).

Backed by the native extension `recast._recast` (nanobind over the C API,
built by CMake into <build>/python/recast), loaded on first use:

- `recast.compile(source, ...) -> Program`, `Program.step(params, batch)`;
- `recast.parse(source) -> Module`: pipelines and memory reports on IR;
- `recast.solve(graph, budget)`: the abstract rematerialization problem;
- `recast.cpu_blas()`: the BLAS the CPU steps use, its core and threads;
- `recast.RecastError`: MLIR's diagnostics as an exception;
- `recast.plot`: memory timelines from the reports (matplotlib).

The extension is looked up next to this file (an installed tree), then in
$RECAST_BUILD_DIR/python/recast, then in <repository>/build/python/recast.
"""

import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))


def _extension_dirs():
    dirs = []
    build = _os.environ.get("RECAST_BUILD_DIR")
    if build:
        dirs.append(_os.path.join(build, "python", "recast"))
    dirs.append(_os.path.join(_here, "..", "..", "build", "python", "recast"))
    return [_os.path.normpath(d) for d in dirs if _os.path.isdir(d)]


# The extension module may live in a build tree: make it part of the package.
for _d in _extension_dirs():
    if _d not in __path__:
        __path__.append(_d)

_API = {
    "compile", "parse", "solve", "memory_report", "cpu_blas", "Program",
    "Module",
    "Argument", "Diagnostic", "RecastError",
}


def __getattr__(name):
    # The API loads the native extension; `import recast` alone does not.
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'recast' has no attribute '{name}'")


def __dir__():
    return sorted(list(globals()) + list(_API))
