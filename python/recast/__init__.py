"""recast's Python package.

`recast.builder` writes MLIR training graphs as text (no MLIR bindings
needed) and `recast.zoo` uses it to generate the model zoo in
examples/models. Importing the package itself loads nothing else, so the
pure-Python tools stay usable without a built recast.
"""
