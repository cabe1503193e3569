"""The skeletons' cache (hfgrow.skeleton_cache, issue 42): a growth planned from a cached entry is the growth planned from
the model class built on the meta device, an entry that is not exactly what was stored under its key is ignored and
rebuilt, and a second growth from the command line does not import the class's modeling module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from hfgrow import consistency, skeleton_cache
from hfgrow.checkpoint import CheckpointReader
from hfgrow.plan import GrowthOptions, make_plan
from hfgrow.testing import build_model

# a Llama, a BERT (its decoder tied to the embedding), a vision-language model of towers (its whole model's key
# mapping), and a Mixtral (experts stored one by one, merged on load), grown in width and, for the Llama, in depth
FAMILIES = [("LlamaForCausalLM", {"factor": 2}), ("LlamaForCausalLM", {"factor": 2, "layers": 3}),
            ("BertForMaskedLM", {"factor": 2}), ("LlavaForConditionalGeneration", {"factor": 2}),
            ("MixtralForCausalLM", {"factor": 2})]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("HFGROW_CACHE", str(directory))
    monkeypatch.delenv("HFGROW_NO_CACHE", raising=False)
    return directory


def plan_facts(plan) -> dict:
    """All a plan says about each tensor and each space, comparable (Expansion holds tensors)."""
    maps = {name: (m.src.tolist(), m.e.tolist(), m.r.tolist(), m.small, m.mean_extras, m.breakable, m.rescale)
            for name, m in plan.maps.items()}
    return {"summary": plan.summary(), "tensors": plan.tensors, "maps": maps, "config": plan.config,
            "shards": plan.shards, "dropped": plan.dropped}


def from_cache_only(monkeypatch) -> None:
    """Planning reads the cache though this process has the class loaded, and never builds a skeleton."""
    def refuse(*args, **kwargs):
        raise AssertionError("a skeleton was built")
    monkeypatch.setattr(skeleton_cache, "READ_WHEN_LOADED", True)
    monkeypatch.setattr(consistency, "skeleton_model", refuse)


@pytest.mark.parametrize("cls, options", FAMILIES, ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v.values())))
def test_a_plan_from_the_cache_is_the_plan_from_the_skeleton(tmp_path, cache, monkeypatch, cls, options):
    src = build_model(tmp_path / "src", cls)
    built = make_plan(CheckpointReader(src), GrowthOptions(**options))  # the class is loaded here: built, then stored
    entries = sorted(cache.glob("*.json"))
    assert entries, "nothing was cached"
    from_cache_only(monkeypatch)
    cached = make_plan(CheckpointReader(src), GrowthOptions(**options))
    assert plan_facts(cached) == plan_facts(built)
    assert sorted(cache.glob("*.json")) == entries  # read, not rebuilt


@pytest.mark.parametrize("cls", ["LlamaForCausalLM", "BertForMaskedLM", "LlavaForConditionalGeneration"])
def test_the_cached_facts_are_the_skeletons(tmp_path, cache, cls):
    src = build_model(tmp_path / "src", cls)
    reader = CheckpointReader(src)
    recipe_cls, cfg = reader.config()["architectures"][0], reader.transformers_config()
    key, _ = skeleton_cache.cache_key(recipe_cls, cfg, list(reader.tensors))
    skeleton = consistency.skeleton_model(None, recipe_cls, cfg)
    facts = consistency.facts_of(skeleton, list(reader.tensors))
    skeleton_cache.write_entry(cache, key, facts)
    assert skeleton_cache.read_entry(cache, key) == facts
    assert facts.state == {k: (tuple(v.shape), str(v.dtype)) for k, v in skeleton.state_dict().items()}
    assert facts.names()(next(iter(reader.tensors))) == consistency.loaded_names(skeleton)(next(iter(reader.tensors)))


def entry_of(cache: Path) -> tuple[Path, dict]:
    (path,) = cache.glob("*.json")
    return path, json.loads(path.read_text())


def tamper_shape(entry: dict) -> None:
    name = next(iter(entry["facts"]["state"]))
    entry["facts"]["state"][name][0] = [n + 1 for n in entry["facts"]["state"][name][0]]


def tamper_type(entry: dict) -> None:  # a shape made a string, the digest made to match: the validation refuses it
    name = next(iter(entry["facts"]["state"]))
    entry["facts"]["state"][name][0] = "16"
    entry["digest"] = skeleton_cache._digest(entry["facts"])


def tamper_key(entry: dict) -> None:  # another key's entry copied here
    entry["key"] = "0" * 64


@pytest.mark.parametrize("tamper", [tamper_shape, tamper_type, tamper_key, "truncated", "not json", "deep"])
def test_an_entry_that_is_not_what_was_stored_is_ignored_and_rebuilt(tmp_path, cache, monkeypatch, tamper):
    src = build_model(tmp_path / "src", "LlamaForCausalLM")
    built = make_plan(CheckpointReader(src), GrowthOptions(factor=2))
    path, entry = entry_of(cache)
    good = path.read_bytes()
    if callable(tamper):
        tamper(entry)
        path.write_text(json.dumps(entry))
    else:
        path.write_bytes({"truncated": good[:len(good) // 2], "not json": b"\x80\x00 garbage",
                          "deep": b"[" * 10000 + b"]" * 10000}[tamper])
    monkeypatch.setattr(skeleton_cache, "READ_WHEN_LOADED", True)
    assert skeleton_cache.read_entry(cache, path.stem) is None
    calls = []
    monkeypatch.setattr(consistency, "skeleton_model", lambda *a: calls.append(a) or real_skeleton(*a))
    again = make_plan(CheckpointReader(src), GrowthOptions(factor=2))
    assert calls and plan_facts(again) == plan_facts(built)  # built from the skeleton again
    assert path.read_bytes() == good  # and stored again as it was


real_skeleton = consistency.skeleton_model


def test_the_key_holds_all_the_facts_are_made_of(tmp_path, monkeypatch):
    import transformers

    src = build_model(tmp_path / "src", "LlamaForCausalLM")
    reader = CheckpointReader(src)
    cfg, names = reader.transformers_config(), list(reader.tensors)
    key = skeleton_cache.cache_key("LlamaForCausalLM", cfg, names)
    assert key == skeleton_cache.cache_key("LlamaForCausalLM", reader.transformers_config(), names[::-1])
    assert key[1] == "transformers.models.llama.modeling_llama"
    other = reader.transformers_config()
    other.intermediate_size += 1
    private = reader.transformers_config()
    private._attn_implementation_internal = "sdpa"
    changed = [skeleton_cache.cache_key("MistralForCausalLM", cfg, names), skeleton_cache.cache_key("LlamaForCausalLM", other, names),
               skeleton_cache.cache_key("LlamaForCausalLM", private, names),
               skeleton_cache.cache_key("LlamaForCausalLM", cfg, names[1:])]
    monkeypatch.setattr(transformers, "__version__", transformers.__version__ + ".dev1")
    changed.append(skeleton_cache.cache_key("LlamaForCausalLM", cfg, names))
    monkeypatch.setattr(torch, "__version__", "0.0")
    changed.append(skeleton_cache.cache_key("LlamaForCausalLM", cfg, names))
    assert len({k[0] for k in changed} | {key[0]}) == len(changed) + 1
    cfg.rope_parameters = {"rope_type": object()}  # what cannot be written down exactly: no key, the skeleton every time
    assert skeleton_cache.cache_key("LlamaForCausalLM", cfg, names) is None
    assert skeleton_cache.cache_key("NoSuchModelForCausalLM", cfg, names) is None


def test_where_the_cache_lives(monkeypatch, tmp_path):
    for name in ("HFGROW_CACHE", "HFGROW_NO_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert skeleton_cache.cache_dir() == tmp_path / ".cache" / "huggingface" / "hfgrow"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert skeleton_cache.cache_dir() == tmp_path / "xdg" / "huggingface" / "hfgrow"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert skeleton_cache.cache_dir() == tmp_path / "hf" / "hfgrow"
    monkeypatch.setenv("HFGROW_CACHE", str(tmp_path / "mine"))
    assert skeleton_cache.cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("HFGROW_NO_CACHE", "1")
    assert skeleton_cache.cache_dir() is None


def test_the_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(skeleton_cache, "MAX_ENTRIES", 3)
    facts = skeleton_cache.ClassFacts("C", "", {"w": ((2,), "torch.float32")}, (), (), {}, {}, {}, {}, {})
    for i in range(5):
        skeleton_cache.write_entry(tmp_path, f"{i:064x}", facts)
        os.utime(tmp_path / f"{i:064x}.json", (i, i))
    assert sorted(p.stem[-1] for p in tmp_path.glob("*.json")) == ["2", "3", "4"]
    assert not list(tmp_path.glob(".entry-*"))
    assert skeleton_cache.read_entry(tmp_path, f"{4:064x}") == facts


def test_every_field_comes_back_as_it_was_stored(tmp_path):
    facts = skeleton_cache.ClassFacts(
        cls="C", prefix="model", state={"a.w": ((2, 3), "torch.bfloat16"), "a.b": ((), "torch.float32")}, tied=("lm.w",),
        optional=(r"rotary\.inv_freq",), class_tied={"lm.w": "emb.w"}, loaded={"x.0.w1": ("x.gate_up", True)},
        loaded_every={"x.0.w1": (("x.gate_up", "x.up"), True)}, whole={"x.0.w1": ("m.x.gate_up", False)},
        whole_every={"x.0.w1": (("m.x.gate_up",), False)})
    skeleton_cache.write_entry(tmp_path, "1" * 64, facts)
    back = skeleton_cache.read_entry(tmp_path, "1" * 64)
    assert back == facts and back.names("whole")("x.0.w1", True) == (("m.x.gate_up",), False)
    with pytest.raises(KeyError):  # a name the tables lack, and no skeleton to ask
        back.names()("y")


# runs the CLI in this process, then prints which modeling modules it imported
PROBE = """
import json, sys
from hfgrow.cli import main
try:
    main(sys.argv[1:], prog_name="hfgrow")
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modeling": sorted(m for m in sys.modules if m.startswith("transformers.") and ".modeling_" in m)}))
"""


def test_a_second_growth_does_not_import_the_modeling_module(tmp_path):
    src = build_model(tmp_path / "src", "LlamaForCausalLM")
    env = {**os.environ, "HFGROW_CACHE": str(tmp_path / "cache")}
    runs = []
    for out in ("big1", "big2"):
        proc = subprocess.run([sys.executable, "-c", PROBE, str(src), "--out", str(tmp_path / out), "--factor", "2", "--no-verify"],
                              capture_output=True, text=True, timeout=300, env=env)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["code"] == second["code"] == 0
    assert "transformers.models.llama.modeling_llama" in first["modeling"]
    assert "transformers.models.llama.modeling_llama" not in second["modeling"]
    assert "transformers.modeling_utils" not in second["modeling"]
    for name in ("model.safetensors", "config.json"):
        assert (tmp_path / "big1" / name).read_bytes() == (tmp_path / "big2" / name).read_bytes()
