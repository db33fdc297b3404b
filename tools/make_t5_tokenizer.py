#!/usr/bin/python3
"""Writes a Flan-T5-shaped checkpoint with T5's tokenizer files, and the ids T5's tokenizer
gives for a set of texts.

Run with Debian's PyTorch and SentencePiece bindings (python3-torch, python3-sentencepiece):

    /usr/bin/python3 tools/make_t5_tokenizer.py

T5's tokenizer is google's 32000-piece SentencePiece model (spiece.model) with 100 sentinel
tokens <extra_id_0..99> after it; a hub folder ships it twice: spiece.model, and the
tokenizer.json transformers' T5Converter made from it (a Unigram model over the same pieces
and scores, the model's precompiled_charsmap as a "Precompiled" normalizer, WhitespaceSplit
and Metaspace pre-tokenizers, "$A </s>" as the template). Neither file is on a registry this
project may fetch from, so the folder below holds the same files made from the small
unigram model tools/make_siglip_tokenizer.py trains the way such models are (nmt_nfkc, T5's
special ids 0 <pad>, 1 </s>, 2 <unk>; 2000 pieces; unlike google's, it falls back to bytes
for a character no piece covers, so its Unigram model says "byte_fallback": true), and
tokenizer.json is written from it as google/flan-t5-small's hub file is laid out.

tests/checkpoints/flan_t5_text_tiny/
  config.json, model.safetensors   google/flan-t5-small's config, sizes shrunk as
                                   make_seq2seq_checkpoints.py's flan_t5_tiny (BF16), with
                                   vocab_size 2128 (the real one's 32128: the tokenizer's
                                   2100 and unused rows); random weights
  spiece.model                     the SentencePiece model
  tokenizer.json                   its T5 tokenizer.json (above)
  tokenizer_config.json, special_tokens_map.json   google/flan-t5-small's, extra ids and
                                   sizes to this vocabulary
tests/golden/t5_tokenizer.json
  {"cases": [{"text": ..., "ids": [...]}]}: T5TokenizerFast's input_ids: the text cut at the
  added tokens (<pad>, </s>, <unk>, <extra_id_N>), each other stretch encoded by the
  SentencePiece library itself (SentencePieceProcessor.encode: nmt_nfkc, whitespace runs one
  "▁", a "▁" before the text, Viterbi over the pieces, unknown characters one <unk>), and
  </s> appended.

Nothing here calls Headscope.
"""

import base64
import json
import os
import shutil
import sys

import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_seq2seq_checkpoints import flan_t5_small_config, make  # noqa: E402
from make_vit_checkpoints import write_json  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SPIECE = os.path.join(ROOT, "tests", "checkpoints", "siglip_tiny", "spiece.model")
NAME = "flan_t5_text_tiny"
FOLDER = os.path.join(ROOT, "tests", "checkpoints", NAME)
GOLDEN = os.path.join(ROOT, "tests", "golden", "t5_tokenizer.json")
EXTRA_IDS = 100

TEXTS = [
    "translate English to German: The house is wonderful.",
    "summarize: studies have shown that owning a dog is good for you",
    "  leading and   repeated   spaces, trailing too  ",
    "tabs\tand\nnew lines",
    "Full-width ＡＢＣ １２３ and the ﬁne ligature",
    "café, naïve, Ångström",
    "an emoji 😀😀 and 漢字 no piece covers",
    "question: what is 12 + 30? answer:",
    "Today is a fine <extra_id_0> on which to walk my <extra_id_1> in the park.",
    "a sentence with </s> inside",
    "UPPER lower MiXeD",
]


def proto_fields(data):
    """The top-level fields of a protobuf message: {field number: [bytes or int]}."""
    fields, at = {}, 0

    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            b = data[at]
            at += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    while at < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            value = varint()
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            length = varint()
            value, at = data[at:at + length], at + length
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(number, []).append(value)
    return fields


def charsmap(model_bytes):
    """ModelProto.normalizer_spec (3) .precompiled_charsmap (2)."""
    normalizer_spec = proto_fields(model_bytes)[3][0]
    return proto_fields(normalizer_spec)[2][0]


def byte_fallback(model_bytes):
    """ModelProto.trainer_spec (2) .byte_fallback (35)."""
    return bool(proto_fields(proto_fields(model_bytes)[2][0]).get(35, [0])[0])


def added(i, content):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def tokenizer_json(sp, model_bytes):
    n = sp.get_piece_size()
    specials = [added(i, sp.id_to_piece(i)) for i in range(n) if sp.is_control(i) or sp.is_unknown(i)]
    extras = [added(n + EXTRA_IDS - 1 - k, f"<extra_id_{k}>") for k in range(EXTRA_IDS)]
    eos = {"SpecialToken": {"id": "</s>", "type_id": 0}}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": specials + sorted(extras, key=lambda t: t["id"], reverse=True),
        "normalizer": {"type": "Precompiled",
                       "precompiled_charsmap": base64.b64encode(charsmap(model_bytes)).decode("ascii")},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos,
                                    {"Sequence": {"id": "B", "type_id": 0}}, eos],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": byte_fallback(model_bytes),
                  "vocab": [[sp.id_to_piece(i), sp.get_score(i)] for i in range(n)]},
    }


def reference_ids(sp, text):
    """T5TokenizerFast's ids: cut at the added tokens, each stretch by SentencePiece, </s> last."""
    n = sp.get_piece_size()
    added_tokens = {sp.id_to_piece(i): i for i in range(n) if sp.is_control(i) or sp.is_unknown(i)}
    added_tokens.update({f"<extra_id_{k}>": n + EXTRA_IDS - 1 - k for k in range(EXTRA_IDS)})
    ids, at = [], 0
    while at < len(text):
        starts = [(text.find(t, at), t) for t in added_tokens if text.find(t, at) >= 0]
        if not starts:
            ids += sp.encode(text[at:])
            break
        start, token = min(starts, key=lambda s: (s[0], -len(s[1])))
        ids += sp.encode(text[at:start]) + [added_tokens[token]]
        at = start + len(token)
    return ids + [1]


def main():
    model_bytes = open(SPIECE, "rb").read()
    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    assert sp.get_piece_size() == 2000 and sp.pad_id() == 0 and sp.eos_id() == 1 and sp.unk_id() == 2
    config = dict(flan_t5_small_config(), vocab_size=sp.get_piece_size() + EXTRA_IDS + 28)
    make(NAME, config, "t5", "BF16", 11, 0.25)
    shutil.copy(SPIECE, os.path.join(FOLDER, "spiece.model"))
    write_json(os.path.join(FOLDER, "tokenizer.json"), tokenizer_json(sp, model_bytes))
    extra = [f"<extra_id_{k}>" for k in range(EXTRA_IDS)]
    write_json(os.path.join(FOLDER, "tokenizer_config.json"),
               {"additional_special_tokens": extra, "eos_token": "</s>", "extra_ids": EXTRA_IDS,
                "model_max_length": 512, "name_or_path": "google/t5-v1_1-small", "pad_token": "<pad>",
                "sp_model_kwargs": {}, "special_tokens_map_file": "/home/younes_huggingface_co/.cache/huggingface/"
                "hub/models--google--t5-v1_1-small/snapshots/special_tokens_map.json",
                "tokenizer_class": "T5Tokenizer", "unk_token": "<unk>"})
    write_json(os.path.join(FOLDER, "special_tokens_map.json"),
               {"additional_special_tokens": extra, "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"})
    cases = [{"text": t, "ids": reference_ids(sp, t)} for t in TEXTS]
    # The model falls back to bytes (<0xF0> ...) where google's T5 model would say <unk>: the
    # Unigram model's byte_fallback, as the converter writes it for such a model.
    assert byte_fallback(model_bytes) and any(sp.id_to_piece(i).startswith("<0x") for c in cases for i in c["ids"])
    write_json(GOLDEN, {"folder": NAME, "cases": cases})
    print(f"wrote {FOLDER} and {GOLDEN}")


if __name__ == "__main__":
    main()
