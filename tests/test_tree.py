"""The suite tests the tree it stands in: run from a second clone, it stops before any test."""

import shutil
import subprocess
import sys
from pathlib import Path


def test_a_clone_whose_package_is_imported_from_elsewhere_stops_at_once(tmp_path):
    # a clone holding the same tests but not the package: hfgrow then comes from this checkout's install, not the clone's
    (tmp_path / "tests").mkdir()
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "tests" / "conftest.py")
    (tmp_path / "tests" / "test_nothing.py").write_text("def test_passes():\n    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          str(tmp_path / "tests")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "1 passed" not in run.stdout
    assert f"not from {tmp_path / 'hfgrow'}" in run.stdout + run.stderr


def test_this_tree_is_the_one_imported():
    import hfgrow
    import hfgrow.recipes

    root = Path(__file__).resolve().parent.parent
    assert Path(hfgrow.__file__).resolve().parent == root / "hfgrow"
    assert Path(hfgrow.recipes.__file__).resolve().parent == root / "recipes"
