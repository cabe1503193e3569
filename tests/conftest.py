import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent  # the repository these tests belong to

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
if "PYTEST_XDIST_WORKER" in os.environ:  # `make test` runs one worker per core: one thread each, not a core's worth each
    os.environ.setdefault("OMP_NUM_THREADS", "1")

FULL = os.environ.get("HFGROW_FULL") == "1"

if "HFGROW_CACHE" not in os.environ:  # the skeletons' cache (hfgrow.skeleton_cache): this run's own, not the user's
    os.environ["HFGROW_CACHE"] = tempfile.mkdtemp(prefix="hfgrow-test-cache-")
    atexit.register(shutil.rmtree, os.environ["HFGROW_CACHE"], ignore_errors=True)


def pytest_configure(config):
    """Stop at once when hfgrow or its recipes come from outside this repository (an editable install of another
    checkout, a PYTHONPATH to a clone): the tests would then pass or fail for code they do not stand beside."""
    import hfgrow
    import hfgrow.recipes

    for module, home in ((hfgrow, ROOT / "hfgrow"), (hfgrow.recipes, ROOT / "recipes")):
        found = Path(module.__file__).resolve().parent
        if found != home:
            raise pytest.UsageError(f"{module.__name__} is imported from {found}, not from {home}: these tests would test "
                                    "another tree (install this checkout: pip install -e .)")


def pytest_collection_modifyitems(config, items):
    """`make test` runs a representative subset: tests marked exhaustive (the rest of the family × class × mode matrix)
    run with HFGROW_FULL=1 (all tests), with -m exhaustive (those alone: `make test-exhaustive` after `make test`), or when
    named by their node id."""
    if FULL or "exhaustive" in (config.getoption("markexpr") or ""):
        return
    named = {arg.replace(os.sep, "/") for arg in config.args if "::" in arg}
    left_out = [item for item in items if item.get_closest_marker("exhaustive") and item.nodeid not in named]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        kept = set(items) - set(left_out)
        items[:] = [item for item in items if item in kept]


@pytest.fixture(scope="session")
def bert_mlm(tmp_path_factory):
    """A tiny randomised BertForMaskedLM with a tokenizer (read-only: copy it before changing it)."""
    from hfgrow.testing import build_bert

    return build_bert(tmp_path_factory.mktemp("bert_mlm"), "BertForMaskedLM")
