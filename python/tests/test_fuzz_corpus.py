"""The committed fuzz corpora (fuzz/corpus, docs/Fuzzing.md) through the
Python entry points: every input is accepted or refused with RecastError
(a TypeError or ValueError for arguments of the wrong kind), and the
interpreter never dies. The C++ harnesses replay the same files in
test/Fuzz; this covers the C API and the extension module above them."""

import os

import pytest

import recast

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus")


def corpus(harness):
    folder = os.path.join(CORPUS, harness)
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            yield name, f.read().decode("utf-8", errors="replace")


def test_mlir_corpus_parses_reports_and_compiles_or_refuses():
    compiled = refused = 0
    for name, text in corpus("mlir"):
        try:
            module = recast.parse(text, filename=name)
        except recast.RecastError as error:
            assert error.errors, name
            refused += 1
            continue
        try:
            module.memory_report()
        except recast.RecastError:
            pass
        if "train_step" not in text and "recast.param" not in text:
            continue
        try:
            recast.compile(text, filename=name, mixed_precision="bf16",
                           remat=0.8)
            compiled += 1
        except recast.RecastError as error:
            assert str(error), name
            refused += 1
    # The seeds alone hold steps that compile and inputs that are refused.
    assert compiled > 0 and refused > 0


def test_graph_corpus_solves_or_refuses():
    solved = 0
    for name, text in corpus("graph"):
        graph = text.split("\n----\n")[0]
        if not graph.lstrip().startswith("{"):
            graph = "{}"  # solve() reads other text as a path
        for budget in (0.5, 1.0):
            try:
                result = recast.solve(graph, budget, time_limit=1.0)
                assert result["peak_bytes"] >= 0, name
                solved += 1
            except recast.RecastError as error:
                assert str(error), name
    assert solved > 0
