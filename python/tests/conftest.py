"""pytest set-up: the package from this checkout, the build directory's
extension ($RECAST_BUILD_DIR, default <repository>/build)."""

import os
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("RECAST_BUILD_DIR", os.path.join(ROOT, "build"))
os.environ.setdefault("RECAST_BUILD_DIR", BUILD)
sys.path.insert(0, os.path.join(ROOT, "python"))
# The numpy reference models of the lit execution tests.
sys.path.insert(0, os.path.join(ROOT, "test", "Execution"))


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def build_dir():
    return BUILD


@pytest.fixture
def mlp_path():
    return os.path.join(ROOT, "examples", "mlp", "train_step.mlir")


@pytest.fixture
def models_dir():
    return os.path.join(ROOT, "examples", "models")
