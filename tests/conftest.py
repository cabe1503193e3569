import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


@pytest.fixture(scope="session")
def bert_mlm(tmp_path_factory):
    """A tiny randomised BertForMaskedLM with a tokenizer (read-only: copy it before changing it)."""
    from hfgrow.testing import build_bert

    return build_bert(tmp_path_factory.mktemp("bert_mlm"), "BertForMaskedLM")
