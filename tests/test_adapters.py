"""PEFT LoRA adapters grown with their base: built with PEFT on tiny randomised models, loaded back with PEFT."""

import json
from pathlib import Path

import pytest
import torch

import hfgrow
from hfgrow.testing import build_bert, build_model, load

peft = pytest.importorskip("peft")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")  # PEFT's notes


def make_adapter(src, folder, seed=0, **lora):
    """A LoRA adapter on the model in ``src``, every adapter weight random (PEFT starts B at zero)."""
    model = peft.get_peft_model(load(src), peft.LoraConfig(lora_dropout=0.0, **lora))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.requires_grad:  # everything the adapter saves: LoRA, modules_to_save, biases with bias="all"
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5)
    model.save_pretrained(folder)
    return folder


IDS = torch.randint(2, 90, (2, 7), generator=torch.Generator().manual_seed(1))


def logits(base, adapter=None):
    model = load(base) if adapter is None else peft.PeftModel.from_pretrained(load(base), str(adapter))
    with torch.no_grad():
        return model.eval()(input_ids=IDS, attention_mask=torch.ones_like(IDS)).logits


def rel(a, b):
    return ((a - b).abs().max() / a.abs().max()).item()


def check(src, adapter, out, **options):
    report = hfgrow.grow(src, out, adapters=[str(adapter)], **options)
    grown = out / "adapters" / adapter.name
    (a,) = report["adapters"]
    assert report["verification"]["passed"] and a["verification"]["max_rel"] <= 1e-5, a
    from peft.utils import load_peft_weights, set_peft_model_state_dict

    def keys_that_miss(base, folder):
        loaded = set_peft_model_state_dict(peft.PeftModel.from_pretrained(load(base), str(folder)), load_peft_weights(str(folder)))
        return set(loaded.unexpected_keys) | {k for k in loaded.missing_keys if "lora_" in k}

    assert keys_that_miss(out, grown) <= keys_that_miss(src, adapter)  # every key lands (PEFT's own quirks aside)
    small, big = logits(src, adapter), logits(out, grown)  # independently of hfgrow's own check
    assert rel(small, big) <= 1e-5
    assert rel(small, logits(src)) > 1e-2  # the adapter changes the model: a growth that dropped it would fail
    assert json.loads((grown / "adapter_config.json").read_text())["base_model_name_or_path"] == str(out)  # as given
    return report


def test_the_grown_adapter_names_its_base_as_the_user_gave_it(tmp_path, monkeypatch):
    """OUT typed relative is written relative (PEFT resolves it against the directory it loads from, as it would an
    absolute one, which would name a folder that moved away); pushed, the repository id, which resolves anywhere."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    build_model("tiny-llama", "LlamaForCausalLM")
    make_adapter(Path("tiny-llama"), "tiny-lora", **LLAMA)
    hfgrow.grow("tiny-llama", "llama-lora-x2", factor=2, adapters=["tiny-lora"], verify=False)
    assert json.loads(Path("llama-lora-x2/adapters/tiny-lora/adapter_config.json").read_text())["base_model_name_or_path"] == "llama-lora-x2"
    expected = logits("llama-lora-x2", "llama-lora-x2/adapters/tiny-lora")
    work.rename(tmp_path / "moved")  # the folder moves; loaded from where it now is
    monkeypatch.chdir(tmp_path / "moved")
    with torch.no_grad():
        model = peft.AutoPeftModelForCausalLM.from_pretrained("llama-lora-x2/adapters/tiny-lora", dtype=torch.float32,
                                                              attn_implementation="eager").eval()
        assert rel(expected, model(input_ids=IDS, attention_mask=torch.ones_like(IDS)).logits) == 0
    from hfgrow import hub

    monkeypatch.setattr(hub, "check_push", lambda *a, **k: None)
    monkeypatch.setattr(hub, "push", lambda *a, **k: "https://hub/me/llama-lora-x2")
    hfgrow.grow("tiny-llama", "pushed", factor=2, adapters=["tiny-lora"], verify=False, force=True, push_to_hub="me/llama-lora-x2")
    assert json.loads(Path("pushed/adapters/tiny-lora/adapter_config.json").read_text())["base_model_name_or_path"] == "me/llama-lora-x2"


LLAMA = dict(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])


@pytest.mark.parametrize("k,attention", [(2, "heads"), (3, "heads"), (2, "head-dim")])
def test_llama_lora_with_a_saved_head(tmp_path, k, attention):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", modules_to_save=["lm_head"], **LLAMA)
    report = check(src, adapter, tmp_path / "big", factor=k, attention=attention)
    if k == 2 and attention == "heads":  # a grown folder with its adapters/ is replaceable
        hfgrow.grow(src, tmp_path / "big", factor=k, adapters=[str(adapter)], overwrite=True, verify=False)
    assert report["adapters"][0]["full_tensors"] == 1 and report["adapters"][0]["lora_tensors"] == 2 * 7 * 2


def test_new_blocks_and_uneven_widths(tmp_path):
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "Qwen2ForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", init_lora_weights=False, **LLAMA)
    report = check(src, adapter, tmp_path / "big", hidden_size=24, intermediate_size=40, num_heads=6, layers=3)
    (new,) = report["plan"]["new_blocks"]["layers"]
    weights = load_file(tmp_path / "big" / "adapters" / "lora" / "adapter_model.safetensors")
    b = [v for k, v in weights.items() if f"layers.{new}." in k and "lora_B" in k]
    assert len(b) == 7 and all(not v.any() for v in b)  # the new block's adapter is written, B = 0: the identity


def test_gpt2_conv1d_fused_qkv_and_lora_bias(tmp_path):
    src = build_model(tmp_path / "small", "GPT2LMHeadModel")
    adapter = make_adapter(src, tmp_path / "lora", r=4, lora_alpha=4, target_modules=["c_attn", "c_proj", "c_fc"],
                           fan_in_fan_out=True, lora_bias=True)
    check(src, adapter, tmp_path / "big", factor=3)


def test_bert_classifier_and_embedding_lora(tmp_path):
    src = build_bert(tmp_path / "small", "BertForSequenceClassification")
    adapter = make_adapter(src, tmp_path / "lora", r=4, lora_alpha=8, target_modules=["query", "value", "word_embeddings"],
                           modules_to_save=["classifier"], bias="all")
    check(src, adapter, tmp_path / "big", factor=2)


@pytest.mark.parametrize("what,expected", [
    ("dora", "use_dora is set: DoRA"),
    ("nameless", "a folder with a name"),
    ("corrupt", "adapter_model.safetensors cannot be read"),
    ("ia3", "only LoRA adapters"),
    ("missing", "no adapter_config.json"),
])
def test_adapters_hfgrow_cannot_grow_are_clean_errors(tmp_path, what, expected):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = tmp_path / "adapter"
    if what == "dora":
        make_adapter(src, adapter, use_dora=True, **LLAMA)
    elif what == "nameless":
        adapter = Path("/")  # resolves to no name
    elif what == "corrupt":
        make_adapter(src, adapter, **LLAMA)
        (adapter / "adapter_model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    elif what == "ia3":
        peft.get_peft_model(load(src), peft.IA3Config(target_modules=["q_proj", "down_proj"], feedforward_modules=["down_proj"])
                            ).save_pretrained(adapter)
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--adapter", str(adapter)])
    assert result.exit_code == 2 and expected in result.stderr, result.output
    assert not (tmp_path / "big").exists()


def test_adapters_whose_initialisation_rewrote_their_base_are_refused(tmp_path):
    """PiSSA, CorDA, OLoRA, LoRA-GA and LoftQ subtract their first B·A from the base (or quantize it) when PEFT loads the
    adapter: its base is a residual model, and growing the plain one grew a pair that is not the model (exit 0 before).
    Refused in one line naming the mode, nothing written; a mode hfgrow does not know is refused too."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", **LLAMA)
    config = json.loads((adapter / "adapter_config.json").read_text())
    for mode in ("pissa", "pissa_niter_4", "olora", "loftq", "corda", "lora_ga", "svd-of-something"):
        (adapter / "adapter_config.json").write_text(json.dumps({**config, "init_lora_weights": mode}))
        out = tmp_path / "big"
        result = CliRunner().invoke(main, [str(src), "--out", str(out), "--adapter", str(adapter), "--no-verify", "-q"])
        assert result.exit_code == 2, (mode, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and f"init_lora_weights={mode!r}" in lines[0], lines
        assert ("rewrites the base" in lines[0]) == (mode != "svd-of-something"), lines
        assert not out.exists()


def test_initialisations_that_leave_the_base_as_it_is_are_kept():
    from hfgrow.adapters import init_problem

    for mode in (True, False, None, "gaussian", "orthogonal", "eva", "mica"):
        assert init_problem(mode) is None, mode
    assert init_problem(1) and init_problem("Pissa") and init_problem("")


def test_without_peft_the_adapter_still_grows(tmp_path, monkeypatch):
    import sys

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", **LLAMA)
    monkeypatch.setitem(sys.modules, "peft", None)  # as if not installed: the core install
    report = hfgrow.grow(src, tmp_path / "big", factor=2, adapters=[str(adapter)])
    assert report["verification"]["passed"] and "not installed" in report["adapters"][0]["verification"]["skipped"]
    assert (tmp_path / "big" / "adapters" / "lora" / "adapter_model.safetensors").is_file()


def rewrite_weights(adapter, change):
    """The adapter's weights, each passed through ``change(key, tensor)``, saved back."""
    from safetensors.torch import load_file, save_file

    path = adapter / "adapter_model.safetensors"
    save_file({k: change(k, v).contiguous() for k, v in load_file(path).items()}, path)


def first_lora_a(key, t):  # one lora_A a column wider than the base's input
    return torch.cat([t, t[:, :1]], dim=1) if key.endswith("layers.0.self_attn.q_proj.lora_A.weight") else t


def nan_in_b(key, t):
    return t.index_fill(0, torch.tensor([0]), float("nan")) if "lora_B" in key else t


@pytest.mark.parametrize("what,expected", [
    ("another base", "an adapter trained on another base?"),
    ("wider lora_A", "needs [4, 16]: an adapter trained on another base?"),
    ("r=0", "r=0 in adapter_config.json: the rank should be a positive integer"),
    ("r='four'", "r='four' in adapter_config.json: the rank should be a positive integer"),
    ("alpha", "lora_alpha='8' in adapter_config.json: a number is expected"),
    ("uneven ranks", "have different ranks [4, 5]"),
    ("integer weights", "is torch.int32, where floating-point weights are expected"),
    ("NaN weights", "holds non-finite values (NaN or inf)"),
])
def test_adapters_that_do_not_fit_their_base_are_refused(tmp_path, what, expected):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    if what == "another base":  # the same family, twice as wide
        other = build_model(tmp_path / "other", "LlamaForCausalLM", hidden_size=32)
        adapter = make_adapter(other, tmp_path / "adapter", **LLAMA)
    else:
        adapter = make_adapter(src, tmp_path / "adapter", **LLAMA)
    if what.startswith("r="):
        config = json.loads((adapter / "adapter_config.json").read_text())
        config["r"] = 0 if what == "r=0" else "four"
        (adapter / "adapter_config.json").write_text(json.dumps(config))
    elif what == "alpha":
        config = json.loads((adapter / "adapter_config.json").read_text())
        (adapter / "adapter_config.json").write_text(json.dumps({**config, "lora_alpha": "8"}))
    elif what == "uneven ranks":  # one lora_B of rank 5 for its lora_A of rank 4
        rewrite_weights(adapter, lambda k, t: torch.cat([t, t[:, :1]], dim=1) if k.endswith("0.self_attn.q_proj.lora_B.weight") else t)
    elif what == "wider lora_A":
        rewrite_weights(adapter, first_lora_a)
    elif what == "integer weights":
        rewrite_weights(adapter, lambda k, t: (t * 100).to(torch.int32))
    elif what == "NaN weights":
        rewrite_weights(adapter, nan_in_b)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--no-verify", "--quiet", "--out", str(tmp_path / "big"),
                                       "--adapter", str(adapter)])
    assert result.exit_code == 2 and expected in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "big").exists()


def test_stacked_identity_blocks_carry_their_originals_adapter(tmp_path):
    """--new-blocks stack-identity: each appended copy gets its original's LoRA A and B = 0, so it stays the identity."""
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", **LLAMA)
    report = check(src, adapter, tmp_path / "big", layers=4, new_blocks="stack-identity")
    assert report["plan"]["new_blocks"]["layers"] == [2, 3]
    small = load_file(adapter / "adapter_model.safetensors")
    grown = load_file(tmp_path / "big" / "adapters" / "lora" / "adapter_model.safetensors")
    for key, v in grown.items():
        if ".layers.2." in key or ".layers.3." in key:
            original = small[key.replace(".layers.2.", ".layers.0.").replace(".layers.3.", ".layers.1.")]
            assert not v.any() if "lora_B" in key else v.equal(original), key


def test_the_grown_adapter_keeps_its_model_card_naming_the_grown_base(tmp_path, monkeypatch):
    """PEFT's README.md of the adapter is copied with it, its front matter's base_model naming the grown base."""
    monkeypatch.chdir(tmp_path)
    build_model("tiny-llama", "LlamaForCausalLM")
    make_adapter(Path("tiny-llama"), "tiny-lora", **LLAMA)
    card = Path("tiny-lora/README.md").read_text()
    assert card.startswith("---\n") and "base_model: tiny-llama" in card  # as PEFT writes it
    hfgrow.grow("tiny-llama", "llama-x2", factor=2, adapters=["tiny-lora"], verify=False)
    grown = Path("llama-x2/adapters/tiny-lora/README.md").read_text()
    assert 'base_model: "llama-x2"' in grown and "tiny-llama" not in grown.split("\n---", 1)[0]
    assert grown.split("\n---", 1)[1] == card.split("\n---", 1)[1]  # the card's text below the front matter, as written
