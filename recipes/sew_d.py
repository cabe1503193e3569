"""SEW-D: SEW's squeezed front-end (the feature encoder, kept; the projection into the hidden size; a strided,
grouped positional convolution whose GELU output is added to the frames pooled by ``squeeze_factor``) around
DeBERTa-v2's post-norm blocks with disentangled attention (recipes/deberta_v2.py: the LayerNorm'd relative position
table lives in the hidden space and is read by the query and key projections), then SEW's upsampling into
``squeeze_factor`` frames of the hidden width. Post-norm, and the positional convolution's GELU output joins the
stream: whole multiples of the hidden size with the copy convention, no new blocks."""

import dataclasses

from hfgrow.policy import FeaturesProjected, PostNorm, StreamFromActivation
from hfgrow.recipe import ConfigFields, Recipe, TensorRule

from . import deberta_v2, wav2vec2
from . import tiny
from .tiny import like

# DeBERTa-v2's encoder rules (its blocks, the relative table and its LayerNorm), one module deeper: encoder.encoder
ENCODER = tuple(dataclasses.replace(r, pattern=f"encoder.{r.pattern}") for r in deberta_v2.RECIPE.body
                if r.pattern.startswith("encoder.") and not r.pattern.startswith("encoder.conv"))
FRONT_END = tuple(r for r in wav2vec2.SEW.body if not r.pattern.startswith(("encoder.layers", "encoder.layer_norm")))

RECIPE = Recipe(
    name="sew-d",
    model_types=("sew-d",),
    classes=("SEWDModel", "SEWDForCTC", "SEWDForSequenceClassification"),
    prefix="sew_d",
    requires={"squeeze_factor": 2},
    constraints=(StreamFromActivation(wav2vec2.FRONT_END), PostNorm(),
                 *(c for c in wav2vec2.RECIPE.constraints if not isinstance(c, (StreamFromActivation, PostNorm))), FeaturesProjected()),
    stacks=(("encoder.encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",),
                        conv_groups="num_conv_pos_embedding_groups"),
    spaces=wav2vec2.SEW.spaces,
    outputs={"last_hidden_state": "upsampled", "hidden_states": "hidden"},
    body=(*FRONT_END, *ENCODER),
    heads=wav2vec2.HEADS,
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["sew-d"] = like(tiny.WAV2VEC2, "tdnn_dim", "tdnn_kernel", "tdnn_dilation", "xvector_output_dim", "codevector_dim",
                     "proj_codevector_dim", "num_codevector_groups", "num_codevectors_per_group", squeeze_factor=2,
                     position_buckets=4, max_position_embeddings=16)
