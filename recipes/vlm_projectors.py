"""Vision-language models joined as recipes/vlm_joins.py joins LLaVA, each its projector's rules (issue 32): the text
model grows by its own recipe, the vision tower is kept, and the projector's output rows write into the text width as an
embedding row does; what reads the kept vision width is kept with it.

* LFM2-VL: 2 × 2 SigLIP 2 (NaFlex) patches side by side (downsample_factor²), a LayerNorm over them, a layer of the
  projector's own width (projector_hidden_size, kept), GELU, a layer into the text width.
* LFM3-VL: a LayerNorm over each of the vision tower's patches, spatial_merge_size² of them side by side, then LFM2-VL's
  two layers.
* VideoLLaMA 3: LLaVA's two layers (its hidden layer of the text width), named projector.readout.0 / readout.2.
* Ovis 2: the vision tower ends in its visual head (a layer into a visual vocabulary, a LayerNorm, a softmax: kept with
  it), whose probabilities weigh the rows of visual_embeddings_table, [visual vocabulary, text width]: its columns write
  the text width as an embedding's do (the whole config's hidden_size, a twin of the text model's).
"""

import dataclasses

from hfgrow.recipe import Repeated, TensorRule, linear, norm, reads, writes
from hfgrow.recipe import Feed

from .vlm import FIELDS
from .vlm_joins import joined, shuffled_norm, text, two_layers, vision
from . import tiny
from .tiny import like


def own_width(first: str, second: str) -> tuple[TensorRule, ...]:
    """A layer of the projector's own width (kept) over several vision features side by side, then one into the text
    width."""
    return (TensorRule(f"{first}.weight", (None, Repeated(reads("vision_config.hidden")))), TensorRule(f"{first}.bias", (None,)),
            *linear(second, "text_config.hidden", None))


PROJECTOR = "multi_modal_projector"
LFM2_VL = joined("lfm2_vl", ("Lfm2VlModel", "Lfm2VlForConditionalGeneration"), (text(False), vision("vision_tower")),
                 (*shuffled_norm(f"{PROJECTOR}.layer_norm"), *own_width(f"{PROJECTOR}.linear_1", f"{PROJECTOR}.linear_2")))
LFM3_VL = joined("lfm3_vl", ("Lfm3VlModel", "Lfm3VlForConditionalGeneration"), (text(False), vision("vision_tower")),
                 (*norm(f"{PROJECTOR}.layer_norm", "vision_config.hidden"), *own_width(f"{PROJECTOR}.linear_1", f"{PROJECTOR}.linear_2")))
VIDEO_LLAMA_3 = joined("video_llama_3", ("VideoLlama3Model", "VideoLlama3ForConditionalGeneration"), (text(), vision("vision_model")),
                       two_layers("projector.readout.0", "projector.readout.2"))
OVIS2 = joined("ovis2", ("Ovis2Model", "Ovis2ForConditionalGeneration"), (text(False), vision("vision_tower")),
               (TensorRule("visual_embeddings_table.weight", (None, writes("text_config.hidden"))),),
               config=dataclasses.replace(FIELDS, twins={"hidden_size": "text_config.hidden_size"}))

RECIPES = (LFM2_VL, LFM3_VL, VIDEO_LLAMA_3, OVIS2)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "lfm2_vl": Feed(images="naflex"),
    "lfm3_vl": Feed(images="patch_rows", patch_rows=True),
    "ovis2": Feed(images="strided"),
    "video_llama_3": Feed(images="merged_rows", patch_rows=True),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# LFM2-VL: a SigLIP 2 (NaFlex) tower over 4 × 4 patches (a 4 × 4 position table), 2 × 2 of them a token
TINY["lfm2_vl"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                   "num_attention_heads": 4, "num_key_value_heads": 2, "norm_eps": 0.05,
                                   "conv_bias": True, "conv_L_cache": 3, "block_auto_adjust_ff_dim": False,
                                   "layer_types": ["conv", "full_attention"], "pad_token_id": 0, "bos_token_id": 1,
                                   "eos_token_id": 2, "model_type": "lfm2"},
                   "image_token_id": 5, "downsample_factor": 2, "projector_hidden_size": 20,
                   "vision_config": like(tiny.VISION, "image_size", num_patches=16, model_type="siglip2_vision_model")}
# LFM3-VL: its own tower (a convolution block, an attention block of one KV head) over Qwen2-VL's patch rows, merged 2 × 2
TINY["lfm3_vl"] = like(tiny.QWEN_IDS, text_config={"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24,
                                                   "num_hidden_layers": 3, "num_attention_heads": 4,
                                                   "num_key_value_heads": 2, "norm_eps": 0.05, "conv_bias": True,
                                                   "conv_L_cache": 3,
                                                   "layer_types": ["conv", "sliding_attention", "full_attention"],
                                                   "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
                                                   "sliding_window": 4, "head_dim": 4, "model_type": "lfm3"},
                       projector_hidden_size=20,
                       vision_config={"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                      "num_attention_heads": 2, "in_channels": 3, "patch_size": 4,
                                      "spatial_merge_size": 2, "temporal_patch_size": 2, "num_key_value_heads": 1,
                                      "layer_types": ["conv", "full_attention"], "norm_eps": 0.05})
# VideoLLaMA 3: a SigLIP-like tower over patch rows (merged 2 × 2 by its image_merge_sizes input)
TINY["video_llama_3"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "image_token_id": 5, "video_token_id": 6,
                         "vision_config": like(tiny.VISION, "image_size")}
# Ovis 2: 16 × 16 images of 4 × 4 patches strided 2 × 2 into 4 tokens, a visual vocabulary of 12 (5 indicator tokens)
TINY["ovis2"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "image_token_id": 5,
                 "visual_indicator_token_ids": [10, 11, 12, 13, 14], "vocab_size": 97, "hidden_size": 16,
                 "vision_config": {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                   "num_attention_heads": 2, "image_size": 16, "patch_size": 4, "rms_norm_eps": 0.05,
                                   "vocab_size": 12, "hidden_stride": 2, "num_visual_indicator_tokens": 5}}
