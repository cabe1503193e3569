"""torchtitan's checkpoints: the ``step-N/`` folders its CheckpointManager writes with torch distributed checkpoint.

The model's tensors lie at the top level under torchtitan's names (``tok_embeddings.weight``,
``layers.N.attention.qkv_linear.wq.weight``, ``layers.N.feed_forward.w1.weight``, ``norm.weight``, ``lm_head.weight``);
``optimizer`` is a flat dict (``state.<name>.exp_avg``, ``param_groups.<name>.lr``, …) and ``lr_scheduler``,
``dataloader`` and ``train_state`` lie beside it. :class:`TitanNames` maps the names of torchtitan's dense Llama-3 and
Qwen3 models to the Hugging Face names the recipes know, as torchtitan 0.3's state-dict adapters do
(``torchtitan/models/{llama3,qwen3}/state_dict_adapter.py``), and gives Llama-3's query and key rows transformers'
rotary order (the adapter's permutation: torchtitan's Llama-3 rotates interleaved pairs; its Qwen3 already rotates
halves, as transformers does). Earlier torchtitan releases named the projections ``attention.wq.weight`` and the
output ``output.weight``: read and written back under the names found.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from .algebra import rotary_rows
from .errors import GrowthError

OPTIMIZER = "optimizer"
_BLOCK = {  # after "model.layers.N." → after "layers.N."
    "self_attn.q_proj.weight": "attention.qkv_linear.wq.weight",
    "self_attn.k_proj.weight": "attention.qkv_linear.wk.weight",
    "self_attn.v_proj.weight": "attention.qkv_linear.wv.weight",
    "self_attn.o_proj.weight": "attention.wo.weight",
    "mlp.gate_proj.weight": "feed_forward.w1.weight",
    "mlp.up_proj.weight": "feed_forward.w3.weight",
    "mlp.down_proj.weight": "feed_forward.w2.weight",
    "input_layernorm.weight": "attention_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
}
_QK_NORM = {"self_attn.q_norm.weight": "attention.q_norm.weight", "self_attn.k_norm.weight": "attention.k_norm.weight"}
_TOP = {"model.embed_tokens.weight": "tok_embeddings.weight", "model.norm.weight": "norm.weight", "lm_head.weight": "lm_head.weight"}
_EARLIER = {"attention.qkv_linear.wq.weight": "attention.wq.weight", "attention.qkv_linear.wk.weight": "attention.wk.weight",
            "attention.qkv_linear.wv.weight": "attention.wv.weight", "lm_head.weight": "output.weight"}
# model type: torchtitan writes these two layouts alone (its own code), as the HF model type each becomes
MODELS = {"llama": ({**_BLOCK}, True), "qwen3": ({**_BLOCK, **_QK_NORM}, False)}  # model_type → block names, interleaved rows
_ROTARY = {"self_attn.q_proj.weight": "num_attention_heads", "self_attn.k_proj.weight": "num_key_value_heads"}


def is_titan(top_level: set[str]) -> bool:
    """Whether a DCP checkpoint's top-level keys are those of a torchtitan model's state dict."""
    return "tok_embeddings.weight" in top_level


class TitanNames:
    """torchtitan's names of one checkpoint's model and the Hugging Face names of ``config`` (its model_type)."""

    def __init__(self, config: dict[str, Any], top_level: set[str]):
        model_type = config.get("model_type")
        if model_type not in MODELS:
            raise GrowthError(f"a torchtitan checkpoint with a config.json of model_type {model_type!r}: hfgrow maps the "
                              f"names of torchtitan's dense Llama-3 and Qwen3 models (config.json: the Hugging Face config of "
                              f"the matching model, model_type llama or qwen3)")
        block, self.interleaved = MODELS[model_type]
        earlier = "output.weight" in top_level or any(k.endswith(".attention.wq.weight") for k in top_level)
        rename = _EARLIER if earlier else {}
        self.block = {hf: rename.get(t, t) for hf, t in block.items()}
        self.top = {hf: rename.get(t, t) for hf, t in _TOP.items()}
        self._hf_block = {t: hf for hf, t in self.block.items()}
        self._hf_top = {t: hf for hf, t in self.top.items()}

    def hf_name(self, name: str) -> str:
        """The Hugging Face name of the torchtitan tensor ``name``; a GrowthError for one hfgrow does not map."""
        m = re.fullmatch(r"layers\.(\d+)\.(.+)", name)
        hf = (f"model.layers.{m[1]}.{self._hf_block[m[2]]}" if m[2] in self._hf_block else None) if m else self._hf_top.get(name)
        if hf is None:
            why = ("torchtitan's grouped experts and router (MoE) are not mapped" if ".moe." in name
                   else "it is not a tensor of torchtitan's dense Llama-3 or Qwen3 model")
            raise GrowthError(f"the torchtitan checkpoint holds '{name}', which hfgrow has no Hugging Face name for: {why}")
        return hf

    def titan_name(self, hf: str) -> str:
        m = re.fullmatch(r"model\.layers\.(\d+)\.(.+)", hf)
        return f"layers.{m[1]}.{self.block[m[2]]}" if m else self.top[hf]

    def optimizer_entry(self, path: tuple) -> tuple[str, str] | None:
        """(Hugging Face name, state key) of a per-parameter optimizer entry (``optimizer`` → ``state.<name>.<key>``)."""
        if len(path) != 2 or path[0] != OPTIMIZER or not str(path[1]).startswith("state."):
            return None
        name, _, what = str(path[1])[len("state."):].rpartition(".")
        try:
            return self.hf_name(name), what
        except GrowthError:
            raise GrowthError(f"the optimizer state entry '{path[1]}' names no model tensor hfgrow maps (nested state, "
                              f"as Shampoo's, is not grown)") from None

    def _heads(self, hf: str, config: dict[str, Any]) -> int | None:
        """The heads whose rows are permuted, for Llama-3's query and key projections; None for every other tensor."""
        what = hf.rpartition("layers.")[2].partition(".")[2]
        if not self.interleaved or what not in _ROTARY:
            return None
        return int(config.get(_ROTARY[what]) or config["num_attention_heads"])

    def to_hf(self, hf: str, t: torch.Tensor, config: dict[str, Any]) -> torch.Tensor:
        """A tensor (or an optimizer moment of it) as stored by torchtitan, in transformers' layout."""
        heads = self._heads(hf, config)
        return t if heads is None else rotary_rows(t, heads, to_halves=True)

    def from_hf(self, hf: str, t: torch.Tensor, config: dict[str, Any]) -> torch.Tensor:
        """The inverse of :meth:`to_hf`, with the heads of ``config`` (the grown model's, for a grown tensor)."""
        heads = self._heads(hf, config)
        return t if heads is None else rotary_rows(t, heads, to_halves=False)
