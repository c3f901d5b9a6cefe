"""benchmarks/mutations.py plants each bug by replacing a text that must occur exactly once in the tree: a
template edited since leaves its mutant planting nothing (the GPU run then stops on it). Checked here, on the CPU,
so a template change that moves a mutation's text fails CI, not a device call."""
import pathlib

import pytest

from helpers import load_script

REPO = pathlib.Path(__file__).resolve().parents[1]


def _mutations():
    return load_script("mutations")


M = _mutations()


@pytest.mark.parametrize("mutation", M.MUTATIONS, ids=lambda m: m.key)
def test_each_planted_bug_finds_its_text_once(mutation):
    edits = [(mutation.path, mutation.old, mutation.new)] + ([M.EXTRA[mutation.key]] if mutation.key in M.EXTRA else [])
    for path, old, new in edits:
        count = (REPO / path).read_text().count(old)
        assert count == 1, f"mutation {mutation.key}: {old!r} occurs {count} times in {path} (expected once)"
        assert new != old
