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

And FunASR-Nano: its encoder kept, its adaptor a layer from the encoder's width (kept) and one into the text width, then
adaptor_config.num_hidden_layers pre-LayerNorm transformer layers over the text width, whose output is the embedding
row: blocks over the text model's residual stream, declared here. Their attention splits the text width into
adaptor_config.num_attention_heads heads, kept, so their head_dim grows with the width (``hidden_heads``: laid out as
the hidden units, with the score correction of that growth), and their MLP is a quarter of the text width (transformers
requires it: ``hidden/4``, adaptor_config.intermediate_size in proportion). LayerNorms over copies counted unevenly
would change: whole multiples only.
"""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Kind, Space, Tower, TensorRule, linear, norm, writes
from hfgrow.recipe import Feed

from .audio_joins import AUDIO_OUTPUTS
from .vlm import FIELDS, LANGUAGE_MODEL, OUTPUTS, QWEN2_5_VL
from .vlm_joins import PROJECTED, joined
from . import tiny
from .tiny import like

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


FUN_ASR_NORM = WholeMultiplesOnly("FunASR-Nano's adaptor layers normalise over the text width (LayerNorms) and split it "
                                  "into heads of their own, which copies counted unevenly would change")
ADAPTOR = {"adaptor_q": Space("hidden_heads", Kind.QUERY), "adaptor_k": Space("hidden_heads", Kind.KEY),
           "adaptor_v": Space("hidden_heads", Kind.VALUE), "adaptor_ffn": Space("hidden/4", Kind.ACTIVATION)}


def adaptor_layers(p: str) -> tuple[TensorRule, ...]:
    """FunASR-Nano's adaptor layers: pre-LayerNorm blocks over the text width (``p``: the layers' path)."""
    t = "text_config"
    return (*norm(f"{p}.*.input_layernorm", f"{t}.hidden"), *norm(f"{p}.*.post_attention_layernorm", f"{t}.hidden"),
            *(rule for x in "qkv" for rule in linear(f"{p}.*.self_attn.{x}_proj", f"{t}.adaptor_{x}", f"{t}.hidden")),
            *linear(f"{p}.*.self_attn.o_proj", f"{t}.hidden", f"{t}.adaptor_v"),
            *linear(f"{p}.*.mlp.fc1", f"{t}.adaptor_ffn", f"{t}.hidden"), *linear(f"{p}.*.mlp.fc2", f"{t}.hidden", f"{t}.adaptor_ffn"))


FUN_ASR_NANO = joined(
    "fun_asr_nano", ("FunAsrNanoModel", "FunAsrNanoForConditionalGeneration"),
    (Tower("text_config", LANGUAGE_MODEL, spaces=ADAPTOR, constraints=(FUN_ASR_NORM,)),
     Tower("audio_config", ("audio_tower", "model.audio_tower"), kept=True)),
    (*linear("multi_modal_projector.linear_1", None, None), *linear("multi_modal_projector.linear_2", "text_config.hidden", None),
     *adaptor_layers("multi_modal_projector.layers")), outputs=AUDIO_OUTPUTS,
    config=dataclasses.replace(FIELDS, twins={"adaptor_config.hidden_size": "text_config.hidden_size"},
                               in_proportion={"adaptor_config.intermediate_size": "text_config.hidden_size"}))

RECIPES = (QWEN2_5_OMNI_THINKER, QWEN3_OMNI_MOE_THINKER, VIBEVOICE_ASR, FUN_ASR_NANO)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "fun_asr_nano": Feed(audio="stacked_frames"),
    "qwen2_5_omni_thinker": Feed(images="patch_rows", audio="pooled_mels", patch_rows=True, audio_marks=True),
    "qwen3_omni_moe_thinker": Feed(images="patch_rows", audio="windowed_mels_attention", patch_rows=True,
                                   audio_marks=True),
    "vibevoice_asr": Feed(audio="latent_waveform"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["qwen2_5_omni_thinker"] = like(tiny.OMNI_IDS, text_config=like(tiny.LLAMA, rope_parameters=tiny.MROPE,
                                                                    bos_token_id=1, eos_token_id=2,
                                                                    model_type="qwen2_5_omni_text"),
                                    vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps", window_size=8,
                                                       fullatt_block_indexes=[1],
                                                       model_type="qwen2_5_omni_vision_encoder"),
                                    audio_config={"num_mel_bins": 8, "max_source_positions": 12, "dropout": 0.0,
                                                  "attention_dropout": 0.0, "activation_dropout": 0.0, "d_model": 16,
                                                  "encoder_layers": 2, "encoder_attention_heads": 2,
                                                  "encoder_ffn_dim": 24, "n_window": 6, "output_dim": 16,
                                                  "model_type": "qwen2_5_omni_audio_encoder"})
TINY["qwen3_omni_moe_thinker"] = like(TINY["qwen2_5_omni_thinker"], text_config=like(tiny.QWEN3_MOE, head_dim=12,
                                                                                     rope_parameters={"rope_type": "default",
                                                                                                      "rope_theta": 10000.0,
                                                                                                      "mrope_section": [2, 2, 2]},
                                                                                     model_type="qwen3_omni_moe_text"),
                                      vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps",
                                                         num_position_embeddings=16, deepstack_visual_indexes=[0],
                                                         model_type="qwen3_omni_moe_vision_encoder"),
                                      audio_config={"num_mel_bins": 8, "encoder_layers": 2,
                                                    "encoder_attention_heads": 2, "encoder_ffn_dim": 24, "d_model": 16,
                                                    "n_window": 50, "n_window_infer": 100, "downsample_hidden_size": 4,
                                                    "output_dim": 16, "max_position_embeddings": 13,
                                                    "model_type": "qwen3_omni_moe_audio_encoder"})
TINY["vibevoice_asr"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "audio_token_id": 5,
                         "audio_bos_token_id": 6, "audio_eos_token_id": 7,
                         "acoustic_tokenizer_encoder_config": tiny.VIBEVOICE_ENCODER,
                         "semantic_tokenizer_encoder_config": like(tiny.VIBEVOICE_ENCODER, hidden_size=6)}
# FunASR-Nano: a tiny SAN-M encoder (8 features a frame: 4 mel bins × 2 stacked frames), two adaptor layers over the text
# width (2 heads, an MLP of a quarter of it); audio token 5
TINY["fun_asr_nano"] = {"text_config": like(tiny.LLAMA, model_type="qwen3"), "audio_token_id": 5,
                        "audio_config": {"num_mel_bins": 4, "num_stacked_frames": 2, "hidden_size": 8,
                                         "num_attention_heads": 2, "intermediate_size": 12, "num_hidden_layers": 3,
                                         "num_timestamp_prediction_layers": 1, "fsmn_kernel_size": 3,
                                         "max_position_embeddings": 32, "hidden_dropout": 0.0, "attention_dropout": 0.0,
                                         "model_type": "fun_asr_nano_encoder"},
                        "adaptor_config": like(tiny.PROJECTED_TOWER, intermediate_size=4, projector_hidden_size=12)}
