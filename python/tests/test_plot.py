"""Memory timeline plots from the reports, for zoo models."""

import json
import os

import pytest

from recast import plot


def test_timelines_gpt_tiny(models_dir):
    data = plot.timelines(os.path.join(models_dir, "gpt-tiny.mlir"))
    labels = [t.label.split(" (")[0] for t in data.timelines]
    assert labels == ["fp32", "fp32 + remat", "bf16", "bf16 + remat"]
    peaks = dict(zip(labels, (t.peak_bytes for t in data.timelines)))
    # Each transformation lowers the peak of the training step.
    assert peaks["fp32 + remat"] < peaks["fp32"]
    assert peaks["bf16"] < peaks["fp32"]
    assert peaks["bf16 + remat"] < peaks["bf16"]
    for t in data.timelines:
        assert max(t.live_bytes) == t.peak_bytes
        assert t.live_bytes[t.peak_step] == t.peak_bytes
    assert not data.errors


def test_plot_writes_a_png(models_dir, tmp_path):
    data = plot.timelines(os.path.join(models_dir, "unet-small.mlir"),
                          budgets=(0.85,))
    path = plot.plot(data, str(tmp_path / "unet.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(path) > 10000


def test_failures_are_kept_not_raised(models_dir):
    # The MLP's peak is its weights and one matmul: no budget of 0.5 fits.
    data = plot.timelines(os.path.join(models_dir, "mlp-small.mlir"),
                          mixed_precision=None, budgets=(0.5,))
    assert [t.label for t in data.timelines] == ["fp32"]
    assert "cannot fit @train_step" in data.errors["fp32 + remat"]


def test_zoo_plots_and_summary(models_dir, tmp_path):
    summary = plot.plot_zoo(models_dir, str(tmp_path), only="gpt-tiny")
    assert list(summary) == ["gpt-tiny"]
    assert os.path.isfile(tmp_path / "gpt-tiny.png")
    with open(tmp_path / "summary.json") as f:
        written = json.load(f)
    assert written["gpt-tiny"]["peak_bytes"]["fp32"] == summary["gpt-tiny"]["peak_bytes"]["fp32"]


def test_timeout_stops_a_pipeline(models_dir):
    with pytest.raises(plot.TimedOut):
        plot._report(open(os.path.join(models_dir, "gpt-tiny.mlir")).read(),
                     "gpt-tiny.mlir", "recast-autodiff", "train_step",
                     timeout=1e-4)


def test_command_line(models_dir, tmp_path, capsys):
    out = tmp_path / "gpt.svg"
    assert plot.main([os.path.join(models_dir, "gpt-tiny.mlir"), "-o", str(out),
                      "--mixed-precision", "none", "--budgets", "0.85"]) == 0
    assert out.read_text().lstrip().startswith("<?xml")
    assert "fp32 + remat (budget 0.85): peak" in capsys.readouterr().out
