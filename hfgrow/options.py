"""What a growth can be asked to do: GrowthOptions, the limits and choices of its options, and their validation."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .algebra import Convention, Symmetry
from .checkpoint import parse_size
from .errors import GrowthError
from .inputs import check_seed, check_tolerance, text_file_problem

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


ATTENTION_MODES = ("heads", "head-dim")
# per dimension (hidden, FFN, heads, head_dim, their products): 14 times the widest of any released model (a 73,728
# FFN); the options are refused beyond it at once, the grown sizes before anything is built per unit
MAX_WIDTH = 2 ** 20
SIZE_OPTIONS = ("factor", "hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim")
VERIFY_MODES = ("auto", "full", "blockwise")
HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")  # a Hub repository id: name or org/name (fullmatch: no final newline)
MAX_BLOCKS = 4096  # per stack: far beyond any model's depth, and planning, writing and verifying stay quick
FORMATS = ("hf", "dcp", "titan")  # a Hugging Face folder (safetensors), a torch distributed checkpoint, one in torchtitan's names
# --layers: new blocks that are the identity, spread through the stack; copies of blocks 0, 1, … appended after it in
# order, each the identity (G_stack's order, exact); or the whole stack repeated, plain copies (G_stack, not exact)
NEW_BLOCKS = ("identity", "stack-identity", "stack")
DENSE_OUT = ("keep", "grow")
VISION_TOWER = ("keep", "grow")  # a vision-language model's vision tower: kept as it is, or grown by --factor  # sentence-transformers Dense modules: keep their output dimension, or grow it


def hub_id_problem(repo_id: str) -> str | None:
    """Why the Hub would refuse ``repo_id`` (huggingface_hub's own rules: no '--' or '..', at most 96 characters, no
    leading or trailing '-' or '.', ...), or None: checked before growing, not found by the upload after it."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as e:
        return str(e).strip().splitlines()[0] if str(e).strip() else "the Hub refuses it"
    return None


def adapter_name(folder: str | os.PathLike) -> str:
    """The adapter's folder name, which names its grown copy in OUT/adapters/."""
    resolved = Path(folder).resolve().name
    if not resolved:
        raise GrowthError(f"--adapter {folder}: a folder with a name is needed (it names OUT/adapters/<name>)")
    return resolved


def _int_option(name: str, value: Any, minimum: int = 1) -> int | None:
    if value is None:
        return None
    try:
        number = float(value) if isinstance(value, str) else value
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not float(number).is_integer() or number < minimum:
        fraction = name == "factor" and isinstance(number, float) and number > 1 and not number.is_integer()
        hint = " (a size between the multiples: --hidden-size and --intermediate-size)" if fraction else ""
        raise GrowthError(f"--{name} must be an integer >= {minimum}, got {value!r}{hint}")
    return int(number)


@dataclass
class GrowthOptions:
    """Everything a growth can be asked to do; the CLI and the Python API share it.

    ``factor`` grows every width by K; ``hidden_size``, ``intermediate_size``, ``num_heads`` and
    ``head_dim`` set targets of their own (any size for pre-norm models); with none of them and no
    ``layers``, the factor is 2.
    """

    factor: int | None = None
    attention: str = "heads"  # grow the number of heads (and KV heads), or head_dim ("head-dim")
    hidden_size: int | None = None
    intermediate_size: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None  # GQA: KV heads after growth [default: chosen from the heads, see _kv_heads]
    head_dim: int | None = None
    layers: int | None = None  # total blocks per stack after growth; new blocks are exactly the identity
    insert_at: tuple[int, ...] | str | None = None  # insert a new block after these original blocks
    new_blocks: str = "identity"  # of NEW_BLOCKS: identity and stack-identity exact, stack not (G_stack)
    symmetry: str = "split"  # how copies are kept from training identically: split, noise or none
    convention: str = "copy"
    allow_lossy: bool = False  # accept a growth that is only approximately lossless (reported as such)
    dtype: str | None = None  # output dtype of floating tensors; None keeps each tensor's own
    max_shard_size: str | int = "5GB"
    to: tuple[str, ...] | str | None = None  # the grown checkpoint's formats, of FORMATS [default: the source's]
    overwrite: bool = False
    verify: bool = True
    device: str = "cpu"
    verify_mode: str = "auto"  # full: each model whole; blockwise: one block's weights at a time; auto: full when it fits
    tolerance: float = 1e-4
    text_file: str | None = None
    seed: int = 0
    revision: str | None = None  # of a Hub id source
    push_to_hub: str | None = None  # a repository id to upload the grown checkpoint to
    token: str | None = dataclasses.field(default=None, repr=False)  # a Hub token (default: HF_TOKEN or the login cache); never recorded or printed
    base_model: str | None = None  # the Hub id of the source, for the card's base_model (a Hub id source's own by default)
    private: bool = False
    push_revision: str | None = None  # the branch to push to
    commit_message: str | None = None
    create_pr: bool = False
    force: bool = False  # push even when verification failed or was skipped
    dense_out: str = "keep"  # sentence-transformers Dense modules: keep their output dimension, or grow it
    adapters: tuple[str, ...] = ()
    vision_tower: str = "keep"  # a vision-language model's vision tower: kept as it is, or grown by --factor (in width)  # PEFT LoRA adapter folders of the small model, grown into <out>/adapters/<name>

    @property
    def stacked(self) -> bool:
        """New blocks copied after the stack in order (--new-blocks stack or stack-identity), not spread through it."""
        return self.new_blocks in ("stack", "stack-identity")

    def command(self, src: str, out: str) -> str:
        """The CLI command that does what these options do (for the model card)."""
        import shlex

        args = ["hfgrow", "grow", str(src), "--out", str(out)]
        for f in dataclasses.fields(self):
            value, default = getattr(self, f.name), f.default
            if value == default or f.name in ("overwrite", "token"):
                continue
            flag = "--" + f.name.replace("_", "-")
            if f.name == "verify":
                args.append("--no-verify")
            elif f.name == "adapters":
                args += [x for a in value for x in ("--adapter", a)]
            elif value is True:
                args.append(flag)
            elif value not in (None, False):
                args += [flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
        return shlex.join(args)

    def validate(self) -> None:
        """Options checked and normalised (integers, tuples), each refusal one line, before anything is read."""
        self._validate_sizes()
        self._validate_inputs()
        self._validate_choices()
        self._validate_hub()
        self._validate_device()
        if self.verify and self.text_file is not None:  # checked now, not after a long growth (contents: inputs.py)
            problem = text_file_problem(self.text_file)
            if problem:
                raise GrowthError(f"--text-file {str(self.text_file)!r} {problem}")

    def _validate_sizes(self) -> None:
        self.factor = _int_option("factor", self.factor, minimum=2)
        for name in ("hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim", "layers"):
            setattr(self, name, _int_option(name.replace("_", "-"), getattr(self, name)))
        for name in SIZE_OPTIONS:
            if (getattr(self, name) or 0) > MAX_WIDTH:
                raise GrowthError(f"--{name.replace('_', '-')} {getattr(self, name)}: hfgrow grows a dimension to at most {MAX_WIDTH:,}")
        if self.factor is None and not any((self.hidden_size, self.intermediate_size, self.num_heads, self.head_dim, self.layers)):
            self.factor = 2

    def _validate_inputs(self) -> None:
        if isinstance(self.adapters, (str, os.PathLike)):
            self.adapters = (str(self.adapters),)
        self.adapters = tuple(str(a) for a in self.adapters)
        names = [adapter_name(a) for a in self.adapters]
        if len(set(names)) != len(names):
            raise GrowthError(f"--adapter: two adapters named {next(n for n in names if names.count(n) > 1)!r} "
                              f"would be written to the same adapters/ folder")
        if isinstance(self.insert_at, str):
            try:
                self.insert_at = tuple(int(x) for x in self.insert_at.split(",") if x.strip())
            except ValueError:
                raise GrowthError(f"--insert-at takes block numbers such as 1,3 — got {self.insert_at!r}") from None
        if self.insert_at is not None and self.layers is None:
            raise GrowthError("--insert-at needs --layers")
        if self.stacked and self.layers is None:
            raise GrowthError(f"--new-blocks {self.new_blocks} needs --layers" +
                              (" (a whole multiple of the blocks there are)" if self.new_blocks == "stack" else ""))
        if self.stacked and self.insert_at is not None:
            raise GrowthError(f"--insert-at places identity blocks among the others: --new-blocks {self.new_blocks} copies "
                              f"the stack after it in order")
        if self.new_blocks == "stack" and self.adapters:
            raise GrowthError("--adapter with --new-blocks stack: the repeated blocks would hold no adapter weights")

    def _validate_choices(self) -> None:
        for name, value, allowed in (("attention", self.attention, ATTENTION_MODES), ("verify_mode", self.verify_mode, VERIFY_MODES),
                                     ("convention", self.convention, [c.value for c in Convention]),
                                     ("symmetry", self.symmetry, [s.value for s in Symmetry]),
                                     ("dense_out", self.dense_out, DENSE_OUT),
                                     ("vision_tower", self.vision_tower, VISION_TOWER), ("new_blocks", self.new_blocks, NEW_BLOCKS)):
            if value not in allowed:
                raise GrowthError(f"--{name.replace('_', '-')} must be one of {', '.join(allowed)}, got {value!r}")
        if isinstance(self.to, str):
            self.to = tuple(f.strip() for f in self.to.split(","))
        if self.to is not None:
            self.to = tuple(dict.fromkeys(self.to))
            wrong = [f for f in self.to if f not in FORMATS]
            if wrong or not self.to:
                raise GrowthError(f"--to takes {', '.join(FORMATS)}, or a DCP format and hf (dcp,hf), got {','.join(self.to)!r}")
            if {"dcp", "titan"} <= set(self.to):
                raise GrowthError("--to takes one torch distributed checkpoint format: dcp (the model under 'model') or titan "
                                  "(torchtitan's names at the top level)")

    def _validate_hub(self) -> None:
        if self.push_to_hub is None:
            for name in ("private", "push_revision", "commit_message", "create_pr", "force"):
                if getattr(self, name):
                    raise GrowthError(f"--{name.replace('_', '-')} goes with --push-to-hub")
        if self.push_to_hub is not None and not self.verify and not self.force:
            raise GrowthError("--push-to-hub pushes verified checkpoints only: drop --no-verify, or add --force")
        for name in ("push_to_hub", "base_model"):
            value = getattr(self, name)
            if value is None:
                continue
            why = hub_id_problem(value) if isinstance(value, str) and HUB_ID.fullmatch(value) else "not such an id"
            if why:
                raise GrowthError(f"--{name.replace('_', '-')} takes a repository id such as 'name' or 'org/name', got "
                                  f"{value!r}: {why}")

    def _validate_device(self) -> None:
        if self.dtype is not None and self.dtype not in DTYPES:
            raise GrowthError(f"--dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        parse_size(self.max_shard_size)
        self.seed = check_seed(self.seed)
        self.tolerance = check_tolerance(self.tolerance)
        try:  # the device grows the tensors and runs the verification
            device = torch.device(self.device)
        except (RuntimeError, TypeError):
            raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}") from None
        if device.type not in ("cpu", "cuda"):
            raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}")
        if device.type == "cuda" and not torch.cuda.is_available():
            raise GrowthError("--device cuda: no CUDA device is available")
        if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
            raise GrowthError(f"--device {self.device}: there are {torch.cuda.device_count()} CUDA devices")
