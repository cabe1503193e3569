"""The multimodal model types of the coverage sweep that no recipe joins yet, each refused with what blocks it (listed in
REFUSED). One table: a reason, then the model types it holds.

Most of these are not mathematics but work not done: the towers mechanism (hfgrow/towers.py) keeps a vision tower and
grows the text model, so a join needs only rules for what lies between them, and verification inputs that reach the
text model. What each lacks is named: a merger inside the vision tower that writes the text width, an audio projector
of another kind than recipes/audio_joins.py declares, a projector with attention or learned queries, a text model hfgrow does not grow, weights
that are not a transformers layout. "Not yet declared" says plainly that the rules are not written.
"""

NOT_DECLARED = "not yet declared: "
MERGER = (NOT_DECLARED + "its vision tower ends in a merger that writes the text width (vision_config.out_hidden_size or "
          "text_hidden_size, the text hidden size): kept, the tower would mis-size the grown model; only Qwen2-VL's and "
          "Qwen2.5-VL's mergers have rules")
AUDIO = (NOT_DECLARED + "its audio reaches the text model through audio placeholder tokens ({}); recipes/audio_joins.py "
         "joins the audio-language models whose projector is plain layers into the text width, and verification generates "
         "audio in their layouts alone (hfgrow/signals.py AUDIO_LAYOUTS)")
CROSS = (NOT_DECLARED + "its image features reach the text through attention with learned queries (a resampler, Q-Former "
         "or cross-attention) whose widths are the projector's own: no recipe declares those layers")
TEXT = "its text model is not grown by hfgrow ({}), so neither is the whole model"
PROJECTOR = (NOT_DECLARED + "the text model and the kept vision tower are supported, but the projector between them ({}) "
             "has no rules yet")
SAVED_NAMES = (NOT_DECLARED + "transformers saves its text model under the original repository's names (the whole model's "
               "conversion mapping: {}), which the text tower, planned alone by its own class and recipe, does not "
               "read (hfgrow/towers.py, hfgrow/consistency.py's loaded_names)")
ENCODER_DECODER = (NOT_DECLARED + "an encoder-decoder over images ({}): no recipe joins its vision encoder to a text "
                   "decoder that reads it by cross-attention")

GROUPS: dict[str, tuple[str, ...]] = {
    MERGER: ("granite_docling", "hunyuan_vl"),
    MERGER + "; Qwen3-VL's deepstack mergers also add vision features into the first text blocks": ("cosmos3_omni",),
    # audio-language models not joined (issue 32): what lies between the audio and the text that no rule declares yet
    AUDIO.format("its projector ends in adaptor_config.num_hidden_layers pre-LayerNorm transformer layers of the text width, "
                 "a stack no recipe declares"): ("fun_asr_nano",),
    AUDIO.format("two convolutional σ-VAE tokenizer encoders over raw audio, acoustic and semantic, each connector an RMSNorm "
                 "over the text width between two layers; its forward adds Gaussian noise to the acoustic latents unless "
                 "given sample=False, which verification does not pass yet"): ("vibevoice_asr",),
    AUDIO.format("a FastConformer encoder beside diarization and word-timestamp models of their own (diarization_config, "
                 "word_timestamp_config) before a Nemotron-H text model: no layout generates their inputs"): ("nemo_speechlm",),
    AUDIO.format("a USM conformer and a timm MobileNetV5 vision tower, each entering through a multimodal embedder that ends "
                 "in a weightless RMSNorm over the text width"): ("gemma3n",),
    AUDIO.format("the audio tower ends in a projection into the text width (audio_config.output_dim), the vision tower in "
                 "Qwen2.5-VL's merger, and the thinker's multimodal rotary positions read the audio and vision start and "
                 "end tokens around their placeholders"): ("qwen2_5_omni_thinker",),
    AUDIO.format("the audio tower ends in a projection into the text width (audio_config.output_dim), the vision tower in "
                 "Qwen3-VL's merger and deepstack mergers into the first text blocks, and the thinker's multimodal rotary "
                 "positions read the audio and vision start and end tokens"): ("qwen3_omni_moe_thinker",),
    AUDIO.format("its decoder reads Mimi codec tokens: codec mimi has no recipe"): ("kyutai_speech_to_text",),
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
    PROJECTOR.format("a linear layer over the vision tower's stride-2 downsamplers"): ("step3p7",),
    PROJECTOR.format("vision_adapter's two layers and vision_projection"): ("muse_glimmer",),
    AUDIO.format("its audio tower and adapter have no rules, nor its vision adapter and projection"): ("muse_spark",),
    PROJECTOR.format("a SAM encoder beside a CLIP one, their features side by side, image_newline and view_separator "
                     "vectors of the text width"): ("unlimited_ocr", "deepseek_ocr2"),
    PROJECTOR.format("a SAM high-resolution tower with its neck and projection beside SigLIP, mixed by "
                     "high_res_vision_alpha"): ("deepseek_vl_hybrid",),
    PROJECTOR.format("a resampler merger after a ViT merger of the vision tower's own"): ("minicpm_ocr", "minicpmv4_6", "minicpmv4_7"),
    PROJECTOR.format("LLaVA's two layers as projector.readout; its vision tower's merged patch inputs are not generated by verification yet"): ("video_llama_3",),
    PROJECTOR.format("an RMSNorm and two layers over RADIO's features (RADIO has no recipe or fixture)"): ("nemotron_h_omni",),
    PROJECTOR.format("Gemma 4 Unified's vision embedder: patches of model_patch_size² × 3 pixels through its own "
                     "mm_embed_dim layers and learned positions into a multimodal embedder of the text width, no vision "
                     "tower"): ("gemma4_unified",),
    NOT_DECLARED + "a block-diffusion model (DiffusionGemmaForBlockDiffusion reads decoder_input_ids beside the prompt, "
    "with self-conditioning logits): Gemma 4's multimodal embedder would join its vision tower, but hfgrow's verification "
    "generates no image inputs for a block-diffusion decoder yet": ("diffusion_gemma",),
}

REFUSED = {model_type: why for why, types in GROUPS.items() for model_type in types}
