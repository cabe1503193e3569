"""The pipeline and its side-cars (hfgrow/components.py): the pipeline knows none of them; each declares the files
it owns, which --overwrite may replace."""

import ast
import json
from pathlib import Path

import hfgrow
from hfgrow.testing import build_bert

PACKAGE = Path(hfgrow.__file__).parent


def imported(module: str) -> set[str]:
    """The package modules ``hfgrow/<module>.py`` imports, at module level or inside a function."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
    return found


def test_the_pipeline_and_output_folder_know_no_side_car():
    for module in ("pipeline", "output", "tensors", "verification", "plan"):
        assert not imported(module) & {"sentence", "adapters", "training_state", "optim", "api"}, module


def sentence_folder_without_normalize_folder(folder: Path) -> Path:
    """A tiny BERT laid out as the Hub serves all-MiniLM-L6-v2: modules.json names 2_Normalize, which has no folder."""
    build_bert(folder, "BertModel")
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True}))
    return folder


def test_overwrite_of_a_sentence_folder_whose_normalize_has_no_folder(tmp_path):
    # the files the modules own were listed from every module's folder, the missing one included: "cannot list"
    src = sentence_folder_without_normalize_folder(tmp_path / "st")
    out = tmp_path / "big"
    hfgrow.grow(src, out, factor=2, verify=False)
    (out / ".hfgrow-files.json").unlink()  # no record: only what this growth writes may be replaced
    report = hfgrow.grow(src, out, factor=2, verify=False, overwrite=True)
    assert report["sentence_transformers"]["modules"][1] == {"module": "2_Normalize", "type": "Normalize"}
    assert (out / "2_Normalize" / "config.json").is_file() and "2_Normalize/" not in report["not_copied"]
