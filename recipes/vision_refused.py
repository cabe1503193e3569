"""The vision model types of the coverage sweep that hfgrow refuses, each with what blocks it (listed in REFUSED).

Most are hierarchical: stages of widths of their own (a list such as ``hidden_sizes``, or ``embed_dim`` doubled per
stage) with a head count per stage. The vocabulary for them exists (``recipe.Stages``, docs/design.md §Stages: Swin,
ConvNeXt, ResNet, PVT and SegFormer grow with it); what is not done is each remaining family's own layers, named in its
message. Those that have an obstacle of their own say so.
"""

from . import tiny
from .tiny import like


def stages(widths: str, extra: str = "") -> str:
    return (f"hierarchical stages of widths of their own ({widths}){extra}: not done yet (per-stage widths are declared "
            f"with recipe.Stages, docs/design.md §Stages, but these layers have no rules)")


REFUSED = {
    "dinat": stages("embed_dim·2^i, num_heads per stage", "; neighbourhood attention runs in natten's kernels"),
    "hiera": stages("embed_dim·2^i, num_heads per stage", "; mask-unit attention and query pooling between stages"),
    "focalnet": stages("embed_dim·2^i", "; focal modulation gates per level, layer scale"),
    "bit": "BiT's weight-standardised convolutions normalise each filter over its inputs, so the reader's 1/k cannot sit "
           "in the filter: it would have to ride on the activation before it (a ReLU is positively homogeneous, the "
           "GroupNorm's γ and β could carry it), which no recipe space declares yet; and its stages have widths of their "
           "own (hidden_sizes)",
    "hgnet_v2": stages("stem_channels, stage_in/mid/out_channels", "; learnable affine blocks and light convolutions"),
    "textnet": stages("stem and hidden_sizes", "; convolutions with batch norms fused per branch"),
    "pp_lcnet": stages("channels derived from a scale by make_divisible", "; squeeze-excitation and depthwise convolutions"),
    "swiftformer": stages("embed_dims", "; efficient additive attention with a learned query weight vector, batch norms"),
    "cvt": stages("embed_dim, num_heads per stage", "; convolutional q/k/v projections (a depthwise convolution and a "
                  "batch norm each) and convolutional token embeddings"),
    "levit": stages("hidden_sizes, num_attention_heads, key_dim per stage", "; linear layers followed by batch norms, "
                    "per-head attention biases, attention-downsampling blocks"),
    "mobilevit": stages("hidden_sizes, neck_hidden_sizes", "; MobileNet blocks around transformer blocks that unfold and "
                        "fold patches"),
    "mobilevitv2": stages("channels derived from width_multiplier by make_divisible", "; separable linear attention"),
    "mobilenet_v1": stages("channels derived from depth_multiplier, rounded to multiples of 8 with a min_depth",
                           "; depthwise convolutions and batch norms"),
    "mobilenet_v2": stages("channels derived from depth_multiplier, rounded to multiples of 8 with a min_depth",
                           "; inverted residual blocks of expand_ratio"),
    "efficientnet": stages("channels derived from width_coefficient by round_filters",
                           "; squeeze-excitation and depthwise convolutions per block"),
    "align": "ALIGN's vision tower is an EfficientNet: " + stages("channels derived from width_coefficient by round_filters"),
    "timm_wrapper": "its weights are a timm model's (config.architecture names a timm architecture): no transformers "
                    "module layout for a recipe to declare",
    "perceiver": "Perceiver's latents (d_latents) and inputs (d_model) are two widths with q/k and value channels of their "
                 "own, joined by cross-attention, behind per-modality preprocessors: not done yet",
    "siglip2": "SigLIP 2 (NaFlex) reads patches with pixel_attention_mask and spatial_shapes, resizing its position table "
               "per image: its towers are SigLIP's with a linear patch embedding, but verification inputs of that layout "
               "are not generated yet",
    "tipsv2": "TIPSv2's towers are a DINOv2-like vision encoder (layer scale, registers) and an OpenCLIP text encoder "
              "(q|k|v in in_proj, resblocks): not done yet",
    "videoprism": "VideoPrism factorises video attention into a spatial and a temporal encoder beside a text tower, "
                  "pooled by attention: not done yet",
    "altclip": "AltCLIP's XLM-RoBERTa text tower is stored as encoder.layers in AltCLIPTextModel and encoder.layer in "
               "AltCLIPModel, which the towers' planning cannot tell apart yet (its algebra is Chinese-CLIP's)",
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["altclip_text_model"] = like(tiny.TEXT, project_dim=12)
TINY["altclip_vision_model"] = tiny.VISION
TINY["altclip"] = {"text_config": TINY["altclip_text_model"], "vision_config": TINY["altclip_vision_model"],
                   "projection_dim": 12}
