"""Pyramid vision transformers: PVT, PVT v2 and SegFormer's Mix Transformer (docs/design.md §Stages). Stage i is
hidden_sizes[i] wide with num_attention_heads[i] heads (head_dim kept: the heads grow) and an MLP of mlp_ratios[i] × the
width; it starts with a patch convolution from the previous stage's channels (the pixels for the first) and a LayerNorm,
so its stream starts at a norm. Attention reduces the keys' and values' tokens by a strided convolution and a LayerNorm
over the channels (spatial reduction, where the stage's ratio is above 1): per channel, whole copies. PVT v2's and
SegFormer's MLPs hold a 3×3 depthwise convolution (groups = channels: each copy reads only itself). PVT adds learned
positions to each stage and a class token to the last; PVT v2 and SegFormer end each stage with a LayerNorm. SegFormer's
segmentation head projects every stage to decoder_hidden_size (grown by the factor), fuses them side by side with a 1×1
convolution, a batch norm and a ReLU, and classifies per pixel. Norm eps partly fixed in the code: whole factors and the
copy convention only."""

from hfgrow.recipe import (STAGE, ConfigFields, Kind, Recipe, Repeated, Space, Stages, TensorRule, linear, norm, reads,
                           writes)

from .stages import CONSTRAINTS, STAGES, all_stage_spaces
from .vit import conv2d, vector
from .tiny import like

FIELDS = dict(hidden="hidden_size", ffn=None, heads=None, eps=("layer_norm_eps",))
SPACES = {**all_stage_spaces(ffn="ffn", n="", kv="", sr="", patch="", out=""), "hidden": Space("hidden", Kind.RESIDUAL),
          "final": Space("hidden", Kind.ACTIVATION)}
OUTPUTS = {"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": STAGE, "feature_maps": STAGE}


def block(b: str, s: str, attention: str, names: dict[str, str], dwconv: bool) -> tuple[TensorRule, ...]:
    """A block of stage space ``s``: norm, attention with spatial reduction (``names``: its q, k, v, o, reduction and
    norm modules under ``attention``), norm, MLP (with a depthwise convolution)."""
    a = {k: f"{b}.{attention}.{v}" for k, v in names.items()}
    return (*norm(f"{b}.layer_norm_1", f"{s}.n", input=s), *linear(a["q"], f"{s}.q", f"{s}.n"),
            # keys and values read the norm's output, or its reduced tokens normalised again: the same copies
            *linear(a["k"], f"{s}.k", f"{s}.kv"), *linear(a["v"], f"{s}.v", f"{s}.kv"), *linear(a["o"], s, f"{s}.o"),
            *conv2d(a["sr"], f"{s}.sr", f"{s}.n"), *norm(a["sr_norm"], f"{s}.kv", input=f"{s}.sr"),
            *norm(f"{b}.layer_norm_2", f"{s}.n", input=s), *linear(f"{b}.mlp.dense1", f"{s}.ffn", f"{s}.n"),
            *linear(f"{b}.mlp.dense2", s, f"{s}.ffn"),
            *((TensorRule(f"{b}.mlp.dwconv.dwconv.weight", (writes(f"{s}.ffn"), None, None, None)),
               TensorRule(f"{b}.mlp.dwconv.dwconv.bias", (writes(f"{s}.ffn"),))) if dwconv else ()))


MIX = dict(q="query", k="key", v="value", sr="sr", sr_norm="layer_norm")


def mix_stage(i: int, embed: str, blocks: str, end: str, names: dict[str, str], attention: str) -> tuple[TensorRule, ...]:
    """A Mix Transformer stage (PVT v2, SegFormer): overlapping patch embedding, blocks, a LayerNorm at its end."""
    s = f"s{i}"
    return (*conv2d(f"{embed}.proj", f"{s}.patch", f"s{i - 1}.out" if i else None), *norm(f"{embed}.layer_norm", s, input=f"{s}.patch"),
            *block(f"{blocks}.*", s, attention, names, dwconv=True), *norm(end, f"{s}.out", input=s))


def mix(name: str, prefix: str, classes: tuple[str, ...], body: tuple[TensorRule, ...], heads: tuple[TensorRule, ...],
        grown: dict[str, str] | None = None) -> Recipe:
    return Recipe(
        name=name, model_types=(name,), classes=classes, prefix=prefix, constraints=CONSTRAINTS,
        config=ConfigFields(**FIELDS, stages=Stages(widths="hidden_sizes", heads="num_attention_heads",
                                                    ratios={"ffn": "mlp_ratios"}, grown=grown or {})),
        spaces={**SPACES, **{name: Space(name, Kind.ACTIVATION) for name in grown or {}}}, outputs=OUTPUTS,
        body=body, heads=heads)


SEGFORMER = mix(
    "segformer", "segformer", ("SegformerModel", "SegformerForImageClassification", "SegformerForSemanticSegmentation"),
    tuple(r for i in STAGES for r in mix_stage(i, f"encoder.patch_embeddings.{i}", f"encoder.block.{i}", f"encoder.layer_norm.{i}",
                                                   dict(MIX, o="output.dense"), "attention.self")
          if not r.pattern.startswith(f"encoder.block.{i}.*.attention.self.output"))
    + tuple(r for i in STAGES for r in linear(f"encoder.block.{i}.*.attention.output.dense", f"s{i}", f"s{i}.o")),
    heads=(*linear("classifier", None, "hidden"),
           *(r for i in STAGES for r in linear(f"decode_head.linear_c.{i}.proj", "dec", f"s{i}.out")),
           TensorRule("decode_head.linear_fuse.weight", (writes("fuse"), Repeated(reads("dec")), None, None)),
           *(TensorRule(f"decode_head.batch_norm.{n}", (writes("fuse"),)) for n in ("weight", "bias", "running_mean", "running_var")),
           TensorRule("decode_head.batch_norm.num_batches_tracked", ()), *conv2d("decode_head.classifier", None, "fuse")),
    grown={"dec": "decoder_hidden_size", "fuse": "decoder_hidden_size"},
)
PVT_V2 = mix(
    "pvt_v2", "pvt_v2", ("PvtV2Model", "PvtV2ForImageClassification", "PvtV2Backbone"),
    tuple(r for i in STAGES for r in mix_stage(i, f"encoder.layers.{i}.patch_embedding", f"encoder.layers.{i}.blocks",
                                                   f"encoder.layers.{i}.layer_norm",
                                                   dict(MIX, o="proj", sr="spatial_reduction"), "attention")),
    heads=linear("classifier", None, "hidden"),
)


def pvt_stage(i: int) -> tuple[TensorRule, ...]:
    e, s = f"encoder.patch_embeddings.{i}", f"s{i}"
    return (*conv2d(f"{e}.projection", f"{s}.patch", f"s{i - 1}" if i else None), *norm(f"{e}.layer_norm", s, input=f"{s}.patch"),
            *vector(f"{e}.position_embeddings", s, 3), *vector(f"{e}.cls_token", s, 3),
            *(r for r in block(f"encoder.block.{i}.*", s, "attention.self", dict(MIX, o="output.dense", sr="sequence_reduction"),
                               dwconv=False) if ".attention.self.output." not in r.pattern),
            *linear(f"encoder.block.{i}.*.attention.output.dense", s, f"{s}.o"))


PVT = Recipe(
    name="pvt", model_types=("pvt",), classes=("PvtModel", "PvtForImageClassification"), prefix="pvt", constraints=CONSTRAINTS,
    config=ConfigFields(**FIELDS, stages=Stages(widths="hidden_sizes", heads="num_attention_heads", ratios={"ffn": "mlp_ratios"})),
    spaces=SPACES,
    outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": "final"},
    body=(*(r for i in STAGES for r in pvt_stage(i)), *norm("encoder.layer_norm", "final", input="hidden")),
    heads=linear("classifier", None, "final"),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Mix Transformers: two stages of 1 and 2 heads, spatial reduction 2 in the first, depthwise convolutions in the MLPs
TINY["segformer"] = {"num_channels": 3, "num_encoder_blocks": 2, "depths": [1, 2], "sr_ratios": [2, 1],
                     "hidden_sizes": [8, 16], "patch_sizes": [3, 3], "strides": [2, 2], "num_attention_heads": [1, 2],
                     "mlp_ratios": [2, 2], "layer_norm_eps": 0.05, "decoder_hidden_size": 8, "hidden_dropout_prob": 0.0,
                     "attention_probs_dropout_prob": 0.0, "classifier_dropout_prob": 0.0, "drop_path_rate": 0.0,
                     "num_labels": 3, "image_size": 8}
TINY["pvt_v2"] = like(TINY["segformer"], "decoder_hidden_size", "classifier_dropout_prob",
                      out_features=["stage1", "stage2"])
# (PVT's tables assume a first stride of 4)
TINY["pvt"] = like(TINY["pvt_v2"], "sr_ratios", "out_features", patch_sizes=[4, 2], strides=[4, 2], image_size=16,
                   sequence_reduction_ratios=[2, 1])
