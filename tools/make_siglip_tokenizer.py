#!/usr/bin/python3
"""Writes a SentencePiece tokenizer in SigLIP's folder layout into tests/checkpoints/siglip_tiny,
and the ids transformers' SiglipTokenizer gives for a set of labels.

Run with Debian's SentencePiece binding and the King James Bible (python3-sentencepiece,
bible-kjv bible-kjv-text):

    /usr/bin/python3 tools/make_siglip_tokenizer.py                 # write the files
    /usr/bin/python3 tools/make_siglip_tokenizer.py --check FOLDER  # a real SigLIP folder's ids

(make_siglip_checkpoints.py, which rewrites siglip_tiny, ends by running it.)

SigLIP's tokenizer is google's 32000-piece English SentencePiece model (spiece.model, also
T5's), read by transformers' SiglipTokenizer, a slow tokenizer only: a folder's tokenizer.json,
where there is one, is not what transformers reads. That model is not on a registry this
project may fetch from, so the test folder holds a small one trained here the way such models
are: unigram, the nmt_nfkc normalisation, T5's special ids (0 <pad>, 1 </s>, 2 <unk>, no
<s>), on the King James Bible and a set of picture captions (captions below), 2000 pieces.

tests/checkpoints/siglip_tiny/
  spiece.model                 that model (the file SentencePiece writes)
  tokenizer_config.json        google/siglip-so400m-patch14-384's, verbatim (the hub file:
                               do_lower_case, model_max_length 64, </s> as eos and pad, <unk>,
                               tokenizer_class SiglipTokenizer)
  special_tokens_map.json      the same hub folder's, verbatim
tests/checkpoints/bad/siglip_spiece_lfs_pointer/
                               siglip_tiny_so400m_bf16's files, and for spiece.model the Git LFS
                               pointer a clone without LFS leaves (the real file's size)
tests/golden/siglip/tokenizer.json
  {"cases": [{"text": ..., "ids": [...], "pieces": [...]}]}: for each text, the ids the zero-shot
  pipeline feeds the text tower: SiglipTokenizer's input_ids with padding="max_length" (64).

The reference below is SiglipTokenizer's steps as transformers' tokenization_siglip.py and
tokenization_utils.py (PreTrainedTokenizer.tokenize) take them, on the Python SentencePiece
library: "▁" + the text (any "▁" in it a space); lower-cased (do_lower_case) outside special
tokens; cut at the special tokens </s> and <unk> (lstrip / rstrip: the spaces beside them go);
each other piece canonicalised (string.punctuation removed, runs of whitespace one space,
stripped) and encoded as "<unk>" + piece with add_dummy_prefix off, the pieces "<unk>" alone
makes dropped; a leading "▁" dropped before a special token; </s> appended unless last; padded
with </s> to model_max_length. --check runs it on a real folder and compares with the ids
transformers' tests/models/siglip/test_tokenization_siglip.py states for
google/siglip-base-patch16-224 (the same 32000-piece model).

Nothing here calls Headscope.
"""

import json
import os
import re
import shutil
import string
import sys

import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_text import read_kjv  # noqa: E402  (the Bible's verses, as the tiny story model reads them)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.path.join(ROOT, "tests", "checkpoints", "siglip_tiny")
GOLDEN = os.path.join(ROOT, "tests", "golden", "siglip", "tokenizer.json")

SPIECE_UNDERLINE = "\u2581"
# protobuf: ModelProto field 3 (normalizer_spec) holding NormalizerSpec field 3
# (add_dummy_prefix) false. A parser merges a repeated message field into the first, so these
# bytes after a model are SiglipTokenizer's NormalizerSpec(add_dummy_prefix=False) MergeFrom.
NO_DUMMY_PREFIX = b"\x1a\x02\x18\x00"

# google/siglip-so400m-patch14-384's tokenizer_config.json and special_tokens_map.json.
TOKENIZER_CONFIG = {
    "added_tokens_decoder": {
        "1": {"content": "</s>", "lstrip": True, "normalized": False, "rstrip": True, "single_word": False,
              "special": True},
        "2": {"content": "<unk>", "lstrip": True, "normalized": False, "rstrip": True, "single_word": False,
              "special": True},
    },
    "additional_special_tokens": [],
    "clean_up_tokenization_spaces": True,
    "do_lower_case": True,
    "eos_token": "</s>",
    "model_input_names": ["input_ids"],
    "model_max_length": 64,
    "pad_token": "</s>",
    "processor_class": "SiglipProcessor",
    "sp_model_kwargs": {},
    "tokenizer_class": "SiglipTokenizer",
    "unk_token": "<unk>",
}
SPECIAL = {"content": None, "lstrip": True, "normalized": False, "rstrip": True, "single_word": False}
SPECIAL_TOKENS_MAP = {name: dict(SPECIAL, content=content)
                      for name, content in (("eos_token", "</s>"), ("pad_token", "</s>"), ("unk_token", "<unk>"))}

# Captions in the style labels are written in, beside the Bible's English.
NOUNS = ["cat", "dog", "bird", "car", "house", "tree", "flower", "horse", "boat", "train", "person", "child",
         "mountain", "river", "city", "street", "kitchen", "guitar", "pizza", "clock", "photo", "picture"]
ADJECTIVES = ["red", "small", "large", "old", "young", "happy", "sleeping", "running", "wooden", "blue", "green",
              "bright", "dark", "tiny", "fluffy"]
TEMPLATES = ["a photo of a {a} {n}.", "a picture of the {n}", "an image of {a} {n}s", "a drawing of a {n}",
             "This is a {a} {n}!", "A close-up photo of the {a} {n}, taken at night"]

# Labels as people type them: punctuation, capitals, odd spaces, digits, accents and
# compatibility forms (nmt_nfkc), characters the model never saw (<unk>), special tokens
# typed in the text, and one past the 64 positions.
CASES = [
    "a photo of a cat",
    "A Photo of a DOG.",
    "the real mountain view",
    "Summary of the text.",
    "  a   sleeping\thorse\u3000in the rain ",
    "a 2-door car, 1990's model!",
    "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e",
    "\uff21 \uff10\uff11 photo \u2460",
    "a \u732b and a \U0001F408",
    "an image\u2581of\u2581 trees",
    "a cat</s>",
    "</s> a cat",
    "the <unk> of a </S>  dog",
    "#hashtag @user [brackets] {braces} ~tilde~",
    "\u0130stanbul",
    " ".join(["word"] * 70),
]


class SiglipTokenizerReference:
    """transformers' SiglipTokenizer, the steps the zero-shot pipeline takes (see the docstring)."""

    def __init__(self, model_bytes, config):
        self.sp = spm.SentencePieceProcessor(model_proto=model_bytes + NO_DUMMY_PREFIX)
        self.do_lower_case = config.get("do_lower_case", True)
        self.max_length = config.get("model_max_length", 64)
        self.eos, self.unk, self.pad = config["eos_token"], config["unk_token"], config["pad_token"]
        self.special = [self.eos, self.unk] + list(config.get("additional_special_tokens", []))
        self.unk_length = len(self.sp.encode(self.unk, out_type=str))

    def canonicalize(self, text):
        text = text.translate(str.maketrans("", "", string.punctuation))
        return re.sub(r"\s+", " ", text).strip()

    def _tokenize(self, text):
        pieces = self.sp.encode(self.unk + self.canonicalize(text), out_type=str)
        return pieces[self.unk_length:] if len(pieces) >= self.unk_length else pieces

    def split_special(self, text):
        """PreTrainedTokenizer.tokenize's cut at added tokens (leftmost, longest; lstrip/rstrip)."""
        pattern = "(" + "|".join(re.escape(s) for s in sorted(set(self.special), key=len, reverse=True)) + ")"
        parts = re.split(pattern, text)
        for i, part in enumerate(parts):
            if part in self.special:
                if i > 0:
                    parts[i - 1] = parts[i - 1].rstrip()
                if i + 1 < len(parts):
                    parts[i + 1] = parts[i + 1].lstrip()
        return parts

    def tokenize(self, text):
        text = SPIECE_UNDERLINE + text.replace(SPIECE_UNDERLINE, " ")
        if self.do_lower_case:
            pattern = r"(" + r"|".join(re.escape(s) for s in self.special) + r")|" + r"(.+?)"
            text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text, flags=re.DOTALL)
        tokens = []
        for part in self.split_special(text):
            if not part:
                continue
            tokens.extend([part] if part in self.special else self._tokenize(part))
        if len(tokens) > 1 and tokens[0] == SPIECE_UNDERLINE and tokens[1] in self.special:
            tokens = tokens[1:]
        return tokens

    def input_ids(self, text):
        tokens = self.tokenize(text)
        ids = [self.sp.piece_to_id(t) for t in tokens]
        eos_id = self.sp.piece_to_id(self.eos)
        if not ids or ids[-1] != eos_id:
            ids.append(eos_id)
        pad_id = self.sp.piece_to_id(self.pad)
        return ids + [pad_id] * max(0, self.max_length - len(ids)), tokens


def captions():
    lines = []
    for i, a in enumerate(ADJECTIVES):
        for j, n in enumerate(NOUNS):
            lines.append(TEMPLATES[(i + j) % len(TEMPLATES)].format(a=a, n=n))
    return lines


def train():
    import io
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sum(read_kjv(), []) + captions() * 20), model_writer=out,
                                   vocab_size=2000, model_type="unigram", normalization_rule_name="nmt_nfkc",
                                   pad_id=0, eos_id=1, unk_id=2, bos_id=-1, num_threads=1,
                                   character_coverage=0.9995, byte_fallback=True, minloglevel=2)
    return out.getvalue()


def check_real(folder):
    """transformers' test ids for google/siglip-base-patch16-224 (make_siglip_checkpoints.py's TINY_LABELS)."""
    with open(os.path.join(folder, "spiece.model"), "rb") as f:
        model = f.read()
    with open(os.path.join(folder, "tokenizer_config.json")) as f:
        config = json.load(f)
    ref = SiglipTokenizerReference(model, config)
    expected = [
        ("the real mountain view", [260, 638, 3293, 870, 1]),
        ("Summary of the text.", [6254, 267, 260, 1443, 1]),
        ("A long paragraph for summarization.", [262, 266, 476, 8532, 270, 4460, 3949, 1682, 1]),
        ("San Francisco", [262, 264, 452, 20563, 15949] + [1] * 59),
    ]
    for text, ids in expected:
        got, _ = ref.input_ids(text)
        got = got if len(ids) == 64 else got[:len(ids)]
        print(("ok  " if got == ids else "DIFF"), repr(text), got[:12])
    for text in CASES:
        ids, tokens = ref.input_ids(text)
        print(repr(text), tokens[:16], ids[:16])


def write_all():
    model = train()
    with open(os.path.join(FOLDER, "spiece.model"), "wb") as f:
        f.write(model)
    for name, content in (("tokenizer_config.json", TOKENIZER_CONFIG), ("special_tokens_map.json", SPECIAL_TOKENS_MAP)):
        with open(os.path.join(FOLDER, name), "w") as f:
            json.dump(content, f, indent=2)
            f.write("\n")
    bad = os.path.join(ROOT, "tests", "checkpoints", "bad", "siglip_spiece_lfs_pointer")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "tests", "checkpoints", "siglip_tiny_so400m_bf16"), bad)
    with open(os.path.join(bad, "spiece.model"), "w") as f:
        f.write("version https://git-lfs.github.com/spec/v1\n"
                "oid sha256:1e9e7a7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192\nsize 798330\n")
    ref = SiglipTokenizerReference(model, TOKENIZER_CONFIG)
    cases = []
    for text in CASES:
        ids, tokens = ref.input_ids(text)
        cases.append({"text": text, "ids": ids, "pieces": tokens})
        print(repr(text), tokens[:12], len(ids))
    with open(GOLDEN, "w") as f:
        json.dump({"source": "tools/make_siglip_tokenizer.py: transformers' SiglipTokenizer steps on "
                             "tests/checkpoints/siglip_tiny/spiece.model, padding=\"max_length\"",
                   "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check_real(sys.argv[2])
    else:
        write_all()


if __name__ == "__main__":
    main()
