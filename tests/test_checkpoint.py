"""Checkpoint I/O: the streaming writer, sharding, sizes, every source layout, dtypes and copied files."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import hfgrow
from hfgrow import GrowthError
from hfgrow.checkpoint import (
    SAFE_INDEX,
    CheckpointReader,
    OutTensor,
    SafetensorsStreamWriter,
    assign_shards,
    parse_size,
    shard_names,
    write_index,
)
from hfgrow.testing import build_bert

MAX_POS = 64  # TINY_BERT's max_position_embeddings


# -- helpers ---------------------------------------------------------------------------------------


def read_header(path: Path) -> dict:
    """The JSON header of a safetensors file, without torch or safetensors."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n))


def tensor_dtypes(folder: Path) -> dict[str, str]:
    """Every tensor's safetensors dtype name across all shards of a folder."""
    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        for name, entry in read_header(f).items():
            if name != "__metadata__":
                out[name] = entry["dtype"]
    return out


def load_all(folder: Path) -> dict[str, torch.Tensor]:
    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(load_file(f))
    return out


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def edit_config(folder: Path, **changes) -> dict:
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    path.write_text(json.dumps(cfg, indent=2))
    return cfg


def legacy_names(sd: dict[str, torch.Tensor], prefix: str = "") -> dict[str, torch.Tensor]:
    """Old-style keys: LayerNorm.gamma/beta instead of weight/bias, with an optional prefix."""
    out = {}
    for k, v in sd.items():
        k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        out[prefix + k] = v
    return out


@pytest.fixture(scope="module")
def bert_base(tmp_path_factory):
    """A tiny randomised BertModel with a tokenizer (read-only)."""
    return build_bert(tmp_path_factory.mktemp("bert_base"), "BertModel", seed=1)


@pytest.fixture(scope="module")
def bert_sharded(tmp_path_factory, bert_mlm):
    """bert_mlm re-saved by transformers itself with max_shard_size='20KB' (several shards + an index)."""
    import transformers

    folder = tmp_path_factory.mktemp("bert_sharded")
    model = transformers.BertForMaskedLM.from_pretrained(bert_mlm)
    model.save_pretrained(folder, max_shard_size="20KB")
    for f in bert_mlm.iterdir():
        if f.name.startswith("tokenizer"):
            shutil.copy2(f, folder / f.name)
    return folder


# -- the streaming writer --------------------------------------------------------------------------


def sample_tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "f32": torch.randn(3, 5, generator=g),
        "bf16": torch.randn(7, generator=g).to(torch.bfloat16),
        "f16": torch.randn(2, 2, generator=g).to(torch.float16),
        "i64": torch.arange(-3, 9, dtype=torch.int64).reshape(1, 12),
        "scalar": torch.tensor(3.25),
        "empty": torch.zeros(0, 4),
        "flags": torch.tensor([True, False, True]),
        "strided": torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),  # non-contiguous
    }


def test_writer_round_trip_every_dtype(tmp_path):
    tensors = sample_tensors()
    outs = [OutTensor(k, tuple(v.shape), v.dtype) for k, v in tensors.items()]
    path = tmp_path / "x.safetensors"
    with SafetensorsStreamWriter(path, outs) as w:
        for k, v in tensors.items():
            w.write(k, v)

    with safe_open(str(path), framework="pt") as f:
        assert list(f.keys()) == sorted(tensors)  # safe_open lists names sorted
        assert f.metadata() == {"format": "pt"}
        for k, v in tensors.items():
            got = f.get_tensor(k)
            assert got.dtype == v.dtype, k
            assert tuple(got.shape) == tuple(v.shape), k
            assert torch.equal(got, v), k

    header = read_header(path)
    assert header["bf16"]["dtype"] == "BF16"
    assert header["i64"]["dtype"] == "I64"
    assert header["scalar"]["shape"] == []
    assert header["empty"]["shape"] == [0, 4]
    assert header["empty"]["data_offsets"][0] == header["empty"]["data_offsets"][1]
    # the data section is exactly the sum of the tensors' bytes, aligned header included
    (n,) = struct.unpack("<Q", path.read_bytes()[:8])
    assert n % 8 == 0
    assert path.stat().st_size == 8 + n + sum(t.nbytes for t in outs)


def test_writer_custom_metadata(tmp_path):
    path = tmp_path / "m.safetensors"
    with SafetensorsStreamWriter(path, [OutTensor("a", (2,), torch.float32)], metadata={"format": "pt", "who": "hfgrow"}) as w:
        w.write("a", torch.tensor([1.0, 2.0]))
    with safe_open(str(path), framework="pt") as f:
        assert f.metadata() == {"format": "pt", "who": "hfgrow"}
        assert f.get_tensor("a").tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "name, tensor, why",
    [
        ("b", torch.zeros(2, 3), "out of order"),
        ("a", torch.zeros(3, 2), "wrong shape"),
        ("a", torch.zeros(6), "wrong rank"),
        ("a", torch.zeros(2, 3, dtype=torch.float64), "wrong dtype"),
    ],
)
def test_writer_refuses_unexpected_tensor(tmp_path, name, tensor, why):
    outs = [OutTensor("a", (2, 3), torch.float32), OutTensor("b", (4,), torch.int64)]
    with pytest.raises(RuntimeError, match="writer expected"):
        with SafetensorsStreamWriter(tmp_path / "x.safetensors", outs) as w:
            w.write(name, tensor)


def test_writer_refuses_missing_and_extra_tensors(tmp_path):
    outs = [OutTensor("a", (2,), torch.float32), OutTensor("b", (2,), torch.float32)]
    with pytest.raises(RuntimeError, match="1 tensors were never written"):
        with SafetensorsStreamWriter(tmp_path / "short.safetensors", outs) as w:
            w.write("a", torch.zeros(2))
    with SafetensorsStreamWriter(tmp_path / "long.safetensors", outs) as w:
        w.write("a", torch.zeros(2))
        w.write("b", torch.ones(2))
        with pytest.raises((RuntimeError, IndexError)):
            w.write("b", torch.ones(2))
    assert load_file(tmp_path / "long.safetensors")["b"].tolist() == [1.0, 1.0]


def test_assign_shards_greedy_and_oversized_alone():
    t = lambda name, n: OutTensor(name, (n,), torch.float32)  # noqa: E731  (4 bytes an element)
    tensors = [t("a", 2), t("b", 3), t("big", 100), t("c", 1), t("d", 5), t("e", 1)]  # 8, 12, 400, 4, 20, 4 bytes
    shards = assign_shards(tensors, 24)
    assert [[x.name for x in s] for s in shards] == [["a", "b"], ["big"], ["c", "d"], ["e"]]
    assert [[x.name for x in s] for s in assign_shards(tensors, 10**9)] == [["a", "b", "big", "c", "d", "e"]]
    assert shard_names(1) == ["model.safetensors"]
    assert shard_names(3) == [f"model-0000{i}-of-00003.safetensors" for i in (1, 2, 3)]


def test_sharded_write_and_index_round_trip(tmp_path):
    tensors = sample_tensors()
    outs = [OutTensor(k, tuple(v.shape), v.dtype) for k, v in tensors.items()]
    shards = assign_shards(outs, 40)
    assert len(shards) >= 3
    for name, shard in zip(shard_names(len(shards)), shards):
        with SafetensorsStreamWriter(tmp_path / name, shard) as w:
            for o in shard:
                w.write(o.name, tensors[o.name])
    write_index(tmp_path, shards)

    index = json.loads((tmp_path / SAFE_INDEX).read_text())
    assert index["metadata"]["total_size"] == sum(v.nelement() * v.element_size() for v in tensors.values())
    assert set(index["weight_map"]) == set(tensors)
    for name, file in index["weight_map"].items():
        with safe_open(str(tmp_path / file), framework="pt") as f:
            assert name in f.keys()
            assert torch.equal(f.get_tensor(name), tensors[name])
    # and the reader sees exactly the same thing through the index
    reader = CheckpointReader(tmp_path)
    assert reader.files == shard_names(len(shards))
    assert set(reader.tensors) == set(tensors)
    for name, v in tensors.items():
        assert reader.tensors[name].dtype == v.dtype
        assert reader.tensors[name].shape == tuple(v.shape)
        assert torch.equal(reader.get(name), v)


# -- sizes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("5GB", 5 * 10**9),
        ("2GiB", 2 * 2**30),
        ("500MB", 500 * 10**6),
        ("20KB", 20_000),
        ("512MiB", 512 * 2**20),
        ("1TB", 10**12),
        ("1.5GB", 1_500_000_000),
        (" 5 gb ", 5 * 10**9),
        ("123B", 123),
        ("1000", 1000),
        (1000, 1000),
        (7, 7),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["abc", "", "GB", "5XB", "5 G B", "-5GB", "0", "0MB", "1e3", "5GB5"])
def test_parse_size_refuses_bad_strings(text):
    with pytest.raises(GrowthError, match="size"):
        parse_size(text)


@pytest.mark.parametrize("size", [0, -5])
def test_parse_size_refuses_non_positive_ints(size):
    with pytest.raises(GrowthError, match="positive"):
        parse_size(size)


# -- sources ---------------------------------------------------------------------------------------


def test_reader_single_safetensors(bert_mlm):
    reader = CheckpointReader(bert_mlm)
    assert reader.files == ["model.safetensors"]
    raw = load_file(bert_mlm / "model.safetensors")
    assert set(reader.tensors) == set(raw)
    info = reader.tensors["bert.embeddings.word_embeddings.weight"]
    assert info.shape == tuple(raw["bert.embeddings.word_embeddings.weight"].shape)
    assert info.shape[1] == 16 and info.dtype == torch.float32 and info.file == "model.safetensors"
    assert info.numel == info.shape[0] * 16
    for name in raw:
        assert torch.equal(reader.get(name), raw[name])
    assert reader.config()["hidden_size"] == 16
    copied, left = reader.extra_files()
    assert list(copied) == ["tokenizer.json", "tokenizer_config.json"] and left == {}


def test_reader_sharded_source(bert_sharded, bert_mlm):
    shards = sorted(p.name for p in bert_sharded.glob("*.safetensors"))
    assert len(shards) >= 2 and (bert_sharded / SAFE_INDEX).is_file()
    reader = CheckpointReader(bert_sharded)
    single = CheckpointReader(bert_mlm)
    assert reader.files == shards
    assert set(reader.tensors) == set(single.tensors)
    assert {i.file for i in reader.tensors.values()} == set(shards)
    for name in single.tensors:
        assert torch.equal(reader.get(name), single.get(name)), name


def test_grow_sharded_source_into_shards(tmp_path, bert_sharded, bert_mlm):
    import transformers

    out = tmp_path / "big"
    report = hfgrow.grow(bert_sharded, out, max_shard_size="20KB", verify=False)
    shards = sorted(p.name for p in out.glob("*.safetensors"))
    n = len(shards)
    assert n >= 3 and report["plan"]["shards"] == n
    assert shards == [f"model-{i:05d}-of-{n:05d}.safetensors" for i in range(1, n + 1)]
    assert not (out / "model.safetensors").exists()

    index = json.loads((out / SAFE_INDEX).read_text())
    headers = {s: read_header(out / s) for s in shards}
    by_file = {name: s for s, h in headers.items() for name in h if name != "__metadata__"}
    assert index["weight_map"] == by_file
    data = {s: sum(e["data_offsets"][1] - e["data_offsets"][0] for k, e in h.items() if k != "__metadata__")
            for s, h in headers.items()}
    assert index["metadata"]["total_size"] == sum(data.values()) == report["plan"]["output_bytes"]
    for s, h in headers.items():  # within the limit unless a single tensor is larger
        assert data[s] <= 20_000 or len(h) == 2, s

    # the same tensors as growing the single-file source in one shard
    one = hfgrow.grow(bert_mlm, tmp_path / "one", verify=False)
    assert one["plan"]["shards"] == 1
    a, b = load_all(out), load_all(tmp_path / "one")
    assert set(a) == set(b)
    for k in a:
        assert torch.equal(a[k], b[k]), k

    model, info = transformers.BertForMaskedLM.from_pretrained(out, output_loading_info=True)
    assert model.config.hidden_size == 32 and model.config.intermediate_size == 48
    assert not info["missing_keys"] and not info["mismatched_keys"]
    sd = model.state_dict()
    for k in a:
        assert torch.equal(sd[k], a[k]), k


def test_reader_sharded_bin_index(tmp_path, bert_base):
    sd = load_file(bert_base / "model.safetensors")
    names = sorted(sd)
    half = len(names) // 2
    parts = {"pytorch_model-00001-of-00002.bin": names[:half], "pytorch_model-00002-of-00002.bin": names[half:]}
    for file, keys in parts.items():
        torch.save({k: sd[k] for k in keys}, tmp_path / file)
    weight_map = {k: f for f, keys in parts.items() for k in keys}
    (tmp_path / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    reader = CheckpointReader(tmp_path)
    assert reader.files == sorted(parts)
    assert {k: i.file for k, i in reader.tensors.items()} == weight_map
    for k in names:
        assert torch.equal(reader.get(k), sd[k])


@pytest.mark.parametrize(
    "cls, prefix",
    [("BertModel", ""), ("BertModel", "bert."), ("BertForMaskedLM", "full")],
    ids=["base-no-prefix", "base-bert-prefix", "mlm-full-state-dict"],
)
def test_legacy_pytorch_model_bin(tmp_path, cls, prefix):
    """torch.save'd state dicts: gamma/beta names, an int64 position_ids buffer, with or without 'bert.'."""
    import transformers

    src = build_bert(tmp_path / "src", cls, seed=2)
    if prefix == "full":  # the whole state dict, tied decoder weight and decoder bias included
        sd = getattr(transformers, cls).from_pretrained(src).state_dict()
        assert "cls.predictions.decoder.weight" in sd
        prefix = ""
    else:
        sd = load_file(src / "model.safetensors")
    sd = legacy_names(sd, prefix)
    pos = ("bert." if cls != "BertModel" or prefix else "") + "embeddings.position_ids"
    sd[pos] = torch.arange(MAX_POS, dtype=torch.int64).unsqueeze(0)
    assert any(k.endswith("LayerNorm.gamma") for k in sd) and not any(k.endswith("LayerNorm.weight") for k in sd)
    torch.save(sd, src / "pytorch_model.bin")
    (src / "model.safetensors").unlink()

    reader = CheckpointReader(src)
    assert reader.files == ["pytorch_model.bin"]
    assert reader.tensors[pos].dtype == torch.int64 and reader.tensors[pos].shape == (1, MAX_POS)
    assert set(reader.tensors) == set(sd)

    out = tmp_path / "big"
    report = hfgrow.grow(src, out, verify=True)
    v = report["verification"]
    assert v["passed"] is True, v
    assert v["float32"]["missing_keys"] == []
    assert v["max_rel"] < 1e-4
    assert sorted(p.name for p in out.iterdir() if "safetensors" in p.name) == ["model.safetensors"]
    assert not (out / "pytorch_model.bin").exists()

    grown = load_file(out / "model.safetensors")
    # stored copies of tied weights are left to transformers, which ties them again on load
    tied = {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"} & set(sd)
    assert set(report["plan"]["dropped"]) == tied
    assert set(grown) == set(sd) - tied
    assert grown[pos].dtype == torch.int64 and torch.equal(grown[pos], sd[pos])
    emb = ("bert." if cls != "BertModel" or prefix else "") + "embeddings.word_embeddings.weight"
    assert grown[emb].shape == (sd[emb].shape[0], 32)
    model, info = getattr(transformers, cls).from_pretrained(out, output_loading_info=True)
    assert not info["missing_keys"] and not info["mismatched_keys"]
    if tied:  # and the pair is tied again
        assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert model.config.hidden_size == 32
    gamma = ("bert." if cls != "BertModel" or prefix else "") + "embeddings.LayerNorm.gamma"
    base = model.base_model if cls != "BertModel" else model
    assert torch.equal(base.embeddings.LayerNorm.weight.detach(), grown[gamma])


def test_config_in_4x_style(tmp_path, bert_base):
    """torch_dtype instead of dtype, and no architectures: a bare BertModel."""
    src = copy(bert_base, tmp_path / "src")
    edit_config(src, dtype=None, architectures=None, torch_dtype="float32", transformers_version="4.44.2")
    report = hfgrow.grow(src, tmp_path / "big", verify=True)
    assert report["plan"]["model_class"] is None
    v = report["verification"]
    assert v["passed"] is True and v["model_class"] == "BertModel" and v["float32"]["missing_keys"] == []
    cfg = json.loads((tmp_path / "big" / "config.json").read_text())
    assert cfg["hidden_size"] == 32 and cfg["intermediate_size"] == 48
    assert cfg["torch_dtype"] == "float32" and "architectures" not in cfg

    hfgrow.grow(src, tmp_path / "bf16", dtype="bfloat16", verify=False)
    cfg = json.loads((tmp_path / "bf16" / "config.json").read_text())
    assert cfg["torch_dtype"] == "bfloat16" and cfg["dtype"] == "bfloat16"
    assert set(tensor_dtypes(tmp_path / "bf16").values()) == {"BF16"}


# -- dtypes ----------------------------------------------------------------------------------------


def add_position_ids(folder: Path) -> str:
    path = folder / "model.safetensors"
    sd = load_file(path)
    name = "bert.embeddings.position_ids"
    sd[name] = torch.arange(MAX_POS, dtype=torch.int64).unsqueeze(0)
    save_file(sd, path, metadata={"format": "pt"})
    return name


def test_bfloat16_source_stays_bfloat16(tmp_path):
    src = build_bert(tmp_path / "src", dtype=torch.bfloat16, tokenizer=False)
    pos = add_position_ids(src)
    assert json.loads((src / "config.json").read_text())["dtype"] == "bfloat16"
    hfgrow.grow(src, tmp_path / "big", verify=False, symmetry="none")
    dtypes = tensor_dtypes(tmp_path / "big")
    assert dtypes.pop(pos) == "I64"
    assert set(dtypes.values()) == {"BF16"}
    assert json.loads((tmp_path / "big" / "config.json").read_text())["dtype"] == "bfloat16"

    report = hfgrow.grow(src, tmp_path / "f32", dtype="float32", verify=False, symmetry="none")
    dtypes = tensor_dtypes(tmp_path / "f32")
    assert dtypes.pop(pos) == "I64"
    assert set(dtypes.values()) == {"F32"}
    assert json.loads((tmp_path / "f32" / "config.json").read_text())["dtype"] == "float32"
    assert report["plan"]["hidden_size"] == [16, 32]
    # both are grown in fp32 from the same bf16 values and cast once: the bf16 output is the fp32 one,
    # rounded (plain copies: the split shares of --symmetry split are drawn on the output dtype's grid)
    a, b = load_file(tmp_path / "big" / "model.safetensors"), load_file(tmp_path / "f32" / "model.safetensors")
    assert set(a) == set(b)
    for k in a:
        assert torch.equal(b[k].to(a[k].dtype), a[k]), k
    exact = "bert.embeddings.word_embeddings.weight"  # plain copies: no rounding at all
    assert torch.equal(a[exact].float(), b[exact])
    assert torch.equal(b[pos], torch.arange(MAX_POS).unsqueeze(0))


def test_float32_source_cast_to_bfloat16(tmp_path, bert_mlm):
    src = copy(bert_mlm, tmp_path / "src")
    pos = add_position_ids(src)
    hfgrow.grow(src, tmp_path / "big", dtype="bfloat16", verify=False)
    dtypes = tensor_dtypes(tmp_path / "big")
    assert dtypes.pop(pos) == "I64"
    assert set(dtypes.values()) == {"BF16"}
    cfg = json.loads((tmp_path / "big" / "config.json").read_text())
    assert cfg["dtype"] == "bfloat16" and "torch_dtype" not in cfg
    # the source is float32, untouched
    assert json.loads((src / "config.json").read_text())["dtype"] == "float32"


# -- other files -----------------------------------------------------------------------------------


def test_non_weight_files_copied(tmp_path, bert_mlm):
    src = copy(bert_mlm, tmp_path / "src")
    (src / "generation_config.json").write_text('{"max_length": 20}\n')
    (src / "notes.txt").write_text("made for a test\n")
    (src / "tf_model.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    (src / "flax_model.msgpack").write_bytes(b"\x80" * 16)
    (src / "README.md").write_text("# the source card of this test\n")
    (src / "growth_report.json").write_text("{}\n")
    (src / "sub").mkdir()
    (src / "sub" / "x.txt").write_text("nested\n")

    report = hfgrow.grow(src, tmp_path / "big", verify=False)
    out = tmp_path / "big"
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        assert (out / name).read_bytes() == (src / name).read_bytes(), name
    for name in ("tf_model.h5", "flax_model.msgpack", "notes.txt"):  # only what a checkpoint consists of is copied
        assert not (out / name).exists(), name
    assert report["not_copied"] == {"flax_model.msgpack": "weights of another format (the small model's)", "notes.txt": "not a checkpoint file",
                                    "sub/": "folder", "tf_model.h5": "weights of another format (the small model's)"}
    assert json.loads((out / "growth_report.json").read_text())["plan"]["recipe"] == "bert"  # the new report
    assert "the source card of this test" not in (out / "README.md").read_text()  # a new model card, not the source's
    assert sorted(p.name for p in out.iterdir()) == sorted([
        ".hfgrow-files.json", "config.json", "model.safetensors", "growth_report.json", "growth_report.md", "README.md",
        "tokenizer.json", "tokenizer_config.json", "generation_config.json",
    ])


def test_copy_files_refuses_a_fifo_swapped_in_after_the_check(tmp_path):
    """A file checked, then replaced by a FIFO before it is copied: refused at once, never a read that waits forever."""
    import os

    from hfgrow.checkpoint import copy_files
    from hfgrow.errors import GrowthError

    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "vocab.txt")
    with pytest.raises(GrowthError, match="no longer a regular file"):
        copy_files({"vocab.txt": tmp_path / "vocab.txt"}, tmp_path / "out")
    assert not (tmp_path / "out" / "vocab.txt").exists()


def test_copy_files_keeps_the_mode_and_times_of_the_file_it_read(tmp_path, monkeypatch):
    """A copied file (a tokenizer's, a card) keeps the permission bits and times of the file whose bytes it holds, taken
    from the open file: a file swapped in at the path during the copy lends it neither (they were copied by path)."""
    import os
    import shutil
    import stat

    from hfgrow.checkpoint import copy_files

    (tmp_path / "out").mkdir()
    vocab, other = tmp_path / "vocab.txt", tmp_path / "other.txt"
    vocab.write_text("the approved file\n")
    os.chmod(vocab, 0o640)
    os.utime(vocab, ns=(1_000_000_000, 2_000_000_000))
    other.write_text("swapped in\n")
    os.chmod(other, 0o604)
    copy = shutil.copyfileobj

    def swapping(f, g, *args):
        copy(f, g, *args)
        os.replace(other, vocab)  # the path now names another file

    monkeypatch.setattr(shutil, "copyfileobj", swapping)
    copy_files({"vocab.txt": vocab}, tmp_path / "out")
    copied = tmp_path / "out" / "vocab.txt"
    assert copied.read_text() == "the approved file\n"
    assert stat.S_IMODE(copied.stat().st_mode) == 0o640 and copied.stat().st_mtime_ns == 2_000_000_000
