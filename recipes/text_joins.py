"""Multimodal models joined through a text model that a recipe of their own family grows (issue 32): Fuyu (Persimmon,
no vision tower), Chameleon (the decoder is the model itself; images as VQ-VAE codes), MiniCPM-V 4.6 and MiniCPM-OCR
(a merger MLP after the vision tower's own window-attention merger), GIT (a BERT-like decoder after a kept CLIP tower)."""

import dataclasses

from hfgrow.policy import HeadDimFixed
from hfgrow.recipe import ConfigFields, Kind, Space, TensorRule, Tower, keep, linear, norm, writes
from hfgrow.recipe import Feed

from .bert import RECIPE as BERT
from .llama import LAYER, RECIPE as LLAMA
from .vlm import LLAVA
from .vlm_joins import joined, kept_layers, vision
from . import tiny
from .tiny import like

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

# MiniCPM-V 4.6 and MiniCPM-OCR: a SigLIP-like NaViT vision tower whose window-attention merger (vit_merger: attention
# and an MLP over 2 × 2 patches, at the vision width) lies inside it, kept with it; then the model's merger: 2 × 2 of those
# side by side through a LayerNorm and a layer of that width (kept), GELU, and linear_2 into the text width (Qwen3.5's
# text model), which grows as an embedding row does. No attention runs at the text width outside the text model. With
# merger_times > 1, earlier merger MLPs stay at the vision width and only the last writes the text width: 1 by default
MERGER_TIMES = ("merger_times > 1 puts MLPs at the vision width before the one into the text width, whose index the "
                "rules do not follow yet (the configurations' default is 1)")


def minicpm(name: str, classes: tuple[str, ...]):
    # the text model's prefixes as Qwen3.5's own join lists them (without "model", --layers planned no new block's
    # tensors for the ForConditionalGeneration class: verification reported them missing)
    return joined(name, classes, (Tower("text_config", ("model.language_model", "model", "language_model")), vision("vision_tower")),
                  (*kept_layers("merger.mlp.0", "pre_norm", "linear_1"), *linear("merger.mlp.0.linear_2", "text_config.hidden", None)),
                  requires={"merger_times": 1}, requires_why={"merger_times": MERGER_TIMES})


MINICPMV4_6 = minicpm("minicpmv4_6", ("MiniCPMV4_6Model", "MiniCPMV4_6ForConditionalGeneration"))
MINICPM_OCR = minicpm("minicpm_ocr", ("MiniCPMOcrModel", "MiniCPMOcrForConditionalGeneration"))

RECIPES = (FUYU, CHAMELEON, MINICPMV4_6, MINICPM_OCR)

# GIT: a BERT-like post-norm decoder (causal over the text, bidirectional over the image tokens prepended to it) that is
# the model itself; a CLIP vision tower (image_encoder, kept whole) whose features enter through visual_projection: a
# layer into the text width and a LayerNorm over it (eps: vision_config.layer_norm_eps), rows of the stream as an
# embedding's; BERT's cells: whole multiples of the hidden size, heads growth, no new block (post-norm)
VISION = "image_encoder"
KEPT_VISION = (*keep(rf"{VISION}.([\w.]+.)?\w+.bias"), *keep(rf"{VISION}.[\w.]+.(layer_norm\d|pre_layrnorm|post_layernorm).weight"),
               *keep(rf"{VISION}.[\w.]+.class_embedding"), *keep(rf"{VISION}.[\w.]+.patch_embedding.weight", 4),
               *keep(rf"{VISION}.[\w.]+.(position_embedding|fc\d|(k|v|q|out)_proj).weight", 2),
               *keep(rf"{VISION}.[\w.]+.position_ids", 2))
GIT = BERT.extend(
    name="git", model_types=("git",), classes=("GitModel", "GitForCausalLM"), prefix="git",
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=(*KEPT_VISION, *keep("img_temporal_embedding.*", 3),  # per video frame, of the vision width
          *linear("visual_projection.visual_projection.0", "hidden", None),
          *norm("visual_projection.visual_projection.1", "hidden")),
    heads=linear("output", None, "hidden"),
)
RECIPES += (GIT,)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "chameleon": Feed(coded_images=True),
    "fuyu": Feed(images="raw_patches"),
    "minicpm_ocr": Feed(images="packed_rows", patch_rows=True),
    "minicpmv4_6": Feed(images="packed_rows", patch_rows=True),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Fuyu: Persimmon with 2×2-pixel patches of 3 channels entering through one linear layer (image token 5)
TINY["fuyu"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "layer_norm_eps": 0.05, "max_position_embeddings": 64,
                                "hidden_dropout": 0.0, "attention_dropout": 0.0, "pad_token_id": 0, "bos_token_id": 1,
                                "eos_token_id": 2, "num_labels": 3, "qk_layernorm": True,
                                "rope_parameters": {"rope_type": "default", "rope_theta": 25000.0,
                                                    "partial_rotary_factor": 0.5},
                                "model_type": "persimmon"},
                "patch_size": 2, "num_channels": 3, "image_size": 8, "image_token_id": 5}
# Chameleon: Llama's sizes (head_dim = hidden / heads), its image codes 0..15 the tokens 80..95 (IMGIMG + digits as letters)
TINY["chameleon"] = like(tiny.LLAMA, "head_dim", bos_token_id=1, eos_token_id=2,
                         vocabulary_map={"<image>": 5, "IMGIMGAZ": 80, "IMGIMGBZ": 81, "IMGIMGCZ": 82, "IMGIMGDZ": 83,
                                         "IMGIMGEZ": 84, "IMGIMGFZ": 85, "IMGIMGGZ": 86, "IMGIMGHZ": 87, "IMGIMGIZ": 88,
                                         "IMGIMGJZ": 89, "IMGIMGBAZ": 90, "IMGIMGBBZ": 91, "IMGIMGBCZ": 92,
                                         "IMGIMGBDZ": 93, "IMGIMGBEZ": 94, "IMGIMGBFZ": 95},
                         vq_config={"num_embeddings": 16, "embed_dim": 4, "latent_channels": 4, "base_channels": 32,
                                    "channel_multiplier": [1, 1], "num_res_blocks": 1, "attn_resolutions": [],
                                    "resolution": 8})
TINY["minicpmv4_6"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24,
                                       "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                       "head_dim": 8, "rms_norm_eps": 0.05, "linear_num_key_heads": 2,
                                       "linear_num_value_heads": 4, "linear_key_head_dim": 4,
                                       "linear_value_head_dim": 6, "linear_conv_kernel_dim": 3,
                                       "moe_intermediate_size": 12,
                                       "layer_types": ["linear_attention", "full_attention"], "pad_token_id": 0,
                                       "num_labels": 3, "tie_word_embeddings": False, "model_type": "qwen3_5_text"},
                       "insert_layer_id": 0, "vision_config": tiny.MINICPM_VISION, "image_token_id": 5,
                       "video_token_id": 6}
TINY["minicpm_ocr"] = TINY["minicpmv4_6"]
# GIT: a BERT-like decoder after a CLIP tower's patches (2 × 2 of 4-pixel patches and the class token: 5 image tokens)
TINY["git"] = like(tiny.TEXT, num_attention_heads=4, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                   vision_config=tiny.VISION)
