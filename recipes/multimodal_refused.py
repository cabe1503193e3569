"""The multimodal model types of the coverage sweep that no recipe joins yet, each refused with what blocks it (listed in
REFUSED). One table: a reason, then the model types it holds.

Most of these are not mathematics but work not done: the towers mechanism (hfgrow/towers.py) keeps a vision tower and
grows the text model, so a join needs only rules for what lies between them, and verification inputs that reach the
text model. What each lacks is named: a merger inside the vision tower that writes the text width, an audio tower that
verification cannot feed yet, a projector with attention or learned queries, a text model hfgrow does not grow, weights
that are not a transformers layout. "Not yet declared" says plainly that the rules are not written.
"""

NOT_DECLARED = "not yet declared: "
MERGER = (NOT_DECLARED + "its vision tower ends in a merger that writes the text width (vision_config.out_hidden_size or "
          "text_hidden_size, the text hidden size): kept, the tower would mis-size the grown model; only Qwen2-VL's and "
          "Qwen2.5-VL's mergers have rules")
AUDIO = (NOT_DECLARED + "its audio tower feeds the text model through audio placeholder tokens, and hfgrow's verification "
         "generates no audio inputs for a multimodal model yet (hfgrow/signals.py feeds Whisper- and wav2vec2-style "
         "encoders alone), so no join could be checked")
CROSS = (NOT_DECLARED + "its image features reach the text through attention with learned queries (a resampler, Q-Former "
         "or cross-attention) whose widths are the projector's own: no recipe declares those layers")
TEXT = "its text model is not grown by hfgrow ({}), so neither is the whole model"
PROJECTOR = (NOT_DECLARED + "the text model and the kept vision tower are supported, but the projector between them ({}) "
             "has no rules yet")
ENCODER_DECODER = (NOT_DECLARED + "an encoder-decoder over images ({}): no recipe joins its vision encoder to a text "
                   "decoder that reads it by cross-attention")

GROUPS: dict[str, tuple[str, ...]] = {
    MERGER: ("glm4v", "glm46v", "glmga", "glm4v_moe", "glm_ocr", "exaone4_5", "cohere_compass", "granite_docling",
             "qwen3_5", "qwen3_5_moe", "qwen3_vl_moe", "hunyuan_vl"),
    MERGER + "; Qwen3-VL's deepstack mergers also add vision features into the first text blocks": ("cosmos3_omni", "qwen3_vl"),
    AUDIO: ("qwen2_audio", "voxtral", "fun_asr_nano", "glmasr", "moss_transcribe_diarize", "omniasr", "qwen3_asr",
            "vibevoice_asr", "nemo_speechlm", "gemma3n", "qwen2_5_omni_thinker", "qwen3_omni_moe_thinker"),
    AUDIO + "; its projector is a Q-Former (blip_2_qformer) with learned queries": ("granite_speech", "granite_speech_plus"),
    AUDIO + "; its decoder reads Mimi codec tokens (codec mimi, no recipe)": ("kyutai_speech_to_text",),
    NOT_DECLARED + "a thinker (audio, vision and text: not joined) and a talker that reads the thinker's hidden states "
    "(thinker_to_talker_proj), with a vocoder": ("qwen2_5_omni", "qwen3_omni_moe"),
    CROSS: ("aria", "idefics2", "kosmos-2", "kosmos-2.5", "granite4_vision", "instructblipvideo", "molmo2", "evolla"),
    NOT_DECLARED + "gated cross-attention layers inside the text model read the perceiver's image latents (its text "
    "model is the model itself, no text sub-config)": ("idefics",),
    TEXT.format("mllama_text_model: cross-attention layers between its blocks read the vision features"): ("mllama",),
    TEXT.format("persimmon has no recipe; the image patches enter by a linear layer into the text width"): ("fuyu",),
    TEXT.format("hyper-connections: several residual streams mixed by weights read from all of them"): ("qwen4_exp", "hy_v4_vl"),
    TEXT.format("glm5_next_text is refused"): ("glm5_next",),
    TEXT.format("dots3_note_text is refused; an audio tower too"): ("dots3_note",),
    TEXT.format("ernie4_5_vl_moe_text is refused"): ("ernie4_5_vl_moe",),
    TEXT.format("voxtral_realtime_text is refused; an audio tower too"): ("voxtral_realtime",),
    TEXT.format("inkling_text, inkling2_text or inkling2_loop_text: not done yet, layouts no recipe declares"): ("inkling2", "inkling2_loop", "inkling_mm_model"),
    # emu3, apertus1p5: joined in recipes/vlm_joins.py (images as discrete codes, issue 32, helper mm3)
    PROJECTOR.format("a LayerNorm and two layers over the vision tower's merged patches (spatial_merge_size² of them side by "
                     "side)"): ("lfm3_vl",),
    TEXT.format("Chameleon's decoder is the model itself (no text sub-config) and has no recipe; images enter as VQ-VAE "
                "codes"): ("chameleon",),
    "its vision tower is a timm model (vision_config: timm_wrapper, config.architecture names a timm architecture): no "
    "transformers module layout for a recipe to declare": ("fast_vlm", "perception_lm"),
    ENCODER_DECODER.format("Pix2Struct, PP-FormulaNet, UDOP, VisionEncoderDecoderModel's pairs, T5Gemma 2, Florence-2's "
                           "BART over DaViT features"): ("pix2struct", "pp_formulanet", "udop", "vision-encoder-decoder",
                                                         "t5gemma2", "florence2"),
    NOT_DECLARED + "BLIP's and GIT's text decoders (BERT-like, with cross-attention or image tokens prepended) have no "
    "recipe": ("blip", "git"),
    NOT_DECLARED + "Janus's understanding aligner (an MLP into the text width) and its image-generation path (VQ codebook "
    "embeddings through generation_aligner into the text width, generation_head reading it)": ("janus",),
    NOT_DECLARED + "PI0's action expert (a Gemma DiT) attends jointly with the PaliGemma model over one sequence, with "
    "action and time embeddings of its own": ("pi0",),
    PROJECTOR.format("a LayerNorm and two layers over SigLIP 2 (NaFlex) features, whose pixel_attention_mask and "
                     "spatial_shapes inputs verification does not generate yet"): ("lfm2_vl",),
    PROJECTOR.format("Ovis 2's visual head: a softmax over a visual vocabulary, then visual_embeddings_table of the text "
                     "width"): ("ovis2",),
    PROJECTOR.format("Mistral 3's norm, patch merger and two layers over Pixtral, the norm's eps the text model's"): ("mistral_large4",),
    PROJECTOR.format("pixel-shuffle merge layers and two layers"): ("minimax_m3_vl", "qianfan_ocr", "kimi_k25"),
    PROJECTOR.format("a norm and two layers over the vision tower's patch merger"): ("paddleocr_vl",),
    PROJECTOR.format("a linear layer over the vision tower's stride-2 downsamplers"): ("step3p7",),
    PROJECTOR.format("a norm and two layers (linear_fc1, linear_fc2) over the vision tower"): ("cosmos3_edge",),
    PROJECTOR.format("vision_adapter's two layers and vision_projection"): ("muse_glimmer",),
    AUDIO + "; its vision adapter and projection have no rules either": ("muse_spark",),
    PROJECTOR.format("a SAM encoder beside a CLIP one, their features side by side, image_newline and view_separator "
                     "vectors of the text width"): ("unlimited_ocr", "deepseek_ocr2"),
    PROJECTOR.format("a SAM high-resolution tower with its neck and projection beside SigLIP, mixed by "
                     "high_res_vision_alpha"): ("deepseek_vl_hybrid",),
    PROJECTOR.format("a resampler merger after a ViT merger of the vision tower's own"): ("minicpm_ocr", "minicpmv4_6", "minicpmv4_7"),
    PROJECTOR.format("LLaVA's two layers as projector.readout; its vision tower's merged patch inputs are not generated by verification yet"): ("video_llama_3",),
    PROJECTOR.format("an RMSNorm and two layers over RADIO's features (RADIO has no recipe or fixture)"): ("nemotron_h_omni",),
    PROJECTOR.format("Gemma 4's multimodal embedder: a weightless RMSNorm and a linear layer into the text width, the "
                     "vision tower's own output √hidden-scaled"): ("gemma4", "gemma4_unified", "diffusion_gemma"),
}

REFUSED = {model_type: why for why, types in GROUPS.items() for model_type in types}
