"""Omni thinkers (issue 32): a text model, a vision tower and an audio tower, each tower ending in a layer that writes the
text width. The text model grows by its own recipe; both towers are kept but for those last layers, whose rows (and
bias) write the text stream as an embedding row does, and whose output sizes (vision_config.out_hidden_size,
audio_config.output_dim) follow the text hidden size (docs/design.md §Towers). The projected audio and image features
replace the embeddings of their placeholder tokens; the multimodal rotary positions depend on token ids and grids
alone, which growth leaves as they are.

* Qwen2.5-Omni's thinker: Qwen2.5-VL's vision merger (``visual.merger.mlp.2``); Qwen2-Audio's encoder ending in
  ``audio_tower.proj`` into output_dim, beside ``audio_bos_eos_token`` (two rows of output_dim, unused by the forward:
  grown as embedding rows).
* Qwen3-Omni-MoE's thinker: Qwen3-VL's merger and deepstack mergers (``visual.merger.mlp.2``,
  ``visual.merger_list.N.mlp.2``: the deepstack features are added to the first text blocks' hidden states, a sum in
  the stream); Qwen3-ASR's encoder ending in ``audio_tower.proj2`` into output_dim.

And VibeVoice-ASR (an audio-language model joined as recipes/audio_joins.py joins them): two σ-VAE tokenizer encoders
over raw audio, acoustic and semantic, both kept; each connector a layer into the text width, an RMSNorm over it (eps
fixed in code) and a layer within it, their sum the embedding row. The norm's space is copied as an activation's (c = 1,
every convention): with every unit copied alike it sees the small mean square, so only whole multiples of the text
width are exact. Its forward adds Gaussian noise to the acoustic latents unless given ``sample=False``, which the
verification inputs carry (hfgrow/signals.py).
"""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Tower, TensorRule, linear, norm, writes

from .audio_joins import AUDIO_OUTPUTS
from .vlm import FIELDS, LANGUAGE_MODEL, OUTPUTS, QWEN2_5_VL
from .vlm_joins import PROJECTED, joined

TWINS = {"vision_config.out_hidden_size": "text_config.hidden_size", "audio_config.output_dim": "text_config.hidden_size"}
TOWERS = (QWEN2_5_VL.towers[0],  # the text model: saved under model (the legacy layout), loaded under model.language_model
          Tower("vision_config", ("model.visual", "visual"), kept=True),
          Tower("audio_config", ("model.audio_tower", "audio_tower"), kept=True))


def thinker(name: str, classes: tuple[str, ...], body: tuple[TensorRule, ...]) -> object:
    """Qwen2.5-VL's recipe (prefix ``model``, the LM head) over a text model and kept vision and audio towers."""
    return dataclasses.replace(QWEN2_5_VL, name=name, model_types=(name,), classes=classes, body=body, towers=TOWERS,
                               config=dataclasses.replace(FIELDS, twins=TWINS),
                               outputs={**OUTPUTS, "audio_hidden_states": "text_config.hidden"})


QWEN2_5_OMNI_THINKER = thinker(
    "qwen2_5_omni_thinker", ("Qwen2_5OmniThinkerModel", "Qwen2_5OmniThinkerForConditionalGeneration"),
    (*linear("visual.merger.mlp.2", "text_config.hidden", None), *linear("audio_tower.proj", "text_config.hidden", None),
     TensorRule("audio_tower.audio_bos_eos_token.weight", (None, writes("text_config.hidden")))))
QWEN3_OMNI_MOE_THINKER = thinker(
    "qwen3_omni_moe_thinker", ("Qwen3OmniMoeThinkerModel", "Qwen3OmniMoeThinkerForConditionalGeneration"),
    (*linear("visual.merger.mlp.2", "text_config.hidden", None), *linear("visual.merger_list.*.mlp.2", "text_config.hidden", None),
     *linear("audio_tower.proj2", "text_config.hidden", None)))


VIBEVOICE_NORM = WholeMultiplesOnly("VibeVoice-ASR's connectors normalise over the text width (an RMSNorm between two "
                                    "layers, eps fixed in code), which copies counted unevenly would change")


def connector(path: str) -> tuple[TensorRule, ...]:
    """A VibeVoice-ASR connector: a layer into the text width (its input the kept tokenizer's latents), an RMSNorm over
    it, a layer within it that writes the text stream."""
    p = f"multi_modal_projector.{path}"
    return (*linear(f"{p}_linear_1", "text_config.projected", None), *norm(f"{p}_norm", "text_config.projected", bias=False),
            *linear(f"{p}_linear_2", "text_config.hidden", "text_config.projected"))


VIBEVOICE_ASR = joined(
    "vibevoice_asr", ("VibeVoiceAsrModel", "VibeVoiceAsrForConditionalGeneration"),
    (Tower("text_config", LANGUAGE_MODEL, spaces=PROJECTED, constraints=(VIBEVOICE_NORM,)),
     *(Tower(f"{k}_tokenizer_encoder_config", (f"{k}_tokenizer_encoder", f"model.{k}_tokenizer_encoder"), kept=True)
       for k in ("acoustic", "semantic"))),
    (*connector("acoustic"), *connector("semantic")), outputs=AUDIO_OUTPUTS)

RECIPES = (QWEN2_5_OMNI_THINKER, QWEN3_OMNI_MOE_THINKER, VIBEVOICE_ASR)
