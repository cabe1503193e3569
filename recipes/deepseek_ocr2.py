"""DeepSeek-OCR 2 (deepseek_ocr2), all hfgrow knows of it: its text model, the joined model, its refused vision encoder
sub-config, its verification inputs and its tiny configurations. Registered by hfgrow.recipes from FAMILY and REFUSED:
adding it took this module, its tests and the generated tables."""

from hfgrow.recipe import Feed, TensorRule, Tower, linear, writes

from . import tiny
from .mixtral import SOLAR_OPEN
from .mixtral import TINY as MIXTRAL_TINY
from .tiny import like
from .vlm_aligners import TINY as ALIGNERS_TINY
from .vlm_joins import joined

# its text model: Solar-Open's layout (plain attention, head_dim = hidden / heads, DeepSeek-V2 experts and shared experts,
# greedy or group-limited routing), dense or sparse blocks as mlp_layer_types says
TEXT = SOLAR_OPEN.extend(name="deepseek_ocr2_text", model_types=("deepseek_ocr2_text",), classes=("DeepseekOcr2TextModel",))

# DeepSeek-OCR 2: a SAM encoder whose map a Qwen2-style encoder reads with learned queries (kept), one linear layer into
# the text width and a view_separator after the image, a vector of it; saved in the original layout (sam_model,
# qwen2_model, projector.layers, view_seperator, the text model with its experts one by one, merged on load), under
# model. or at the top level: read under the names transformers loads, written back under the stored ones
RECIPE = joined("deepseek_ocr2", ("DeepseekOcr2ForConditionalGeneration", "DeepseekOcr2Model"),
                (Tower("text_config", ("model.language_model", "language_model")),
                 Tower("vision_config", ("model.vision_tower", "vision_tower"), kept=True)),
                (*linear("(model.)?multi_modal_projector", "text_config.hidden", None),
                 TensorRule("(model.)?view_separator", (writes("text_config.hidden"),))),
                heads=linear("lm_head", None, "text_config.final", bias=False), renamed=True)

FAMILY = (TEXT, RECIPE)

REFUSED = {
    "deepseek_ocr2_encoder": "the vision encoder sub-config of DeepSeek-OCR 2 (deepseek_ocr2): a Qwen2-style stack over "
                             "inputs_embeds that the SAM tower's projection and DeepseekOcr2VisionModel's learned queries "
                             "write at its width, so it grows only with that tower; no class of transformers is a "
                             "checkpoint of it alone: DeepSeek-OCR 2 (deepseek_ocr2) grows with it kept",
}

FEEDS = {"deepseek_ocr2": Feed(images="queried_view")}

TINY: dict = {}
# head_dim = hidden / heads (set on load)
TINY["deepseek_ocr2_text"] = like(MIXTRAL_TINY["minimax_m2"], "head_dim", "num_local_experts", n_routed_experts=3,
                                  moe_intermediate_size=12, n_shared_experts=2, mlp_layer_types=["dense", "sparse"])
# DeepSeek-OCR 2: Unlimited OCR's SAM tower, its map read by a Qwen2-style encoder of its width (learned queries)
TINY["deepseek_ocr2"] = {"text_config": like(TINY["deepseek_ocr2_text"], model_type="deepseek_ocr2_text"),
                         "image_token_id": 5,
                         "vision_config": {"sam_config": ALIGNERS_TINY["unlimited_ocr"]["vision_config"]["sam_config"],
                                           "encoder_config": like(tiny.PROJECTED_TOWER, num_key_value_heads=2,
                                                                  rms_norm_eps=0.05)}}
