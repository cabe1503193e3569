"""Vision-language models whose image features reach the text through learned queries (issue 32): a Q-Former or a
resampler between the vision tower and the text model. The text model grows by its own recipe; the vision tower and the
resampler's layers of their own width are kept; the layer that writes the text width grows on its output axis, as an
embedding row does.

* InstructBLIP-Video: InstructBLIP's Q-Former and language_projection, run over each frame of a video (its features
  num_query_tokens a frame, in place of the video placeholder tokens).
* Aria: its projector's learned queries (as many as projector_patch_to_query_dict gives the image's patches) attend to
  the vision features by cross-attention at the vision width (LayerNorms, q/k/v, torch's MultiheadAttention, a linear
  layer: all kept with the tower), then a LayerNorm over the vision width and an FFN whose hidden layer (GELU) and output
  are of the text width: LLaVA's two layers without biases.
* Idefics2: a SwiGLU modality projection from the vision width into the text width (its hidden layer the text model's
  intermediate_size: the text FFN's space), then a perceiver resampler at the text width (perceiver_config.hidden_size,
  a twin): learned latents (embedding rows), pre-RMSNorm layers whose attention has heads of its own (resampler_n_heads
  × resampler_head_dim, kept: q/k/v read the stream, o_proj writes it) and an MLP of 4 · hidden (``hidden*4``), a
  final RMSNorm. Blocks over the text stream, as FunASR-Nano's adaptor; RMSNorms over copies counted unevenly would
  change (whole multiples only), and their eps is perceiver_config's own (the copy convention only).
* Granite 4 Vision: LLaVA-NeXT's tiles and image_newline; window Q-Formers at the vision width (qformer_config, a tower
  kept whole, under layerwise_projectors and spatial_projectors: their LayerNorms, queries and positions too), each
  ending in out_linear into the text width; their features are added to the hidden states of text blocks at the image
  positions (deepstack_layer_map, spatial_target_layers), a sum in the stream. Those name text blocks by number in the
  whole config, which new blocks would renumber: no --layers.
"""

import dataclasses

from hfgrow.policy import NoNewBlocks, SharedEps, VisionTowerKept, WholeMultiplesOnly
from hfgrow.recipe import Kind, Space, TensorRule, Tower, keep, linear, norm, writes
from hfgrow.recipe import Feed

from .vlm import FIELDS, IDEFICS3
from .vlm_joins import INSTRUCTBLIP, joined, text, vision
from . import tiny
from .tiny import like

INSTRUCTBLIPVIDEO = dataclasses.replace(INSTRUCTBLIP, name="instructblipvideo", model_types=("instructblipvideo",),
                                        classes=("InstructBlipVideoForConditionalGeneration",))  # the Model: no output to compare


ARIA_P = "multi_modal_projector"
ARIA_KEPT = (*keep(f"{ARIA_P}.query", 2), *keep(f"{ARIA_P}.(layer_norm|cross_attn.layer_norm|cross_attn.layer_norm_kv).(weight|bias)"),
             *keep(f"{ARIA_P}.cross_attn.((q|k|v)_proj.weight|linear.weight|multihead_attn.in_proj_weight|multihead_attn.out_proj.weight)", 2),
             *keep(f"{ARIA_P}.cross_attn.(linear.bias|multihead_attn.in_proj_bias|multihead_attn.out_proj.bias)"))
ARIA_VISION = VisionTowerKept("Aria's projector attends to the vision features at the vision width (its queries, LayerNorms "
                              "and cross-attention, kept: no rules grow them with the tower)")
ARIA = joined("aria", ("AriaModel", "AriaForConditionalGeneration"), (text(True, ARIA_VISION), vision("vision_tower")),
              (*ARIA_KEPT, *linear(f"{ARIA_P}.feed_forward.linear_in", "text_config.projected", "vision_config.hidden", bias=False),
               *linear(f"{ARIA_P}.feed_forward.linear_out", "text_config.hidden", "text_config.projected", bias=False)))


IDEFICS2_NORM = WholeMultiplesOnly("Idefics2's perceiver resampler normalises over the text width (RMSNorms), which copies "
                                   "counted unevenly would change")
IDEFICS2_EPS = SharedEps("Idefics2's perceiver RMSNorms over the text width (eps: perceiver_config.rms_norm_eps)")
PERCEIVER_MLP = {"perceiver_ffn": Space("hidden*4", Kind.ACTIVATION)}


def swiglu_mlp(p: str, inner: str, in_: str | None) -> tuple[TensorRule, ...]:
    """An MLP down(act(gate(x)) · up(x)) without biases into the text width, its hidden layer ``inner``."""
    return (*linear(f"{p}.gate_proj", inner, in_, bias=False), *linear(f"{p}.up_proj", inner, in_, bias=False),
            *linear(f"{p}.down_proj", "text_config.hidden", inner, bias=False))


def perceiver(p: str) -> tuple[TensorRule, ...]:
    """Idefics2's perceiver resampler (``p``): blocks over the text stream, attention of its own heads."""
    t, layer = "text_config", f"{p}.layers.*"
    return (TensorRule(f"{p}.latents", (None, writes(f"{t}.hidden"))), *norm(f"{p}.norm", f"{t}.hidden", bias=False),
            *(rule for n in ("input_latents_norm", "input_context_norm", "post_attention_layernorm")
              for rule in norm(f"{layer}.{n}", f"{t}.hidden", bias=False)),
            *(rule for x in "qkv" for rule in linear(f"{layer}.self_attn.{x}_proj", None, f"{t}.hidden", bias=False)),
            *linear(f"{layer}.self_attn.o_proj", f"{t}.hidden", None, bias=False),
            *swiglu_mlp(f"{layer}.mlp", f"{t}.perceiver_ffn", f"{t}.hidden"))


IDEFICS2 = dataclasses.replace(
    IDEFICS3, name="idefics2", model_types=("idefics2",), classes=("Idefics2Model", "Idefics2ForConditionalGeneration"),
    towers=(Tower("text_config", ("model.text_model", "text_model"), spaces=PERCEIVER_MLP, constraints=(IDEFICS2_NORM, IDEFICS2_EPS)),
            Tower("vision_config", ("model.vision_model", "vision_model"), kept=True)),
    body=(*swiglu_mlp("connector.modality_projection", "text_config.ffn", None), *perceiver("connector.perceiver_resampler")),
    config=dataclasses.replace(FIELDS, twins={"perceiver_config.hidden_size": "text_config.hidden_size"}))

GRANITE4_DEPTH = NoNewBlocks("Granite 4 Vision adds its Q-Formers' features at text blocks named by number in the whole "
                             "config (deepstack_layer_map, spatial_target_layers), which new blocks would renumber")
WINDOW_QFORMERS = tuple(f"{m}{p}" for p in ("layerwise_projectors", "spatial_projectors") for m in ("", "model."))
GRANITE4_VISION = joined(
    "granite4_vision", ("Granite4VisionModel", "Granite4VisionForConditionalGeneration"),
    (text(False, GRANITE4_DEPTH), vision("vision_tower"), Tower("qformer_config", WINDOW_QFORMERS, kept=True)),
    (TensorRule("image_newline", (writes("text_config.hidden"),)),
     *linear("(layerwise_projectors|spatial_projectors).*.out_linear", "text_config.hidden", None)))

RECIPES = (INSTRUCTBLIPVIDEO, ARIA, IDEFICS2, GRANITE4_VISION)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "aria": Feed(images="patch_queries"),
    "granite4_vision": Feed(images="windowed_tiles"),
    "idefics2": Feed(images="perceived_latents"),
    "instructblipvideo": Feed(images="instructed_video", video_only=True),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# InstructBLIP-Video: InstructBLIP's, its features in place of video token 5
TINY["instructblipvideo"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "ffn_dim": 24, "num_hidden_layers": 2,
                                             "num_attention_heads": 2, "word_embed_proj_dim": 16,
                                             "max_position_embeddings": 32, "dropout": 0.0, "attention_dropout": 0.0,
                                             "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0, "num_labels": 3,
                                             "model_type": "opt"},
                             "vision_config": like(tiny.VISION, "num_channels"), "qformer_config": tiny.QFORMER,
                             "num_query_tokens": 3, "video_token_index": 5}
# Aria: Idefics3's tower (8×8 images of 4×4 patches), its projector's 3 learned queries for 4 patches; Aria's text model
TINY["aria"] = {"text_config": like(tiny.LLAMA, intermediate_size=10, moe_num_experts=3, moe_topk=2,
                                    moe_num_shared_experts=2, model_type="aria_text"),
                "vision_config": like(tiny.VISION, model_type="idefics3_vision"),
                "projector_patch_to_query_dict": {4: 3}, "image_token_index": 5}
# Idefics2: its tower (8×8 images of 4×4 patches), a perceiver of 2 layers and 3 latents at the text width (2 heads of 6, 1 KV head)
TINY["idefics2"] = {"text_config": like(tiny.LLAMA, model_type="mistral"), "vision_config": tiny.VISION,
                    "image_token_id": 5,
                    "perceiver_config": {"hidden_size": 16, "rms_norm_eps": 0.05, "resampler_n_latents": 3,
                                         "resampler_depth": 2, "resampler_n_heads": 2, "resampler_head_dim": 6,
                                         "num_key_value_heads": 1}}
# Granite 4 Vision: a CLIP tower of 64 (the Q-Formers' heads are hidden / 64), 8×8 images of 4×4 patches in 1×2 tiles, window
# Q-Formers of 1 query a 2×2 window: one after vision layer -2 into text block 0, four spatial ones into blocks 1-4
TINY["granite4_vision"] = {"text_config": like(tiny.LLAMA, num_hidden_layers=5, embedding_multiplier=2.5,
                                               residual_multiplier=0.7, logits_scaling=3.0, attention_multiplier=0.3,
                                               model_type="granite4_vision_text"),
                           "image_token_index": 5,
                           "vision_config": like(tiny.VISION, hidden_size=64, model_type="clip_vision_model"),
                           "qformer_config": like(tiny.QFORMER, num_hidden_layers=1, model_type="blip_2_qformer"),
                           "image_grid_pinpoints": [[8, 16], [16, 8]], "downsample_rate": "1/2",
                           "deepstack_layer_map": [[-2, 0]], "spatial_target_layers": [1, 2, 3, 4],
                           "projector_dropout": 0.0}
