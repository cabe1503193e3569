"""Vision-language models: a vision tower, a projector, and a language model that reads the projected image features in
place of the embeddings of its image placeholder tokens.

The language model grows by its own recipe (the sub-config's model type: Llama, Qwen2-VL's text model, Gemma 3's, ...),
its keys under the model's prefixes (``Tower``); the vision tower is kept as it is, or grown by ``--vision-tower grow``
(by --factor, in width and heads: the model reads its blocks' hidden states by index). The projector is what joins them: its output
rows write into the text model's residual stream as an embedding row does (copies under the algebra's scaling, or zeros),
its input columns read the vision tower's output (kept, unless the vision tower grows). The image features are then the
small model's, grown as its embeddings are, and the whole model computes the small one's function.

* LLaVA: a two-layer MLP (linear_1 → GELU → linear_2, its hidden layer of the text width) over a block's hidden states
  of the vision tower (``vision_feature_layer``: its residual stream); LLaVA-NeXT adds ``image_newline``.
* Qwen2-VL, Qwen2.5-VL: the vision tower's merger ends in a linear layer into the text width (``mlp.2``); the rest of
  the merger is the vision tower's; its output size (``vision_config.hidden_size`` / ``out_hidden_size``) follows the
  text hidden size.
* Gemma 3: the vision tower's final LayerNorm output, average-pooled to mm_tokens_per_image tokens, through an RMSNorm
  (1 + w) over the vision width, then a matrix [vision, text] (input × weight).
* Llama 4: the vision encoder ends in its own adapter (pixel shuffle, an MLP into projector_output_dim, kept when the
  encoder grows); one linear layer without bias (``multi_modal_projector.linear_1``) projects that into the text width.
* Idefics3, SmolVLM: the connector's pixel shuffle puts scale_factor² vision tokens side by side (``Repeated``), and one
  linear layer projects them into the text width.
"""

import dataclasses

from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Repeated, Space, TensorRule, Tower, block_spaces, linear, norm, reads, writes
from hfgrow.recipe import Feed

from . import llama4_vision, mixtral, siglip
from . import tiny
from .tiny import like

# the sizes a coverage row and the growth's notes read: the text model's (text_config)
FIELDS = ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                      head_dim="head_dim", eps=("rms_norm_eps",))
# the outputs: the text model's hidden states, and the projected image features, which replace embedding rows
OUTPUTS = {"hidden_states": "text_config.hidden", "last_hidden_state": "text_config.final",
           "image_hidden_states": "text_config.hidden"}
LM_HEAD = linear("(language_model.lm_head|lm_head)", None, "text_config.final", bias=False)
# the text model under the legacy layout that transformers saves (language_model.model) and the one it loads into
LANGUAGE_MODEL = ("language_model.model", "model.language_model", "language_model")

LLAVA = Recipe(
    name="llava", model_types=("llava",), classes=("LlavaModel", "LlavaForConditionalGeneration"), prefix=("model",),
    config=FIELDS, spaces={}, outputs=OUTPUTS,
    towers=(Tower("text_config", LANGUAGE_MODEL, spaces={"projected": Space("hidden", Kind.ACTIVATION)}),  # feeds the GELU
            Tower("vision_config", ("vision_tower", "model.vision_tower"), kept=True)),
    body=(*linear("multi_modal_projector.linear_1", "text_config.projected", "vision_config.hidden"),
          *linear("multi_modal_projector.linear_2", "text_config.hidden", "text_config.projected")),
    heads=LM_HEAD,
)
# LLaVA-NeXT: LLaVA's projector, and a learned image_newline vector in the text width after each row of tiles' features,
# grown as an embedding row
LLAVA_NEXT = LLAVA.extend(
    name="llava_next", model_types=("llava_next",), classes=("LlavaNextModel", "LlavaNextForConditionalGeneration"),
    body=(TensorRule("image_newline", (writes("text_config.hidden"),)),),
)

# Qwen2-VL's vision tower: pre-LayerNorm blocks (eps 1e-6, fixed in code) of q|k|v packed in one linear layer under 2-D
# rotary positions (its heads grow, head_dim stays), a Conv3d patch embedding, then the merger: a LayerNorm, the
# spatial_merge_size² = 4 neighbouring patches side by side (4 blocks of the vision width), a linear layer over them (its
# output, 4 blocks too), GELU, and the last layer into the text width (the model's own rule)
QV = "blocks.*"
MERGE = 4  # spatial_merge_size²: every released Qwen2-VL and Qwen2.5-VL merges 2 × 2 patches
QKV = Packed((writes("q"), writes("k"), writes("v")))


def qwen_vision(mlp: tuple[TensorRule, ...], bias: bool) -> tuple[TensorRule, ...]:
    return (
        TensorRule("patch_embed.proj.weight", (writes("hidden"), None, None, None, None)),
        *norm(f"{QV}.norm1", "hidden", bias=bias), *norm(f"{QV}.norm2", "hidden", bias=bias),
        TensorRule(f"{QV}.attn.qkv.weight", (QKV, reads("hidden"))), TensorRule(f"{QV}.attn.qkv.bias", (QKV,)),
        *linear(f"{QV}.attn.proj", "hidden", "o"), *mlp,
        *norm("merger.ln_q", "final", input="hidden", bias=bias),
        TensorRule("merger.mlp.0.weight", (Packed((writes("merged"),) * MERGE), Packed((reads("final"),) * MERGE))),
        TensorRule("merger.mlp.0.bias", (Packed((writes("merged"),) * MERGE),)),
    )


QWEN2_VISION = Recipe(
    name="qwen2_vl_vision", model_types=("qwen2_vl_vision",), classes=("Qwen2VisionTransformerPretrainedModel",),
    config=ConfigFields(hidden="embed_dim", ffn="intermediate_size", ffn_default=4, heads="num_heads", eps=()),
    requires={"mlp_ratio": 4, "spatial_merge_size": 2}, stacks=((("blocks", "depth", None)),),
    spaces={**block_spaces(), "final": Space("hidden", Kind.ACTIVATION), "merged": Space("hidden", Kind.ACTIVATION)},
    body=qwen_vision((*linear(f"{QV}.mlp.fc1", "ffn", "hidden"), *linear(f"{QV}.mlp.fc2", "hidden", "ffn")), bias=True),
)
QWEN2_5_VISION = QWEN2_VISION.extend(
    name="qwen2_5_vl_vision", model_types=("qwen2_5_vl_vision",), classes=("Qwen2_5_VisionTransformerPretrainedModel",),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_heads", eps=()), requires={"spatial_merge_size": 2},
    norm="rms", body=qwen_vision((*linear(f"{QV}.mlp.gate_proj", "ffn", "hidden"), *linear(f"{QV}.mlp.up_proj", "ffn", "hidden"),
                                  *linear(f"{QV}.mlp.down_proj", "hidden", "ffn")), bias=False),
)
QWEN2_VL = Recipe(
    name="qwen2_vl", model_types=("qwen2_vl",), classes=("Qwen2VLModel", "Qwen2VLForConditionalGeneration"), prefix=("model",),
    config=dataclasses.replace(FIELDS, twins={"vision_config.hidden_size": "text_config.hidden_size"}), spaces={}, outputs=OUTPUTS,
    towers=(Tower("text_config", ("model.language_model", "model", "language_model")),
            Tower("vision_config", ("model.visual", "visual"), recipe=QWEN2_VISION, kept=True)),
    body=(TensorRule("visual.merger.mlp.2.weight", (writes("text_config.hidden"), Packed((reads("vision_config.merged"),) * MERGE))),
          TensorRule("visual.merger.mlp.2.bias", (writes("text_config.hidden"),))),
    heads=linear("lm_head", None, "text_config.final", bias=False),
)
QWEN2_5_VL = QWEN2_VL.extend(
    name="qwen2_5_vl", model_types=("qwen2_5_vl",), classes=("Qwen2_5_VLModel", "Qwen2_5_VLForConditionalGeneration"),
    config=dataclasses.replace(FIELDS, twins={"vision_config.out_hidden_size": "text_config.hidden_size"}),
    towers=(QWEN2_VL.towers[0], Tower("vision_config", ("model.visual", "visual"), recipe=QWEN2_5_VISION, kept=True)),
)

# the projector reads the vision tower's final LayerNorm output (average-pooled), normalises it over the vision width and
# multiplies it by a [vision, text] matrix; the sequence classifier scores the text model's last token
GEMMA3 = Recipe(
    name="gemma3", model_types=("gemma3",), classes=("Gemma3Model", "Gemma3ForConditionalGeneration", "Gemma3ForSequenceClassification"),
    prefix=("model",), config=FIELDS, spaces={}, outputs=OUTPUTS,
    towers=(Tower("text_config", LANGUAGE_MODEL), Tower("vision_config", ("vision_tower", "model.vision_tower"), kept=True)),
    body=(TensorRule("multi_modal_projector.mm_input_projection_weight", (reads("vision_config.final"), writes("text_config.hidden"))),
          *norm("multi_modal_projector.mm_soft_emb_norm", "vision_config.final", bias=False, offset=1.0)),
    heads=(*LM_HEAD, *linear("score", None, "text_config.final", bias=False)),
)

# their vision encoders alone: SigLIP's vision tower without its pooling head, keys at the top
IDEFICS3_VISION = siglip.VISION.extend(name="idefics3_vision", model_types=("idefics3_vision",), classes=("Idefics3VisionTransformer",),
                                       prefix=(), outputs={**siglip.VISION.outputs, "pooler_output": None})
SMOLVLM_VISION = IDEFICS3_VISION.extend(name="smolvlm_vision", model_types=("smolvlm_vision",), classes=("SmolVLMVisionTransformer",))
# the connector's one linear layer reads scale_factor² tokens of the vision tower's final norm side by side (its pixel
# shuffle) and writes into the text width; the text model under text_model
IDEFICS3 = Recipe(
    name="idefics3", model_types=("idefics3",), classes=("Idefics3Model", "Idefics3ForConditionalGeneration"), prefix=("model",),
    config=FIELDS, spaces={}, outputs=OUTPUTS,
    towers=(Tower("text_config", ("model.text_model", "text_model")),
            Tower("vision_config", ("model.vision_model", "vision_model"), recipe=IDEFICS3_VISION, kept=True)),
    body=(TensorRule("connector.modality_projection.proj.weight", (writes("text_config.hidden"), Repeated(reads("vision_config.final")))),),
    heads=linear("lm_head", None, "text_config.final", bias=False),
)
SMOLVLM = IDEFICS3.extend(
    name="smolvlm", model_types=("smolvlm",), classes=("SmolVLMModel", "SmolVLMForConditionalGeneration"),
    towers=(IDEFICS3.towers[0], Tower("vision_config", ("model.vision_model", "vision_model"), recipe=SMOLVLM_VISION, kept=True)),
)

# Llama 4: the vision encoder's adapter ends in vision_output_dim channels, which its recipe keeps (whether the encoder
# grows or not); one linear layer without bias writes them into the text width. The text model is Llama 4's (interleaved
# rotary, dense and sparse blocks: its FFN is intermediate_size_mlp, its experts' intermediate_size), under
# language_model.model, its head language_model.lm_head
LLAMA4 = Recipe(
    name="llama4", model_types=("llama4",), classes=("Llama4ForConditionalGeneration",), prefix=(),
    config=mixtral.LLAMA4_TEXT.config, spaces={}, outputs={**OUTPUTS, "image_hidden_states": None},
    towers=(Tower("text_config", ("language_model.model", "model.language_model", "language_model")),
            Tower("vision_config", ("vision_model", "model.vision_model"), recipe=llama4_vision.RECIPE, kept=True)),
    body=(*linear("multi_modal_projector.linear_1", "text_config.hidden", None, bias=False),),
    heads=LM_HEAD,
)


# the recipes hfgrow.recipes registers: all of this module's but the Qwen2-VL and Qwen2.5-VL vision towers, planned only
# through their vision-language models (QWEN2_VL's and QWEN2_5_VL's towers)
FAMILY = (LLAVA, LLAVA_NEXT, QWEN2_VL, QWEN2_5_VL, GEMMA3, IDEFICS3, SMOLVLM, IDEFICS3_VISION, SMOLVLM_VISION, LLAMA4)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "gemma3": Feed(images="soft_tokens", type_ids="token_type_ids"),
    "idefics3": Feed(images="pixel_shuffle"),
    "llama4": Feed(images="shuffled_tile"),
    "llava": Feed(images="patch_features"),
    "llava_next": Feed(images="tiles"),
    "qwen2_5_vl": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "qwen2_vl": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "smolvlm": Feed(images="pixel_shuffle"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# vision-language models: the tiny vision towers (8×8 images of 4×4 patches) and text models, image token ids in the vocabulary
TINY["llava"] = {"text_config": like(tiny.LLAMA, model_type="llama"),
                 "vision_config": like(tiny.VISION, model_type="clip_vision_model"), "image_token_index": 5,
                 "vision_feature_layer": -2}
# a whole image and its 1×2 tiles
TINY["llava_next"] = like(TINY["llava"], image_grid_pinpoints=[[8, 16], [16, 8]])
TINY["qwen2_vl"] = like(tiny.QWEN_IDS, text_config=like(tiny.LLAMA, rope_parameters=tiny.MROPE, bos_token_id=1,
                                                        eos_token_id=2),
                        vision_config=tiny.QWEN_VISION)
# Gemma 3: a SigLIP tower of 2×2 patches, each its own soft token (mm_tokens_per_image), between boi and eoi
TINY["gemma3"] = {"text_config": like(tiny.GEMMA, query_pre_attn_scalar=6, attn_logit_softcapping=2.0,
                                      final_logit_softcapping=10.0, sliding_window=4,
                                      layer_types=["sliding_attention", "full_attention"]),
                  "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "mm_tokens_per_image": 4,
                  "boi_token_index": 7, "eoi_token_index": 8, "image_token_index": 5, "num_labels": 3}
# Idefics3, SmolVLM: 16×16 images of 4×4 patches, pixel-shuffled 2×2 into 4 image tokens
TINY["idefics3"] = {"text_config": like(tiny.LLAMA, model_type="llama"),
                    "vision_config": like(tiny.VISION, image_size=16), "image_token_id": 5, "scale_factor": 2}
# Idefics3, SmolVLM: 16×16 images of 4×4 patches, pixel-shuffled 2×2 into 4 image tokens
TINY["smolvlm"] = TINY["idefics3"]
TINY["idefics3_vision"] = tiny.VISION
TINY["smolvlm_vision"] = TINY["idefics3_vision"]
# Llama 4: its text model, its vision encoder on 16×16 images (16 patches, pixel-shuffled 2×2 into 4 image tokens)
TINY["llama4"] = {"text_config": like(tiny.MIXTRAL, intermediate_size=12, intermediate_size_mlp=24,
                                      interleave_moe_layer_step=2, no_rope_layers=[1, 0], attention_chunk_size=4,
                                      floor_scale=2, attn_scale=0.5, bos_token_id=1, eos_token_id=2,
                                      model_type="llama4_text"),
                  "vision_config": {"hidden_size": 16, "intermediate_size": 64, "num_hidden_layers": 2,
                                    "num_attention_heads": 2, "image_size": 16, "patch_size": 4, "num_channels": 3,
                                    "projector_input_dim": 12, "projector_output_dim": 12, "vision_output_dim": 12,
                                    "model_type": "llama4_vision_model"},
                  "image_token_index": 5, "boi_token_index": 7, "eoi_token_index": 8}
TINY["qwen2_5_vl"] = like(TINY["qwen2_vl"], vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps",
                                                               window_size=8, fullatt_block_indexes=[1]))
