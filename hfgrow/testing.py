"""Tiny, fully randomised checkpoints built with transformers' own classes (tests and the demo).

HF init zeroes biases and sets norms to 1 and 0, which hides exactly the mistakes that matter (a
wrong bias scale is invisible with zero biases), so every parameter is drawn at random here, and
norm eps is made large enough that a wrong eps scale shows in the logits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .verify import SENTENCES

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


@torch.no_grad()
def randomize_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Every parameter drawn at random: weights ~ N(0, 1/fan_in), biases ~ N(0, 0.2), norm γ ~ N(1, 0.3)."""
    g = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        noise = torch.randn(p.shape, generator=g, dtype=torch.float32)
        if p.dim() >= 2:
            p.copy_(noise / p.shape[-1] ** 0.5 * 1.5)
        elif "norm" in name.lower() or name.endswith(("gamma", "ln_1.weight", "ln_2.weight", "ln_f.weight")):
            p.copy_(1.0 + 0.3 * noise)
        else:
            p.copy_(0.2 * noise)
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
    model.to(dtype).save_pretrained(folder)
    if tok is not None:
        tok.save_pretrained(folder)
    return folder
