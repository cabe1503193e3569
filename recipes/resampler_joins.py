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
"""

import dataclasses

from hfgrow.recipe import keep, linear

from .vlm_joins import INSTRUCTBLIP, joined, text, vision

INSTRUCTBLIPVIDEO = dataclasses.replace(INSTRUCTBLIP, name="instructblipvideo", model_types=("instructblipvideo",),
                                        classes=("InstructBlipVideoForConditionalGeneration",))  # the Model: no output to compare


ARIA_P = "multi_modal_projector"
ARIA_KEPT = (*keep(f"{ARIA_P}.query", 2), *keep(f"{ARIA_P}.(layer_norm|cross_attn.layer_norm|cross_attn.layer_norm_kv).(weight|bias)"),
             *keep(f"{ARIA_P}.cross_attn.((q|k|v)_proj.weight|linear.weight|multihead_attn.in_proj_weight|multihead_attn.out_proj.weight)", 2),
             *keep(f"{ARIA_P}.cross_attn.(linear.bias|multihead_attn.in_proj_bias|multihead_attn.out_proj.bias)"))
ARIA = joined("aria", ("AriaModel", "AriaForConditionalGeneration"), (text(), vision("vision_tower")),
              (*ARIA_KEPT, *linear(f"{ARIA_P}.feed_forward.linear_in", "text_config.projected", "vision_config.hidden", bias=False),
               *linear(f"{ARIA_P}.feed_forward.linear_out", "text_config.hidden", "text_config.projected", bias=False)))

RECIPES = (INSTRUCTBLIPVIDEO, ARIA)
