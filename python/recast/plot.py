"""Memory timelines: bytes live at each step of a training step, from
recast's static memory reports, before and after rematerialization and mixed
precision. The picture to look at when choosing a budget.

    python3 -m recast.plot examples/models/gpt-tiny.mlir -o gpt-tiny.png
    python3 -m recast.plot --zoo examples/models --only small -o build/plots

Each variant runs a pass pipeline on a fresh parse of the model through the
C API and takes the memory report of @train_step ("live_bytes"):

    fp32            recast-autodiff
    fp32 + remat    recast-autodiff, recast-remat{budget=B solver=greedy}
    bf16            recast-autodiff, recast-mixed-precision{compute-type=bf16}
    bf16 + remat    both

B is the smallest of `budgets` (fractions of the variant's own peak) that
the greedy solver meets; a variant that fails is left out of the picture and
its error kept in the result. Steps are the op order of each variant's IR
(remat adds recomputations, so each curve is drawn over its own length).
"""

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

DEFAULT_BUDGETS = (0.6, 0.7, 0.8, 0.9, 0.95)
DEFAULT_TIMEOUT = 30.0
REMAT_LIMIT_BYTES = 256 * 2**20


@dataclass
class Timeline:
    label: str
    pipeline: str
    live_bytes: List[int]
    peak_bytes: int
    peak_step: int
    peak_op: str = ""


@dataclass
class Timelines:
    source: str
    entry: str
    timelines: List[Timeline] = field(default_factory=list)
    errors: Dict[str, str] = field(default_factory=dict)
    notes: Dict[str, str] = field(default_factory=dict)

    def peaks(self) -> Dict[str, int]:
        return {t.label: t.peak_bytes for t in self.timelines}

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "entry": self.entry,
            "peak_bytes": self.peaks(),
            "pipelines": {t.label: t.pipeline for t in self.timelines},
            "errors": self.errors,
            "notes": self.notes,
        }


class TimedOut(Exception):
    pass


def _report_in_process(text, filename, pipeline, entry):
    from . import api
    module = api.parse(text, filename=filename)
    module.run(pipeline)
    return module.memory_report(entry)


def _child(connection, args):
    from . import api
    try:
        connection.send(("ok", _report_in_process(*args)))
    except api.RecastError as error:
        connection.send(("error", error.text))
    except BaseException as error:  # MemoryError from std::bad_alloc, ...
        connection.send(("error", f"error: {type(error).__name__}: {error}"))
    connection.close()


def _report(text: str, filename: str, pipeline: str, entry: str,
            timeout: Optional[float] = None) -> dict:
    """The memory report of `entry` after `pipeline`. With a timeout, the
    pipeline runs in a forked process that is stopped when it runs longer
    (a remat search can take minutes on some budgets)."""
    from . import api
    if not timeout:
        return _report_in_process(text, filename, pipeline, entry)
    import multiprocessing
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child, args=(sender, (text, filename, pipeline, entry)))
    process.start()
    sender.close()
    try:
        if not receiver.poll(timeout):
            raise TimedOut(f"timed out after {timeout:g} s")
        status, value = receiver.recv()
    except EOFError:
        status, value = "error", "error: the pipeline's process died"
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    if status == "error":
        raise api.RecastError(value)
    return value


def _timeline(label, pipeline, report) -> Timeline:
    return Timeline(label, pipeline, list(report["live_bytes"]),
                    report["peak_bytes"], report["peak_step"],
                    report.get("peak_op", ""))


def timelines(source, *, entry: str = "train_step",
              mixed_precision: Optional[str] = "bf16",
              budgets: Sequence[float] = DEFAULT_BUDGETS,
              remat_limit_bytes: int = REMAT_LIMIT_BYTES,
              timeout: Optional[float] = DEFAULT_TIMEOUT) -> Timelines:
    """The four variants' timelines of `source` (a .mlir path or text).
    Remat is not tried on a variant whose peak exceeds remat_limit_bytes
    (the paper-scale zoo models: minutes and gigabytes of search). Each
    pipeline gets `timeout` seconds (None: no limit, in this process)."""
    from . import api
    text, filename = api._read_source(source, None)
    result = Timelines(filename, entry)
    precisions = [("fp32", "recast-autodiff")]
    if mixed_precision:
        precisions.append(
            (mixed_precision,
             "recast-autodiff{gradient-origins=true},"
             f"recast-mixed-precision{{compute-type={mixed_precision}}}"))
    for name, base in precisions:
        try:
            result.timelines.append(
                _timeline(name, base,
                          _report(text, filename, base, entry, timeout)))
        except (api.RecastError, TimedOut) as error:
            result.errors[name] = str(error)
            continue
        label = f"{name} + remat"
        failures = []
        if result.timelines[-1].peak_bytes > remat_limit_bytes:
            result.errors[label] = (
                f"skipped: the peak is above {remat_limit_bytes} bytes "
                "(remat_limit_bytes)")
            continue
        found = False
        for budget in sorted(budgets):
            pipeline = (base + f",func.func(recast-remat{{budget={budget} "
                        "solver=greedy})")
            try:
                report = _report(text, filename, pipeline, entry, timeout)
            except TimedOut as error:
                # Larger budgets would likely search as long: stop here.
                failures.append(f"budget {budget}: {error}")
                break
            except api.RecastError as error:
                message = error.errors[0].message if error.errors else str(error)
                failures.append(f"budget {budget}: {message}")
                continue
            result.timelines.append(
                _timeline(f"{label} (budget {budget})", pipeline, report))
            found = True
            break
        if not found:
            result.errors[label] = "; ".join(failures) or "no budget given"
        elif failures:
            result.notes[label] = "; ".join(failures)
    return result


def plot(data: Timelines, path: str, title: Optional[str] = None) -> str:
    """Draws `data` into `path` (PNG, SVG or PDF by its suffix) with
    matplotlib's Agg backend; returns the path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peak = max((t.peak_bytes for t in data.timelines), default=1)
    unit, scale = (("MiB", 2**20) if peak >= 2**20 else
                   ("KiB", 2**10) if peak >= 2**10 else ("bytes", 1))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for t in data.timelines:
        # Remat adds recomputations: each curve spans its own op count,
        # drawn over the same width.
        n = max(len(t.live_bytes), 1)
        xs = [i / n for i in range(len(t.live_bytes))]
        ys = [b / scale for b in t.live_bytes]
        line, = ax.step(xs, ys, where="post", linewidth=1,
                        label=f"{t.label}: peak {t.peak_bytes / scale:.2f} "
                        f"{unit}, {n} steps")
        ax.plot([t.peak_step / n], [t.peak_bytes / scale], "o",
                color=line.get_color(), markersize=4)
    ax.set_xlabel("position in the training step (fraction of its steps, "
                  "op order)")
    ax.set_xlim(0, 1)
    ax.set_ylabel(f"live ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(title or f"{os.path.basename(data.source)}: @{data.entry}, "
                 "static memory report")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    if data.errors:
        note = "; ".join(f"{k}: failed" for k in data.errors)
        fig.text(0.01, 0.01, note, fontsize=7, color="gray")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_zoo(models_dir: str, out_dir: str, only: Optional[str] = None,
             **kwargs) -> Dict[str, dict]:
    """A timeline plot per zoo model (`only`: substring filter of the
    names) into out_dir/<model>.png, and out_dir/summary.json with each
    model's peaks and errors. Returns the summary."""
    summary = {}
    for name in sorted(os.listdir(models_dir)):
        if not name.endswith(".mlir") or (only and only not in name):
            continue
        model = name[:-len(".mlir")]
        data = timelines(os.path.join(models_dir, name), **kwargs)
        entry = data.to_dict()
        if data.timelines:
            entry["plot"] = plot(data, os.path.join(out_dir, model + ".png"),
                                 title=f"{model}: bytes live per step")
        summary[model] = entry
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
    return summary


def _short(text: str, width: int = 160) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= width else line[:width - 3] + "..."


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m recast.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", help="a training step .mlir")
    parser.add_argument("--zoo", metavar="DIR",
                        help="plot every .mlir of DIR (examples/models)")
    parser.add_argument("--only", help="with --zoo: names containing this")
    parser.add_argument("--remat-limit", type=int, default=REMAT_LIMIT_BYTES,
                        help="skip remat above this peak (bytes)")
    parser.add_argument("-o", "--out", required=True,
                        help="the image (one model) or directory (--zoo)")
    parser.add_argument("--entry", default="train_step")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds per pipeline (0: no limit)")
    parser.add_argument("--mixed-precision", default="bf16",
                        help="bf16, f16, or none")
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)),
                        help="remat budgets to try, smallest first")
    args = parser.parse_args(argv)
    kwargs = dict(entry=args.entry,
                  mixed_precision=None if args.mixed_precision == "none"
                  else args.mixed_precision,
                  budgets=[float(b) for b in args.budgets.split(",") if b],
                  remat_limit_bytes=args.remat_limit,
                  timeout=args.timeout or None)
    if bool(args.model) == bool(args.zoo):
        parser.error("give one model or --zoo DIR")
    if args.zoo:
        summary = plot_zoo(args.zoo, args.out, args.only, **kwargs)
        for model, entry in summary.items():
            peaks = ", ".join(f"{k} {v}" for k, v in entry["peak_bytes"].items())
            print(f"{model}: {peaks}")
            for k, v in entry["errors"].items():
                print(f"  {k} failed: {_short(v)}")
        return 0
    data = timelines(args.model, **kwargs)
    if not data.timelines:
        for k, v in data.errors.items():
            print(f"{k}: {v}", file=sys.stderr)
        return 1
    plot(data, args.out)
    for t in data.timelines:
        print(f"{t.label}: peak {t.peak_bytes} bytes at step {t.peak_step}")
    for k, v in data.errors.items():
        print(f"{k} failed: {_short(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
