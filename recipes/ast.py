"""The audio spectrogram transformer (AST): ViT over a log-mel spectrogram's patches (one input channel), stored under
ViT's names, with a distillation token beside the CLS token. The pooled output is the mean of the two tokens' final
states (the final norm's copies), and the classifier LayerNorms it before its linear layer: a norm over copies of an
activation space, whose output the linear reads."""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Kind, Space, linear, norm
from hfgrow.recipe import Feed

from . import vit

RECIPE = dataclasses.replace(  # ViT's sizes, spaces and blocks
    vit.RECIPE,
    name="audio-spectrogram-transformer",
    model_types=("audio-spectrogram-transformer",),
    classes=("ASTModel", "ASTForAudioClassification"),
    prefix="audio_spectrogram_transformer",
    # the final norm's extra units are zeros, which would move the classifier norm's mean and variance
    constraints=(WholeMultiplesOnly("the classifier LayerNorms the final LayerNorm's output again"),),
    spaces={**vit.RECIPE.spaces, "head": Space("hidden", Kind.ACTIVATION)},
    outputs={**vit.RECIPE.outputs, "pooler_output": "final"},
    body=(*vit.RECIPE.body, *vit.vector("embeddings.distillation_token", "hidden", 3)),
    heads=(*norm("classifier.layernorm", "head", input="final"), *linear("classifier.dense", None, "head")),
)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "audio-spectrogram-transformer": Feed(signal="spectrogram"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["audio-spectrogram-transformer"] = {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                         "num_attention_heads": 2, "num_mel_bins": 12, "max_length": 16,
                                         "patch_size": 4, "frequency_stride": 4, "time_stride": 4,
                                         "layer_norm_eps": 0.05, "num_labels": 3}
