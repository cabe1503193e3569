"""Hostile torch distributed checkpoints (issue 31): a .metadata pickle that would run code, links and special files
in a DCP or accelerate FSDP2 source, optimizer moments that do not fit their parameter, and the messages. Every case
is built in one process with torch.distributed.checkpoint, and must end with one line, exit 2 and nothing written (or
run)."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import struct
import time
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from click.testing import CliRunner

import hfgrow

from hfgrow.cli import main
from hfgrow.testing import make_model

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
METADATA_MODULE = "torch.distributed.checkpoint.metadata"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result, words):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], result.output
    return lines[0]


def save_dcp(folder, state, model=None):
    dcp.save(state, checkpoint_id=str(folder), no_dist=True)
    if model is not None:
        model.config.architectures = [type(model).__name__]
        model.config.save_pretrained(folder)
    return Path(folder)


def trained(cls="LlamaForCausalLM"):
    """A tiny model after one AdamW step, and its state dicts as get_state_dict gives them."""
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model = make_model(cls)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.arange(9)[None], labels=torch.arange(9)[None]).loss.backward()
    opt.step()
    return model, *get_state_dict(model, opt)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """A plain DCP folder of model and optimizer, and an accelerate FSDP2 save_state folder of the same."""
    root = tmp_path_factory.mktemp("dcp")
    model, model_sd, optim_sd = trained()
    plain = save_dcp(root / "plain", {"model": model_sd, "optim": optim_sd}, model)
    acc = root / "accelerate"
    save_dcp(acc / "pytorch_model_fsdp_0", {"model": model_sd})
    save_dcp(acc / "optimizer_0", {"optimizer": optim_sd})
    model.config.save_pretrained(acc)
    (acc / "random_states_0.pkl").write_bytes(b"rng")
    (acc / "scheduler.bin").write_bytes(b"sched")
    return {"plain": plain, "accelerate": acc}


def copy_of(sources, kind, tmp_path):
    return Path(shutil.copytree(sources[kind], tmp_path / kind, symlinks=True))


def nothing_written(tmp_path):
    assert not list(tmp_path.glob("out*")), list(tmp_path.glob("out*"))


# --- 1. the .metadata pickle runs nothing ---------------------------------------------------------------------------


def _text(s: str, protocol: int) -> bytes:
    if protocol == 0:
        return b"V" + s.encode("raw_unicode_escape") + b"\n"
    data = s.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def _value(v, protocol: int) -> bytes:
    if isinstance(v, str):
        return _text(v, protocol)
    return b"(" + b"".join(_value(x, protocol) for x in v) + (b"l" if isinstance(v, list) else b"t")


def gadget(protocol: int, module: str, name: str, args: tuple, call: str) -> bytes:
    """A pickle of ``protocol``'s encoding that calls the global ``module``/``name`` on ``args``: by REDUCE, INST
    (protocol 0), OBJ (protocol 1) or NEWOBJ (2+), the global named by GLOBAL (below 4) or STACK_GLOBAL (4, 5)."""
    head = b"\x80" + bytes([protocol]) if protocol >= 2 else b""
    glob = (_text(module, protocol) + _text(name, protocol) + b"\x93" if protocol >= 4
            else b"c" + module.encode() + b"\n" + name.encode() + b"\n")
    items = b"".join(_value(a, protocol) for a in args)
    body = {"reduce": glob + b"(" + items + b"tR",
            "inst": b"(" + items + b"i" + module.encode() + b"\n" + name.encode() + b"\n",
            "obj": b"(" + glob + items + b"o",
            "newobj": glob + b"(" + items + b"t\x81"}[call]
    return head + body + b"."


def _calls(protocol):
    return ["reduce", "inst" if protocol == 0 else "obj" if protocol == 1 else "newobj"]


def hostile_metadata(tmp_path, every: bool):
    """(description, pickle bytes, whether it is one of the issue's two) of gadgets under every protocol and way of
    calling, harmless here: they would create ``ran`` and empty ``victim`` in tmp_path. ``every``: more than the two."""
    ran, victim = tmp_path / "ran", tmp_path / "victim"
    issue = [(METADATA_MODULE, "torch._strobelight.cli_function_profiler.subprocess.Popen", (["touch", str(ran)],)),
             (METADATA_MODULE, "torch._export.io.FileIO", (str(victim), "w"))]
    more = [(METADATA_MODULE, "os.system", (f"touch {ran}",)),
            ("torch.distributed.checkpoint.filesystem", "os.system", (f"touch {ran}",)),
            ("subprocess", "Popen", (["touch", str(ran)],)), ("io", "FileIO", (str(victim), "w")),
            ("builtins", "getattr", ("x", "y"))]
    return [(f"protocol {protocol} {call} {module}:{name}", gadget(protocol, module, name, args, call), i < len(issue))
            for protocol in range(6) for call in _calls(protocol)
            for i, (module, name, args) in enumerate(issue + more if every else issue)]


@pytest.mark.parametrize("kind", ["plain", "accelerate"])
def test_a_hostile_metadata_runs_nothing_in_grow_inspect_or_verify(sources, tmp_path, kind):
    """Issue 31, item 1: dotted STACK_GLOBAL names reached subprocess.Popen and io.FileIO through the DCP modules'
    imports; every protocol's encoding, every way of calling, in the model's and the optimizer's .metadata."""
    src = copy_of(sources, kind, tmp_path)
    victim = tmp_path / "victim"
    where = [src / ".metadata"] if kind == "plain" else [src / "pytorch_model_fsdp_0/.metadata", src / "optimizer_0/.metadata"]
    original = {w: w.read_bytes() for w in where}
    for what, data, everywhere in hostile_metadata(tmp_path, every=kind == "plain"):
        victim.write_text("precious")
        for metadata in where:
            metadata.write_bytes(data)
            commands = ([src, "--out", tmp_path / "out"], ["inspect", src], ["verify", src, src])
            for args in commands[:3 if everywhere and "protocol 4 reduce" in what else 1]:
                refused(cli(*args), "is not a torch distributed checkpoint's metadata")
            metadata.write_bytes(original[metadata])
        assert victim.read_text() == "precious", what
    time.sleep(0.3)  # a process started would have touched it by now
    assert not (tmp_path / "ran").exists()
    nothing_written(tmp_path)


def test_the_metadata_names_only_dcp_metadata(tmp_path):
    """Issue 31, item 1 (issue 43: decoded as data): every other name the DCP modules, torch and pathlib hold is
    refused, in any protocol, and the real metadata re-encoded in protocols 0-5 reads the same."""
    import pathlib

    import torch.distributed.checkpoint.filesystem as filesystem
    import torch.distributed.checkpoint.metadata as metadata_module

    from hfgrow.dcp_metadata import KNOWN, Bad, parse, read_metadata
    from hfgrow.pickle_data import decode

    model = make_model("LlamaForCausalLM")
    src = save_dcp(tmp_path / "ckpt", {"model": model.state_dict(), "n": 3})
    expected = read_metadata(src, src)
    original = (src / ".metadata").read_bytes()
    for module in (metadata_module, filesystem, torch, pathlib):
        for name in dir(module):
            if (module.__name__, name) in KNOWN:
                continue
            with pytest.raises(Bad, match="which DCP's metadata never holds"):
                parse(decode(gadget(4, module.__name__, name, (), "reduce")), src, src)
    (src / ".metadata").write_bytes(gadget(4, "torch", "load", (), "reduce"))
    with pytest.raises(hfgrow.GrowthError, match="is not a torch distributed checkpoint's metadata .it names torch.load"):
        read_metadata(src, src)
    real = pickle.loads(original)  # the file this test wrote
    for protocol in range(6):
        (src / ".metadata").write_bytes(pickle.dumps(real, protocol=protocol))
        assert read_metadata(src, src) == expected


# --- 2, 6, 8. one source-file policy: inside the source, regular files ----------------------------------------------


def outside_copy(src, tmp_path):
    return Path(shutil.copytree(src, tmp_path / "elsewhere"))


def link(path: Path, to: Path) -> None:
    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    path.symlink_to(to, target_is_directory=to.is_dir())


@pytest.mark.parametrize("what", [".metadata", "a .distcp file", "config.json", "pytorch_model_fsdp_0/", "optimizer_0/",
                                  "optimizer_0/.metadata", "scheduler.bin", "random_states_0.pkl"])
def test_links_out_of_a_dcp_source_are_refused(sources, tmp_path, what):
    """Issue 31, items 2 and 8: a .metadata, a storage file, an accelerate part folder or a state file that links
    outside the source was followed (the outside model grown, PASS; a scheduler silently dropped): refused, in grow,
    inspect and verify alike."""
    kind = "plain" if what in (".metadata", "a .distcp file", "config.json") else "accelerate"
    src = copy_of(sources, kind, tmp_path)
    elsewhere = outside_copy(src, tmp_path)
    name = what.rstrip("/") if what != "a .distcp file" else next(src.glob("*.distcp")).name
    link(src / name, elsewhere / name)
    for args in ([src, "--out", tmp_path / "out", "--to", "dcp,hf"], ["inspect", src], ["verify", src, src]):
        if what in ("scheduler.bin", "random_states_0.pkl") and args[0] != src:
            continue  # the training state is read by a growth alone
        refused(cli(*args), f"{name} in {src} is a link to {elsewhere / name}, outside the checkpoint folder: refused")
    nothing_written(tmp_path)


class Alarm(Exception):
    pass


def within(seconds, action):
    """``action()``, interrupted after ``seconds`` (an open() of a FIFO would block forever)."""
    import signal

    def ring(signum, frame):
        raise Alarm

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        return action()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("what", ["a .distcp file", ".metadata", "config.json", "optimizer_0/__0_0.distcp", "scheduler.bin",
                                  "optimizer_0/.metadata"])
def test_a_fifo_in_a_dcp_source_is_refused_before_it_is_opened(sources, tmp_path, what):
    """Issue 31, item 6: a FIFO in place of a .distcp file blocked open() forever: every file is told a regular file
    from its metadata before anything opens it."""
    kind = "accelerate" if "/" in what or what == "scheduler.bin" else "plain"
    src = copy_of(sources, kind, tmp_path)
    name = next(src.glob("*.distcp")).name if what == "a .distcp file" else what
    (src / name).unlink()
    os.mkfifo(src / name)
    result = within(60, lambda: cli(src, "--out", tmp_path / "out", "--no-verify"))
    if what == ".metadata":  # no .metadata file: not a torch distributed checkpoint, and no weights either
        refused(result, f"no weights in {src}")
    else:
        refused(result, f"{name} in {src} is not a regular file: refused")
    nothing_written(tmp_path)


@pytest.mark.parametrize("what", ["config.json", pytest.param("tokenizer.json", marks=pytest.mark.exhaustive)])
def test_the_hugging_face_reader_shares_the_policy(tmp_path, what):
    """The same rule for a Hugging Face folder: a FIFO config.json (read by transformers) is refused, never opened, and
    so is one linking outside; a tokenizer file that is a FIFO or links outside is left behind, and the verification
    does not open it (random token ids instead)."""
    from hfgrow.testing import build_bert

    src = build_bert(tmp_path / "src")
    elsewhere = tmp_path / "elsewhere" / what
    elsewhere.parent.mkdir()
    shutil.copy(src / what, elsewhere)
    for make, problem, left in [(os.mkfifo, "is not a regular file", "not a regular file"),
                                (lambda p: p.symlink_to(elsewhere), f"is a link to {elsewhere}, outside",
                                 "link to a file outside the source folder")]:
        (src / what).unlink()
        make(src / what)
        result = within(60, lambda: cli(src, "--out", tmp_path / "out"))
        if what == "config.json":
            refused(result, f"{what} in {src} {problem}")
            nothing_written(tmp_path)
            continue
        assert result.exit_code == 0 and f"verification (random token ids ({what} in {src}" in result.output, result.output
        assert json.loads((tmp_path / "out" / "growth_report.json").read_text())["not_copied"] == {what: left}
        shutil.rmtree(tmp_path / "out")


# --- 3, 4, 5, 7, 10. optimizer moments that do not fit their parameter: one check, at planning ------------------------

WEIGHT = "model.layers.0.mlp.gate_proj.weight"  # [24, 16]


def _transposed(t):
    return t.reshape(t.shape[1], t.shape[0])


MOMENT_CASES = {  # what the state holds instead → what the refusal says
    "same numel, other shape": ("exp_avg", _transposed, "is torch.float32 of shape (16, 24), not a floating point tensor "
                                                       "of the parameter's shape (24, 16)"),
    "int64": ("exp_avg", lambda t: t.long(), "is torch.int64 of shape (24, 16)"),
    "wrong numel": ("exp_avg", lambda t: t.flatten()[:15], "is torch.float32 of shape (15,)"),
    "a number": ("exp_avg", lambda t: 5, "stored as bytes (a number?), not a floating point tensor"),
    "NaN": ("exp_avg_sq", lambda t: t.index_fill(0, torch.tensor([3]), float("nan")), "holds NaN or infinite values"),
    "negative": ("exp_avg_sq", lambda t: -t, "holds negative values"),
}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.exhaustive) if c in ("int64", "wrong numel", "negative")
                                  else c for c in MOMENT_CASES])
def test_dcp_moments_that_do_not_fit_their_parameter_are_refused_at_planning(tmp_path, case):
    """Issue 31, items 3, 5, 7, 10: a moment of another shape (same numel: grown scrambled, PASS), of an integer dtype,
    of the wrong numel (blamed on the output mid-write), a number (exit 1, AttributeError), NaN or negative second
    moments: refused in one line naming the source tensor, before anything is written."""
    key, change, words = MOMENT_CASES[case]
    model, model_sd, optim_sd = trained()
    optim_sd["state"][WEIGHT][key] = change(optim_sd["state"][WEIGHT][key])
    src = save_dcp(tmp_path / "ckpt", {"model": model_sd, "optim": optim_sd}, model)
    line = refused(cli(src, "--out", tmp_path / "out", "--to", "dcp,hf"), words)
    assert f"{key} of '{WEIGHT}' (optim.state.{WEIGHT}.{key})" in line
    nothing_written(tmp_path)


@pytest.mark.parametrize("case", ["NaN", "negative", "int64", "a key that is no index"])
def test_trainer_moments_share_the_check(case):
    """Issue 31, item 5 (and 3 on the Trainer path, which refused it already): the same check refuses NaN and negative
    second moments of a Trainer's optimizer.pt, and a state keyed by something that is no parameter index (its state
    was silently dropped)."""
    import hfgrow
    from hfgrow.optim import grow_optimizer_state

    model = make_model("LlamaForCausalLM")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.arange(9)[None], labels=torch.arange(9)[None]).loss.backward()
    opt.step()
    state = opt.state_dict()
    index = [n for n, _ in model.named_parameters()].index(WEIGHT)
    if case == "a key that is no index":
        state["state"]["abc"] = state["state"].pop(index)
        words = "an entry keyed 'abc', which is not the index of a parameter"
    else:
        key, change, words = MOMENT_CASES[case]
        state["state"][index][key] = change(state["state"][index][key])
    with pytest.raises(hfgrow.GrowthError, match=words.replace("(", r"\(").replace(")", r"\)")):
        grow_optimizer_state(state, model, None, factor=2)


def test_two_metadata_keys_of_one_entry_are_refused_before_writing(tmp_path):
    """Issue 31, item 4: two metadata keys whose planner path is the same tensor: the grown checkpoint was published
    with a small-sized model.norm.weight, then NOT VERIFIED (exit 3). Refused before writing (exit 2)."""
    model = make_model("LlamaForCausalLM")
    src = save_dcp(tmp_path / "ckpt", {"model": model.state_dict(), "extra": {"w": torch.ones(16)}}, model)
    metadata = dcp.FileSystemReader(str(src)).read_metadata()
    metadata.planner_data["extra.w"] = ("model", "model.norm.weight")
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(cli(src, "--out", tmp_path / "out"), "the keys 'model.model.norm.weight' and 'extra.w' are both the entry "
                                                 "model.model.norm.weight of the state dict: refused")
    metadata.planner_data["extra.w"] = ("model", "model.norm.weight", "x")
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(cli(src, "--out", tmp_path / "out"), "the entry 'model.model.norm.weight' holds the entry 'extra.w'")
    nothing_written(tmp_path)


# --- 9. a signal during a DCP write ----------------------------------------------------------------------------------


def test_sigterm_during_a_dcp_write_exits_143(sources, tmp_path, monkeypatch):
    """Issue 31, item 9: SIGTERM inside torch.save's zip writer (a .distcp file half written) surfaced as the writer's
    RuntimeError ('unexpected pos ...'), exit 2: it is the interrupt, exit 143 with hfgrow's message for signals, the
    old --out intact and nothing left beside it."""
    import contextlib
    import signal

    from torch.distributed.checkpoint.filesystem import FileSystem

    from hfgrow.cli import Terminated

    original = FileSystem.create_stream

    class Interrupted:
        """A stream whose third write is interrupted by SIGTERM, as hfgrow's handler raises it."""

        def __init__(self, stream):
            self.stream, self.writes = stream, 0

        def write(self, data):
            self.writes += 1
            if self.writes == 3:
                raise Terminated(signal.SIGTERM)
            return self.stream.write(data)

        def __getattr__(self, name):
            return getattr(self.stream, name)

    @contextlib.contextmanager
    def create_stream(self, path, mode):
        with original(self, path, mode) as stream:
            yield Interrupted(stream) if str(path).endswith(".distcp") and "w" in mode else stream

    out = tmp_path / "out"
    assert cli(sources["plain"], "--out", out, "--no-verify", "-q").exit_code == 0
    before = sorted(p.name for p in out.iterdir())
    monkeypatch.setattr(FileSystem, "create_stream", create_stream)
    result = cli(sources["plain"], "--out", out, "--overwrite", "--no-verify", "-q")
    assert result.exit_code == 143, result.output
    assert result.output.strip() == "interrupted (SIGTERM): nothing was written", result.output
    assert sorted(p.name for p in out.iterdir()) == before and [p.name for p in tmp_path.iterdir() if p.name != "plain"] == ["out"]


# --- 11, 12. messages ------------------------------------------------------------------------------------------------


def test_to_titan_from_another_family_names_what_it_writes(tmp_path):
    """Issue 31, item 11: --to titan from a Hugging Face GPT-2 folder said 'a torchtitan checkpoint with a config.json
    of model_type gpt2' (the source is none): it says which families --to titan writes."""
    from hfgrow.testing import build_model

    src = build_model(tmp_path / "src", "GPT2LMHeadModel")
    refused(cli(src, "--out", tmp_path / "out", "--to", "titan"),
            "--to titan writes torchtitan's dense Llama-3 and Qwen3 models (model_type llama or qwen3), and this model's "
            "model_type is 'gpt2': grow it with --to hf or --to dcp")
    nothing_written(tmp_path)


def test_a_llava_config_without_vision_config_names_it(tmp_path):
    """Issue 31, item 12: a LLaVA config.json without vision_config under --vision-tower grow said "'hidden_size' should
    be a positive integer, got None": it names vision_config."""
    from hfgrow.testing import build_model

    src = build_model(tmp_path / "src", "LlavaForConditionalGeneration")
    config = json.loads((src / "config.json").read_text())
    del config["vision_config"]
    (src / "config.json").write_text(json.dumps(config))
    refused(cli(src, "--out", tmp_path / "out", "--vision-tower", "grow", "--factor", "2"),
            "config.json has no vision_config: the sizes of the tower it describes are unknown, and it cannot grow "
            "(--vision-tower grow)")
    nothing_written(tmp_path)
