"""The audio spectrogram transformer (AST): ViT over a log-mel spectrogram's patches (one input channel), stored under
ViT's names, with a distillation token beside the CLS token. The pooled output is the mean of the two tokens' final
states (the final norm's copies), and the classifier LayerNorms it before its linear layer: a norm over copies of an
activation space, whose output the linear reads."""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Kind, Space, linear, norm

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
