"""A checkpoint from anywhere: corrupted headers, lying indexes, hostile pickles, inconsistent configs and
custom code, generated from a tiny fixture. Each must end cleanly — success, or exit 2 with one line and
nothing written — and nothing from the source folder may ever run."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import struct
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from hfgrow import ExitCode
from hfgrow.cli import main
from hfgrow.testing import build_model

SEED = 1234


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A tiny randomised Llama with GQA (2 KV heads for 4 query heads): every kind of axis."""
    return build_model(tmp_path_factory.mktemp("llama") / "src", "LlamaForCausalLM")


def run(src: Path, out: Path, *args: str):
    return CliRunner().invoke(main, [str(src), "--out", str(out), "--no-verify", "-q", *args])


def assert_clean(result, out: Path, refused: str | None) -> None:
    """Grown (``refused`` None), or refused: exit 2 with one `error:` line that says ``refused``, and no --out (nor a
    temp folder beside it)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    if refused is None:
        assert result.exit_code == 0, result.output
        assert (out / "model.safetensors").is_file()
        return
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and refused in lines[0], result.stderr
    assert list(out.parent.iterdir()) == []


def fresh(llama: Path, tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    shutil.copytree(llama, src)
    (tmp_path / "outs").mkdir()
    return src, tmp_path / "outs" / "big"


# -- corrupted safetensors headers -------------------------------------------------------------------


def header_mutations() -> list[tuple[str, int, bytes | None]]:
    """(what, byte offset, replacement) in model.safetensors; offset -1: truncate at a random point."""
    rng = random.Random(SEED)
    cases = [("length field huge", 0, struct.pack("<Q", 2**62)), ("length field zero", 0, struct.pack("<Q", 0)),
             ("length field past the end", 0, struct.pack("<Q", 10**6)), ("truncated", -1, None)]
    for i in range(10):
        cases.append((f"header byte {i}", 8 + rng.randrange(0, 400), bytes([rng.randrange(256)])))
    return cases


@pytest.mark.parametrize("what,offset,replacement", header_mutations(), ids=[c[0] for c in header_mutations()])
def test_corrupted_header(llama, tmp_path, what, offset, replacement):
    src, out = fresh(llama, tmp_path)
    path = src / "model.safetensors"
    data = bytearray(path.read_bytes())
    if offset < 0:
        del data[random.Random(SEED).randrange(8, len(data)):]
    else:
        data[offset:offset + len(replacement)] = replacement
    path.write_bytes(bytes(data))
    assert_clean(run(src, out), out, "model.safetensors is truncated or corrupt")


# -- lying indexes -----------------------------------------------------------------------------------


OUTSIDE = "shard names must be relative paths inside the checkpoint folder"
NOT_A_MAP = "'weight_map' should map tensor names to shard files"
LYING_INDEX_REFUSALS = {  # what each lie is refused with; None: grown
    "names a shard outside": OUTSIDE, "names an absolute path": OUTSIDE, "names a folder": OUTSIDE, "names an empty string": OUTSIDE,
    "names a tensor the shard lacks": "the index names tensors its shards lack: model.extra.weight",
    "omits a tensor": None,  # an index need not list every tensor of its shards: transformers reads them all
    "maps to a number": NOT_A_MAP, "is a list": NOT_A_MAP, "is empty": "no tensors in", "backslashes": OUTSIDE,
}


def lying_indexes(names: list[str]) -> dict[str, object]:
    shard = "model-00001-of-00001.safetensors"
    return {
        "names a shard outside": {n: "../" + shard for n in names},
        "names an absolute path": {n: "/etc/passwd" for n in names},
        "names a folder": {n: "." for n in names},
        "names an empty string": {n: "" for n in names},
        "names a tensor the shard lacks": {**{n: shard for n in names}, "model.extra.weight": shard},
        "omits a tensor": {n: shard for n in names[1:]},
        "maps to a number": {n: 1 for n in names},
        "is a list": [shard],
        "is empty": {},
        "backslashes": {n: "..\\" + shard for n in names},
    }


@pytest.mark.parametrize("case", list(LYING_INDEX_REFUSALS))
def test_lying_index(llama, tmp_path, case):
    src, out = fresh(llama, tmp_path)
    names = sorted(load_file(src / "model.safetensors"))
    (src / "model.safetensors").rename(src / "model-00001-of-00001.safetensors")
    shutil.copy(src / "model-00001-of-00001.safetensors", tmp_path / "model-00001-of-00001.safetensors")  # the "outside" file
    weight_map = lying_indexes(names)[case]
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    assert set(LYING_INDEX_REFUSALS) == set(lying_indexes(names))
    assert_clean(run(src, out), out, LYING_INDEX_REFUSALS[case])
    if LYING_INDEX_REFUSALS[case] is None:  # every tensor of the shard grown, the one the index omits too
        assert set(load_file(out / "model.safetensors")) == set(names)


# -- hostile pickles ---------------------------------------------------------------------------------


class Payload:
    """Unpickling this runs ``exec``: a weights file must never be unpickled with arbitrary globals."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


@pytest.mark.parametrize("shape", ["top level", "inside the state dict", "plain pickle, not zip"])
def test_hostile_pickle_never_runs(llama, tmp_path, shape):
    src, out = fresh(llama, tmp_path)
    marker = tmp_path / "marker"
    sd = load_file(src / "model.safetensors")
    (src / "model.safetensors").unlink()
    if shape == "top level":
        torch.save(Payload(marker), src / "pytorch_model.bin")
    elif shape == "inside the state dict":
        torch.save({**sd, "evil": Payload(marker)}, src / "pytorch_model.bin")
    else:
        (src / "pytorch_model.bin").write_bytes(pickle.dumps({"x": Payload(marker)}))
    result = run(src, out)
    assert_clean(result, out, "pytorch_model.bin is truncated, corrupt or not a weights file (the weights-only loader refused it")
    assert "hfgrow never unpickles objects" in result.stderr
    assert not marker.exists()
    for advice in ("weights_only", "still be loaded", "\x1b"):  # never torch's hint to load it with code enabled
        assert advice not in result.stderr, result.stderr


# -- inconsistent configs ----------------------------------------------------------------------------

FIELDS = ["hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim", "num_hidden_layers",
          "vocab_size", "max_position_embeddings"]
VALUES = [0, -3, 7, 10**12, "16", None, 1.5, True]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("field", FIELDS)
def test_inconsistent_config(llama, tmp_path, field, value):
    src, out = fresh(llama, tmp_path)
    cfg = json.loads((src / "config.json").read_text())
    cfg[field] = value
    (src / "config.json").write_text(json.dumps(cfg))
    # the weights pin every field but the positions (rotary), and head_dim may be left to derive (16 / 4 heads)
    grown = (field == "max_position_embeddings" and value in (7, 10**12)) or (field, value) == ("head_dim", None)
    assert_clean(run(src, out), out, None if grown else "config.json")
    if grown:
        big = json.loads((out / "config.json").read_text())
        assert big[field] == value and big["hidden_size"] == 32


@pytest.mark.parametrize("value", [0, -3])
def test_a_non_positive_position_count_is_refused_before_verifying(llama, tmp_path, value):
    """No weight pins max_position_embeddings (rotary): refused in one line, also where verification would run
    (where -3 was an internal error: a negative dimension)."""
    src, out = fresh(llama, tmp_path)
    cfg = json.loads((src / "config.json").read_text())
    cfg["max_position_embeddings"] = value
    (src / "config.json").write_text(json.dumps(cfg))
    result = CliRunner().invoke(main, [str(src), "--out", str(out), "-q"])
    assert_clean(result, out, f"config.json: 'max_position_embeddings' should be a positive integer, got {value}")


# -- custom code -------------------------------------------------------------------------------------


def test_custom_code_is_never_run_nor_copied(llama, tmp_path):
    """A source with its own modeling code and an auto_map: hfgrow grows it with transformers' class, never
    imports the code, leaves it behind, and drops auto_map from the grown config."""
    src, out = fresh(llama, tmp_path)
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    for name in ("configuration_evil.py", "modeling_evil.py", "tokenization_evil.py"):
        (src / name).write_text(code)
    cfg = json.loads((src / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig", "AutoModelForCausalLM": "modeling_evil.EvilModel"}
    (src / "config.json").write_text(json.dumps(cfg))

    result = CliRunner().invoke(main, [str(src), "--out", str(out), "-q"])  # verified: both models are loaded
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["verify", str(src), str(out)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["inspect", str(src)])
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert not list(out.glob("*.py"))
    assert "auto_map" not in json.loads((out / "config.json").read_text())
    report = json.loads((out / "growth_report.json").read_text())
    assert set(report["not_copied"]) >= {"configuration_evil.py", "modeling_evil.py", "tokenization_evil.py"}


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "generation_config.json"])
def test_verify_reads_nothing_through_a_link_out(llama, tmp_path, name):
    """`hfgrow verify` loads both folders through transformers, which reads the weights, config.json and
    generation_config.json: each under the source-file policy (generation_config.json was read through a link out)."""
    src, out = fresh(llama, tmp_path)
    assert run(src, out).exit_code == 0
    assert (out / name).is_file()
    (tmp_path / "elsewhere").mkdir()
    shutil.move(out / name, tmp_path / "elsewhere" / name)
    (out / name).symlink_to(tmp_path / "elsewhere" / name)
    result = CliRunner().invoke(main, ["verify", str(src), str(out)])
    assert result.exit_code == 2 and "outside the checkpoint folder: refused" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_legit_index_and_hub_links_still_work(llama, tmp_path):
    """The guards refuse only what leaves the folder: a sharded checkpoint whose shards are links into a
    Hub-style blobs folder grows."""
    repo = tmp_path / "models--org--tiny"
    snap, blobs = repo / "snapshots" / "abc", repo / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    sd = load_file(llama / "model.safetensors")
    names = sorted(sd)
    half = len(names) // 2
    weight_map = {}
    for i, part in enumerate((names[:half], names[half:])):
        shard = f"model-0000{i + 1}-of-00002.safetensors"
        save_file({n: sd[n] for n in part}, blobs / f"blob{i}", metadata={"format": "pt"})
        (snap / shard).symlink_to(Path("../../blobs") / f"blob{i}")
        weight_map.update({n: shard for n in part})
    (snap / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    shutil.copy(llama / "config.json", snap / "config.json")
    (tmp_path / "outs").mkdir()
    out = tmp_path / "outs" / "big"
    result = CliRunner().invoke(main, [str(snap), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output


# -- messages about files that are not what they claim ------------------------------------------------


def test_a_legacy_format_optimizer_state_is_read_not_refused_for_mmap(llama, tmp_path):
    """optimizer.pt saved in torch's pre-1.6 format (not zip) cannot be memory-mapped: it is read whole."""
    from transformers import LlamaForCausalLM

    from hfgrow.optim import grow_trainer_checkpoint

    src, out = fresh(llama, tmp_path)
    model = LlamaForCausalLM.from_pretrained(src)
    optimizer = torch.optim.AdamW(model.parameters())
    ids = torch.randint(0, model.config.vocab_size, (1, 6), generator=torch.Generator().manual_seed(SEED))
    model(ids, labels=ids).loss.backward()
    optimizer.step()
    torch.save(optimizer.state_dict(), src / "optimizer.pt", _use_new_zipfile_serialization=False)
    (src / "trainer_state.json").write_text(json.dumps({"global_step": 1}))
    grow_trainer_checkpoint(src, out, verify=False)
    grown = torch.load(out / "optimizer.pt", weights_only=True)["state"]
    big = [p.shape for p in LlamaForCausalLM.from_pretrained(out).parameters()]
    assert len(grown) == len(big) and [s["exp_avg"].shape for _, s in sorted(grown.items())] == big  # every moment grown


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_text_file_is_named_as_such(llama, tmp_path, encoding):
    src, out = fresh(llama, tmp_path)
    text = tmp_path / "sentences.txt"
    text.write_bytes("The cat sat on the mat.\nHello, world.\n".encode(encoding))
    result = CliRunner().invoke(main, [str(src), "--out", str(out), "-q", "--text-file", str(text)])
    assert_clean(result, out, "not UTF-8")
    assert "not UTF-8" in result.stderr and "UTF-16 detected" in result.stderr, result.stderr
    assert "binary" not in result.stderr


# -- remote code: every transformers entry point is told never to run it -----------------------------

LOADERS = {"from_pretrained", "from_config", "SentenceTransformer", "CrossEncoder"}  # calls that may import a checkpoint's code
NO_REMOTE_CODE_KEYWORD = {"PeftModel.from_pretrained"}  # PEFT has no remote code (and no such keyword); its base model has


def _loader_calls(path: Path) -> list[tuple[str, int, bool]]:
    """(what is called, line, passes trust_remote_code=False) for each loader call in a Python file."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in LOADERS:
            continue
        owner = ast.unparse(func.value) + "." + name if isinstance(func, ast.Attribute) else name
        safe = any(k.arg == "trust_remote_code" and isinstance(k.value, ast.Constant) and k.value.value is False
                   for k in node.keywords)
        found.append((owner, node.lineno, safe or owner in NO_REMOTE_CODE_KEYWORD))
    return found


def test_every_transformers_loader_in_hfgrow_passes_trust_remote_code_false():
    root = Path(__file__).resolve().parents[1]
    calls = {f"{path.relative_to(root)}:{line} {owner}": safe for folder in ("hfgrow", "recipes")
             for path in sorted((root / folder).rglob("*.py")) for owner, line, safe in _loader_calls(path)}
    assert len(calls) >= 8  # the scan sees them (verification, tokenizer, configs, training state, sentence-transformers)
    assert [call for call, safe in calls.items() if not safe] == []


def test_a_training_checkpoints_config_with_auto_map_never_offers_its_code(tmp_path, monkeypatch):
    """transformers asks whether to run a config's auto_map code when trust_remote_code is not given; hfgrow never
    lets it ask (a "y" would run the checkpoint's code): the unknown model type is refused in one line."""
    import builtins

    from hfgrow import GrowthError
    from hfgrow.training_state import meta_model

    marker = tmp_path / "ran"
    (tmp_path / "configuration_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "evil", "architectures": ["EvilModel"],
                                                      "auto_map": {"AutoConfig": "configuration_evil.EvilConfig"}}))
    asked = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": asked.append(prompt) or "n")
    with pytest.raises(GrowthError, match="transformers cannot read"):
        meta_model(tmp_path)
    assert asked == [] and not marker.exists()
