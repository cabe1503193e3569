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

from .vlm import FIELDS
from .vlm_joins import joined, shuffled_norm, text, two_layers, vision


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
