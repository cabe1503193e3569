"""Vision-language models whose image features reach the text through learned queries (issue 32): a Q-Former or a
resampler between the vision tower and the text model. The text model grows by its own recipe; the vision tower and the
resampler's layers of their own width are kept; the layer that writes the text width grows on its output axis, as an
embedding row does.

* InstructBLIP-Video: InstructBLIP's Q-Former and language_projection, run over each frame of a video (its features
  num_query_tokens a frame, in place of the video placeholder tokens).
"""

import dataclasses

from .vlm_joins import INSTRUCTBLIP

INSTRUCTBLIPVIDEO = dataclasses.replace(INSTRUCTBLIP, name="instructblipvideo", model_types=("instructblipvideo",),
                                        classes=("InstructBlipVideoForConditionalGeneration",))  # the Model: no output to compare

RECIPES = (INSTRUCTBLIPVIDEO,)
