"""recast's Python API over the native extension (the C API).

    import recast
    program = recast.compile("examples/mlp/train_step.mlir", mixed_precision="bf16")
    params, batch = program.init_params(seed=0), program.init_batch(seed=0)
    loss, params = program.step(params, batch)
    program.report["peak_bytes"]

Errors from MLIR raise `RecastError`, whose `diagnostics` lists each
diagnostic (location, severity, message and the source excerpt if any).
"""

import json
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

try:
    from . import _recast
except ImportError as error:  # pragma: no cover - depends on the build
    raise ImportError(
        "recast's native extension (recast._recast) is not built: run "
        "scripts/setup and scripts/build, or set RECAST_BUILD_DIR to the "
        f"build directory ({error})") from None

__all__ = [
    "Argument", "Diagnostic", "Module", "Program", "RecastError", "compile",
    "memory_report", "parse", "solve",
]

# ---------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------

_DIAGNOSTIC = re.compile(
    r"^(?:(?P<location>.*?): )?(?P<severity>error|warning|remark|note): "
    r"(?P<message>.*)$")


@dataclass
class Diagnostic:
    """One diagnostic: `location` is "file:line:col" (or "" when it has
    none), `severity` error/warning/remark/note, `excerpt` the source lines
    the parser quotes under it."""
    location: str
    severity: str
    message: str
    excerpt: str = ""

    def __str__(self):
        head = f"{self.location}: " if self.location else ""
        text = f"{head}{self.severity}: {self.message}"
        return text + ("\n" + self.excerpt if self.excerpt else "")


def parse_diagnostics(text: str) -> List[Diagnostic]:
    """Splits the C API's diagnostic text into Diagnostics; lines that do
    not start a diagnostic (source excerpts, carets, continuation lines)
    belong to the one before."""
    result: List[Diagnostic] = []
    for line in text.splitlines():
        match = _DIAGNOSTIC.match(line)
        if match:
            result.append(Diagnostic(match.group("location") or "",
                                     match.group("severity"),
                                     match.group("message")))
        elif result:
            last = result[-1]
            last.excerpt = (last.excerpt + "\n" + line) if last.excerpt else line
        elif line.strip():
            result.append(Diagnostic("", "error", line))
    return result


class RecastError(Exception):
    """A failure reported by recast or MLIR. `diagnostics` holds every
    diagnostic emitted meanwhile; str() is their text."""

    def __init__(self, text: str, diagnostics: Optional[List[Diagnostic]] = None):
        self.text = text.rstrip("\n")
        self.diagnostics = (diagnostics if diagnostics is not None
                            else parse_diagnostics(text))
        super().__init__(self.text or "recast failed without a diagnostic")

    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def _raise(error: Exception):
    raise RecastError(str(error)) from None


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------

_context = None


def _default_context():
    global _context
    if _context is None:
        _context = _recast.Context()
    return _context


def _read_source(source: Union[str, os.PathLike], filename: Optional[str]) -> Tuple[str, str]:
    """(text, filename) of MLIR text or a path to a .mlir file."""
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source and "{" not in source
            and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return f.read(), filename or path
    if not isinstance(source, str):
        raise TypeError("source must be MLIR text or a path to a .mlir file")
    if "\n" not in source and source.endswith(".mlir"):
        raise FileNotFoundError(source)
    return source, filename or "<source>"


# ---------------------------------------------------------------------------
# Modules: pipelines and memory reports
# ---------------------------------------------------------------------------

class Module:
    """Parsed, verified IR in recast's context."""

    def __init__(self, native, filename: str):
        self._native = native
        self.filename = filename

    def run(self, pipeline: str) -> List[Diagnostic]:
        """Runs a textual pass pipeline in place ("recast-autodiff,
        func.func(recast-remat{budget=0.7})" or anchored on builtin.module).
        Returns the warnings and remarks; raises RecastError on failure."""
        try:
            return parse_diagnostics(self._native.run(pipeline))
        except _recast.NativeError as error:
            _raise(error)

    def memory_report(self, function: Optional[str] = None) -> dict:
        """The static memory report of `function` (docs/MemoryReport.md) as
        a dict, with "live_bytes" per step; all functions' reports in a
        {"functions": [...]} dict when `function` is None."""
        try:
            report = json.loads(self._native.memory_report(function or ""))
        except _recast.NativeError as error:
            _raise(error)
        return report["functions"][0] if function else report

    def __str__(self):
        return str(self._native)

    def __repr__(self):
        return f"<recast.Module {self.filename}>"


def parse(source: Union[str, os.PathLike], filename: Optional[str] = None) -> Module:
    """Parses MLIR text or a .mlir file; raises RecastError with the parser's
    diagnostics."""
    text, name = _read_source(source, filename)
    try:
        return Module(_recast.Module(_default_context(), text, name), name)
    except _recast.NativeError as error:
        _raise(error)


def memory_report(source, pipeline: str = "recast-autodiff",
                  function: str = "train_step") -> dict:
    """The memory report of `function` after running `pipeline` (empty: as
    written) on a parsed copy of `source`."""
    module = parse(source)
    if pipeline:
        module.run(pipeline)
    return module.memory_report(function)


# ---------------------------------------------------------------------------
# Programs: compiled training steps
# ---------------------------------------------------------------------------

_DTYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16,
    # bf16 travels as its raw 16 bits.
    "bf16": np.uint16,
    "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
    "i1": np.bool_,
}
_ROLES = {0: "param", 1: "state", 2: "batch"}


@dataclass
class Argument:
    """An argument of a compiled step: role is "param", "state" (carried
    from step to step, not differentiated) or "batch"."""
    name: str
    role: str
    element_type: str
    shape: Tuple[int, ...]
    position: int

    @property
    def dtype(self):
        return np.dtype(_DTYPES[self.element_type])


class Program:
    """A training step compiled for the CPU (recast-run's JIT path)."""

    def __init__(self, native):
        self._native = native
        self.arguments = [
            Argument(name, _ROLES[role], element, tuple(shape), position)
            for position, (name, role, element, _, shape)
            in enumerate(native.arguments)]
        self.report = json.loads(native.memory_report)
        self.diagnostics = parse_diagnostics(native.diagnostics)

    @property
    def params(self) -> List[Argument]:
        """The parameters and state, carried from step to step."""
        return [a for a in self.arguments if a.role != "batch"]

    @property
    def batch(self) -> List[Argument]:
        return [a for a in self.arguments if a.role == "batch"]

    @property
    def measured_peak_bytes(self) -> int:
        """Peak bytes of recast's tracking allocator during the last step."""
        return self._native.measured_peak_bytes

    def init_argument(self, name: str, seed: int = 0) -> np.ndarray:
        """The argument's initial value that recast-run --seed=seed uses."""
        arg = self._argument(name)
        out = np.empty(arg.shape, dtype=arg.dtype)
        try:
            self._native.init_argument(arg.position, seed, out)
        except _recast.NativeError as error:
            _raise(error)
        return out

    def init_params(self, seed: int = 0) -> Dict[str, np.ndarray]:
        return {a.name: self.init_argument(a.name, seed) for a in self.params}

    def init_batch(self, seed: int = 0) -> Dict[str, np.ndarray]:
        return {a.name: self.init_argument(a.name, seed) for a in self.batch}

    def step(self, params: Mapping[str, np.ndarray],
             batch: Mapping[str, np.ndarray]) -> Tuple[float, Dict[str, np.ndarray]]:
        """One training step: returns (loss, new params and state). The
        arrays given are not modified."""
        inputs = []
        for arg in self.arguments:
            source = params if arg.role != "batch" else batch
            if arg.name not in source:
                kind = "params" if arg.role != "batch" else "batch"
                raise KeyError(f"{kind} has no array for argument '{arg.name}'")
            given = source[arg.name]
            # An array of another dtype is refused, not converted: float64
            # data would be rounded without a word, and a float array for a
            # bf16 argument (raw uint16 bits) reinterpreted. Python numbers
            # and lists have no dtype of their own and are converted.
            if isinstance(given, (np.ndarray, np.generic)) and \
                    given.dtype != arg.dtype:
                bits = " (bf16 travels as its raw bits)" \
                    if arg.element_type == "bf16" else ""
                raise TypeError(
                    f"argument '{arg.name}' is {arg.element_type}, stored as "
                    f"{arg.dtype}{bits}; got an array of {given.dtype}")
            # asarray, not ascontiguousarray: that makes 0-d arrays 1-d.
            value = np.asarray(given, dtype=arg.dtype, order="C")
            if value.shape != arg.shape:
                raise ValueError(
                    f"argument '{arg.name}' has shape {arg.shape}, got {value.shape}")
            inputs.append(value)
        extra = set(params) - {a.name for a in self.params}
        extra |= set(batch) - {a.name for a in self.batch}
        if extra:
            raise KeyError(f"no argument named {', '.join(sorted(extra))}")
        updated = {a.name: np.empty(a.shape, dtype=a.dtype) for a in self.params}
        try:
            loss = self._native.step(inputs, list(updated.values()))
        except _recast.NativeError as error:
            _raise(error)
        return loss, updated

    def train(self, params, batch, steps: int) -> Tuple[List[float], Dict[str, np.ndarray]]:
        """`steps` steps on the same batch; returns the losses and params."""
        losses = []
        for _ in range(steps):
            loss, params = self.step(params, batch)
            losses.append(loss)
        return losses, params

    def __repr__(self):
        args = ", ".join(f"{a.name}: {a.role} {a.element_type}{list(a.shape)}"
                         for a in self.arguments)
        return (f"<recast.Program {self.report.get('function', '?')}({args}), "
                f"static peak {self.report.get('peak_bytes')} bytes>")

    def _argument(self, name) -> Argument:
        for arg in self.arguments:
            if arg.name == name:
                return arg
        raise KeyError(f"no argument named '{name}'")


def pipeline_options(**options) -> str:
    """The text of --recast-train-pipeline's options for keyword arguments
    named after them (mixed_precision="bf16" gives "mixed-precision=bf16");
    None leaves an option at its default, booleans are true/false, paths
    are quoted when they hold spaces. The pipeline itself checks names and
    values (docs/Passes.md lists them)."""
    parts = []
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        value = str(value)
        if " " in value:
            value = '"' + value + '"'
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


def compile(source: Union[str, os.PathLike, Module], *, entry: str = "train_step",
            opt_level: int = 2, filename: Optional[str] = None,
            approximate_math: bool = True, **options) -> Program:
    """Compiles a training step (MLIR text, a .mlir path, or a Module, which
    is transformed and lowered in place) for the CPU. A Module's arguments
    are named arg0, arg1, ... (the parser's names are not kept).

    approximate_math: tanh, exp, log, erf, ... as vectorizable polynomials
    (the default, as recast-run); False calls libm, to compare with other
    frameworks to the last bits.
    Every other keyword is an option of --recast-train-pipeline with `_` for
    `-` (docs/Passes.md; recast-run takes the same as flags), for instance:
    mixed_precision: "bf16", "f16" or "fp8" (also spelled "f8");
    loss_scale: "none", "static:<S>" or "dynamic" (GradScaler's algorithm;
      its scale and growth counter become state arguments of the program),
      with init_scale, growth_factor, backoff_factor, growth_interval,
      min_loss_scale;
    fp8_recipe ("delayed", "current"), fp8_contractions ("layers", "all"),
      amax_history, margin, fp8_keep_first_last, fp8_other_type ("f32",
      "bf16"): the FP8 options of mixed_precision="fp8"
      (docs/MixedPrecision.md);
    saved_activations: "compute-type" or "as-computed";
    precision_policy: "default", "contractions-only" or a JSON file;
    remat: a budget for --recast-remat: bytes (int), a fraction of the
      step's peak (float, e.g. 0.7), or a policy ("full", "selective");
    update_in_place: False keeps the updates at the end of the step.
    None leaves an option at its default.
    Raises RecastError with MLIR's diagnostics when anything fails."""
    if not 0 <= opt_level <= 3:
        raise ValueError("opt_level must be 0-3")
    settings = _recast.ProgramSettings()
    settings.entry = entry
    settings.pipeline_options = pipeline_options(**options)
    settings.opt_level = opt_level
    settings.approximate_math = approximate_math
    try:
        if isinstance(source, Module):
            native = _recast.Program(source._native, settings)
        else:
            text, name = _read_source(source, filename)
            native = _recast.Program(_default_context(), text, name, settings)
    except _recast.NativeError as error:
        _raise(error)
    return Program(native)


def cpu_blas() -> Dict[str, Union[str, int]]:
    """The GEMM library of CPU steps: `library` (the CBLAS loaded, "" for
    recast's reference loop), `core` (the CPU OpenBLAS runs its kernels for),
    `bf16_gemm` (how bf16 operands are multiplied) and `threads`. Loads the
    library on first use, as the first step does."""
    return dict(_recast.cpu_blas())


# ---------------------------------------------------------------------------
# The abstract rematerialization problem
# ---------------------------------------------------------------------------

def solve(graph: Union[dict, str, os.PathLike], budget: Union[int, float], *,
          solver: str = "auto", memory_model: str = "checkmate",
          time_limit: float = 60.0) -> dict:
    """Solves the remat problem of `graph` (recast's graph JSON or a
    networkx node-link graph: a dict, JSON text or a .json path) under
    `budget`: bytes (int) or a fraction of the peak of the graph's own order
    (float in (0, 1]). Returns recast-solve's JSON as a dict, with
    "step_bytes" (bytes live at each step of the schedule)."""
    if isinstance(graph, dict):
        text = json.dumps(graph)
    elif isinstance(graph, os.PathLike) or (
            isinstance(graph, str) and not graph.lstrip().startswith("{")):
        with open(os.fspath(graph), encoding="utf-8") as f:
            text = f.read()
    else:
        text = graph
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError("budget must be bytes (int) or a fraction (float)")
    if isinstance(budget, float):
        if not 0 < budget <= 1:
            raise ValueError("a fractional budget must be in (0, 1]")
        budget_bytes, ratio = 0, budget
    else:
        if budget < 0:
            raise ValueError("the budget must not be negative")
        budget_bytes, ratio = budget, 0.0
    try:
        return json.loads(_recast.solve_remat(text, budget_bytes, ratio, solver,
                                              memory_model, time_limit))
    except _recast.NativeError as error:
        _raise(error)
