"""Dual encoders built like CLIP (recipes/clip.py): each tower by its own sizes, the projections into the shared
embedding space kept at their size, so the embeddings and the image–text scores are the small model's.

- MetaCLIP 2: CLIP's towers and heads under its own class names.
- Chinese-CLIP: CLIP's vision tower beside a BERT text tower (post-norm: whole multiples of its hidden size), whose
  class token of the last hidden state the text projection reads (ChineseCLIPTextModel alone also has BERT's pooler).
"""

import dataclasses

from hfgrow.recipe import Recipe, drop, keep, linear

from . import bert, clip
from . import tiny
from .tiny import like

# MetaCLIP 2: CLIP, renamed
METACLIP_2_TEXT = clip.TEXT.extend(name="metaclip_2_text_model", model_types=("metaclip_2_text_model",),
                                   classes=("MetaClip2TextModel", "MetaClip2TextModelWithProjection"))
METACLIP_2_VISION = clip.VISION.extend(name="metaclip_2_vision_model", model_types=("metaclip_2_vision_model",),
                                       classes=("MetaClip2VisionModel", "MetaClip2VisionModelWithProjection"))
METACLIP_2_IMAGE_CLASSIFICATION = clip.IMAGE_CLASSIFICATION.extend(
    name="metaclip_2_image_classification", model_types=("metaclip_2",), classes=("MetaClip2ForImageClassification",))
METACLIP_2 = clip.MODEL.extend(name="metaclip_2", model_types=("metaclip_2",), classes=("MetaClip2Model",),
                               towers=(("text_config", METACLIP_2_TEXT), ("vision_config", METACLIP_2_VISION)))


def bert_tower(name: str, cls: str, body: tuple = ()) -> Recipe:
    """BERT's encoder as a dual encoder's text tower (keys under ``text_model``), without BERT's task heads."""
    return dataclasses.replace(bert.RECIPE, name=name, model_types=(name,), classes=(cls,), prefix="text_model", heads=(),
                               class_heads={}, body=(*bert.RECIPE.body, *body))


CHINESE_CLIP_TEXT = bert_tower("chinese_clip_text_model", "ChineseCLIPTextModel")
CHINESE_CLIP_VISION = clip.VISION.extend(name="chinese_clip_vision_model", model_types=("chinese_clip_vision_model",),
                                         classes=("ChineseCLIPVisionModel",), heads=())
VISION_PROJECTION = linear("visual_projection", None, "vision_config.final", bias=False)


def dual(name: str, cls: str, text: Recipe, vision: Recipe, between: tuple) -> Recipe:
    """Both towers, the kept logit scale and the projections ``between`` them and the shared space."""
    return Recipe(
        name=name, model_types=(name,), classes=(cls,), config=clip.FIELDS, spaces={},
        towers=(("text_config", text), ("vision_config", vision)),
        outputs={**clip.tower_outputs("text_model_output", text, "text_config"),
                 **clip.tower_outputs("vision_model_output", vision, "vision_config"),
                 "text_model_output.pooler_output": None, "vision_model_output.pooler_output": None,
                 "text_embeds": None, "image_embeds": None},
        body=(*keep("logit_scale", ndim=0), *VISION_PROJECTION, *between),
    )


# ChineseCLIPModel's text tower has no pooler (the tower is planned as ChineseCLIPTextModel, which has one)
CHINESE_CLIP = dual("chinese_clip", "ChineseCLIPModel",
                    CHINESE_CLIP_TEXT.extend(body=(*drop("pooler.dense.weight"), *drop("pooler.dense.bias"))), CHINESE_CLIP_VISION,
                    linear("text_projection", None, "text_config.hidden", bias=False))

# CLIPSeg's dual encoder: CLIP's towers and projections renamed (CLIPSegForImageSegmentation, whose decoder reads the
# vision hidden states of some blocks and the kept text embeddings, is not covered)
CLIPSEG_TEXT = clip.TEXT.extend(name="clipseg_text_model", model_types=("clipseg_text_model",), classes=("CLIPSegTextModel",),
                                heads=())
CLIPSEG_VISION = clip.VISION.extend(name="clipseg_vision_model", model_types=("clipseg_vision_model",),
                                    classes=("CLIPSegVisionModel",), heads=())
CLIPSEG = dual("clipseg", "CLIPSegModel", CLIPSEG_TEXT, CLIPSEG_VISION,
               linear("text_projection", None, "text_config.final", bias=False))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["metaclip_2"] = {"text_config": tiny.TEXT, "vision_config": tiny.VISION, "projection_dim": 12, "num_labels": 3}
TINY["metaclip_2_text_model"] = like(tiny.TEXT, projection_dim=12)
TINY["metaclip_2_vision_model"] = like(tiny.VISION, projection_dim=12)
TINY["clipseg"] = TINY["metaclip_2"]
TINY["clipseg_text_model"] = TINY["metaclip_2_text_model"]
TINY["clipseg_vision_model"] = TINY["metaclip_2_vision_model"]
# BERT and XLM-RoBERTa text towers (post-norm; AltCLIP's positions start after the padding index)
TINY["chinese_clip_text_model"] = like(tiny.TEXT, type_vocab_size=2)
# BERT and XLM-RoBERTa text towers (post-norm; AltCLIP's positions start after the padding index)
TINY["chinese_clip_vision_model"] = tiny.VISION
TINY["chinese_clip"] = {"text_config": TINY["chinese_clip_text_model"],
                        "vision_config": TINY["chinese_clip_vision_model"], "projection_dim": 12}
