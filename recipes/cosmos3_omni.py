"""Cosmos3 Omni (cosmos3_omni), all hfgrow knows of it: Qwen3-VL saved in the original layout, both towers at the top
level (the text model's layers.N with Diffusers-style attention names, the vision tower's blocks.N, merger,
deepstack_merger_list), read under the names transformers loads and written back under the stored ones. Its recipe is
Qwen3-VL's (the merger writes the text width), its verification inputs Qwen2-VL's patch rows, its tiny configuration
Qwen3-VL's. Registered by hfgrow.recipes from FAMILY: adding it took this module, its tests and the generated tables."""

import dataclasses

from hfgrow.recipe import Feed

from .vlm_joins import QWEN3_MERGERS, merging
from .vlm_joins import TINY as VLM_TINY

RECIPE = dataclasses.replace(merging("cosmos3_omni", ("Cosmos3OmniModel", "Cosmos3OmniForConditionalGeneration"),
                                     QWEN3_MERGERS), renamed=True)
FAMILY = (RECIPE,)

FEEDS = {"cosmos3_omni": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids")}

TINY = {"cosmos3_omni": VLM_TINY["qwen3_vl"]}  # Qwen3-VL's, saved in the original layout by the tests
