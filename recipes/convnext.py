"""ConvNeXt and ConvNeXt V2: hierarchical convolutional networks (docs/design.md §Stages), stage i hidden_sizes[i] wide.

The stem is a strided convolution and a LayerNorm over channels (the stream starts at a norm); stage i > 0 starts by
downsampling, a LayerNorm over the previous stage's channels and a strided convolution to this stage's. A block is a 7×7
depthwise convolution (groups = channels: big channel J reads only itself, a copy of its unit, so the weight's input axis
of one is kept and its output axis copies), a LayerNorm, a 4× pointwise MLP and, in ConvNeXt, a per-channel layer scale
(copies carry 1) before the residual sum. ConvNeXt V2's global response normalisation divides each channel's spatial L2
norm by the mean of those norms over the channels: whole copies keep that mean, so its per-channel γ, β copy. The norms in
the blocks, the stem and the downsampling have eps 1e-6 fixed in the code: whole factors and the copy convention only."""

from hfgrow.recipe import STAGE, ConfigFields, Kind, Recipe, Space, Stages, TensorRule, linear, norm, writes

from .stages import CONSTRAINTS, STAGES, all_stage_spaces
from .vit import conv2d


def block(i: int) -> tuple[TensorRule, ...]:
    b, s = f"encoder.stages.{i}.layers.*", f"s{i}"
    return (TensorRule(f"{b}.dwconv.weight", (writes(f"{s}.dw"), None, None, None)), TensorRule(f"{b}.dwconv.bias", (writes(f"{s}.dw"),)),
            *norm(f"{b}.layernorm", f"{s}.ln", input=f"{s}.dw"),
            *linear(f"{b}.pwconv1", f"{s}.ffn", f"{s}.ln"),
            *(TensorRule(f"{b}.grn.{n}", (None, None, None, writes(f"{s}.ffn"))) for n in ("weight", "bias")),  # V2
            *linear(f"{b}.pwconv2", s, f"{s}.ffn"),
            TensorRule(f"{b}.layer_scale_parameter", (writes(f"{s}.gain"),)))  # ConvNeXt's


def downsampling(i: int) -> tuple[TensorRule, ...]:
    """Stage i's start (i > 0): a LayerNorm over stage i − 1's channels, a strided convolution to stage i's."""
    d = f"encoder.stages.{i}.downsampling_layer"
    return (*norm(f"{d}.0", f"s{i - 1}.down", input=f"s{i - 1}"), *conv2d(f"{d}.1", f"s{i}", f"s{i - 1}.down"))


def convnext(name: str, prefix: str, classes: tuple[str, ...]) -> Recipe:
    return Recipe(
        name=name, model_types=(name,), classes=classes, prefix=prefix, constraints=CONSTRAINTS,
        config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=("layer_norm_eps",),
                            stages=Stages(widths="hidden_sizes", ratios={"ffn": 4})),
        spaces={**all_stage_spaces(attention=False, ffn="ffn", dw="", ln="", gain="", down="", patch="", out=""),
                "hidden": Space("hidden", Kind.RESIDUAL), "final": Space("hidden", Kind.ACTIVATION)},
        outputs={"hidden_states": STAGE, "hidden_states[-1]": STAGE, "last_hidden_state": STAGE, "pooler_output": "final",
                 "feature_maps": STAGE},
        body=(
            *conv2d("embeddings.patch_embeddings", "s0.patch", None), *norm("embeddings.layernorm", "s0", input="s0.patch"),
            *(r for i in STAGES for r in block(i)), *(r for i in STAGES[1:] for r in downsampling(i)),
            *norm("layernorm", "final", input="hidden"),
            *(r for i in STAGES for r in norm(f"hidden_states_norms.stage{i + 1}", f"s{i}.out", input=f"s{i}")),  # a backbone's
        ),
        heads=linear("classifier", None, "final"),
    )


CONVNEXT = convnext("convnext", "convnext", ("ConvNextModel", "ConvNextForImageClassification", "ConvNextBackbone"))
CONVNEXTV2 = convnext("convnextv2", "convnextv2", ("ConvNextV2Model", "ConvNextV2ForImageClassification", "ConvNextV2Backbone"))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# two stages of 8 and 16 channels over 8×8 images (a 2×2 stem: 4 × 4, downsampled to 2 × 2)
TINY["convnext"] = {"image_size": 8, "patch_size": 2, "num_channels": 3, "num_stages": 2, "hidden_sizes": [8, 16],
                    "depths": [1, 2], "layer_norm_eps": 0.05, "drop_path_rate": 0.0, "layer_scale_init_value": 0.5,
                    "num_labels": 3, "out_features": ["stage1", "stage2"]}
# two stages of 8 and 16 channels over 8×8 images (a 2×2 stem: 4 × 4, downsampled to 2 × 2)
TINY["convnextv2"] = TINY["convnext"]
