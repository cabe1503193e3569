"""Step 3.7 (step3p7), all hfgrow knows of it: the vision tower (kept, its stride-2 downsamplers included) and one linear
layer into the text width; its text model (Step3p7TextModel) is Step 3.5's, model type step3p5 (recipes/mixtral.py).
Registered by hfgrow.recipes from FAMILY: adding it took this module, its tests and the generated tables (and the text
class on Step 3.5's recipe, whose model type it is)."""

from hfgrow.recipe import Feed, Tower, linear

from . import tiny
from .tiny import like
from .vlm_joins import joined

# the vision tower (kept, its stride-2 downsamplers included) and one linear layer, vit_large_projector, into the text
# width; the text model's experts saved one by one in the original layout (moe.gate_proj …, share_expert), renamed
# and fused on load
RECIPE = joined("step3p7", ("Step3p7Model", "Step3p7ForConditionalGeneration"),
                (Tower("text_config", ("model.language_model", "language_model")),
                 Tower("vision_config", ("model.vision_model", "vision_model"), kept=True)),
                linear("(model.)?multi_modal_projector", "text_config.hidden", None, bias=False), prefix=(), renamed=True)

FAMILY = (RECIPE,)

FEEDS = {"step3p7": Feed(images="convolved")}

TINY: dict = {}
# Step 3.7: its text model, a tower over 16 × 16 images of 2 × 2 patches, two stride-2 downsamplers: 4 image tokens
TINY["step3p7"] = {"text_config": like(tiny.LLAMA, layer_types=["sliding_attention", "full_attention"],
                                       n_routed_experts=3, num_experts_per_tok=2, moe_intermediate_size=10,
                                       share_expert_dim=20, mlp_layer_types=["dense", "sparse"],
                                       query_pre_attn_scalar=6, moe_router_scaling_factor=2.5, sliding_window=4),
                   "image_token_id": 5,
                   "vision_config": like(tiny.TOWER, mlp_ratio=1.5, image_size=16, patch_size=2,
                                         max_position_embeddings=64)}
