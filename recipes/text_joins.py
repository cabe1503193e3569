"""Multimodal models joined through a text model that a recipe of their own family grows (issue 32): Fuyu (Persimmon,
no vision tower) and Chameleon (the decoder is the model itself; images as VQ-VAE codes)."""

import dataclasses

from hfgrow.policy import HeadDimFixed
from hfgrow.recipe import ConfigFields, Kind, Space, TensorRule, Tower, keep, linear, writes

from .llama import LAYER, RECIPE as LLAMA
from .vlm import LLAVA

# Fuyu: no vision tower; image patches (patch_size² × num_channels values each) enter the Persimmon text model through one
# linear layer into the text width (vision_embed_tokens), in place of the image placeholder tokens' embeddings: its rows
# write into the stream as an embedding row does, its columns read the pixels (kept)
FUYU = dataclasses.replace(
    LLAVA, name="fuyu", model_types=("fuyu",), classes=("FuyuModel", "FuyuForCausalLM"),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    towers=(Tower("text_config", ("model.language_model", "language_model")),),
    body=linear("vision_embed_tokens", "text_config.hidden", None),
)


# Chameleon: Llama's blocks (head_dim = hidden / heads) with a LayerNorm over each head's dims on queries and keys after
# their projections, before the rotation: statistics per head (eps 1e-5 fixed in code), then a weight and bias of each
# head's own ([heads, head_dim]: the model-parallel shards' weights side by side), copied with their heads. swin_norm
# (Chameleon 30B) normalises each branch's output before the sum instead of its input: the same norms, the same rules.
# Images enter as codes of a VQ-VAE (vqmodel, kept whole: it never reads or writes the text width), mapped to token ids.
# (the patterns' ``*`` is a block number: ``{0,}`` here)
KEPT_VQ = (*keep(r"vqmodel.([\w.]+.)?\w+.bias"), *keep(r"vqmodel.[\w.]+.norm\w{0,}.weight"), *keep("vqmodel.quantize.embedding.weight", 2),
           *keep(r"vqmodel.([\w.]+.)?(\w{0,}conv\w{0,}|q|k|v|proj_out|nin_shortcut).weight", 4))
HEAD_NORMS = HeadDimFixed("q_norm and k_norm: LayerNorms over each head's dims on queries and keys, whose mean the zero "
                          "slots of a longer head would move")
CHAMELEON = LLAMA.extend(
    name="chameleon", model_types=("chameleon",), classes=("ChameleonModel", "ChameleonForConditionalGeneration"), prefix=("model",),
    config=dataclasses.replace(LLAMA.config, head_dim=None),
    spaces={**LLAMA.spaces, "per_head": Space("heads", Kind.ACTIVATION), "kv_per_head": Space("kv_heads", Kind.ACTIVATION)},
    constraints=(HEAD_NORMS, *LLAMA.constraints),
    body=(TensorRule(f"{LAYER}.self_attn.q_norm.(weight|bias)", (writes("per_head"), None)),
          TensorRule(f"{LAYER}.self_attn.k_norm.(weight|bias)", (writes("kv_per_head"), None)), *KEPT_VQ),
)

RECIPES = (FUYU, CHAMELEON)
