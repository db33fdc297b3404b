#!/usr/bin/python3
"""Writes tiny BERT checkpoints in Hugging Face's folder layout, what PyTorch computes
from them, and broken checkpoints that must be refused.

Run with Debian's PyTorch (python3-torch):

    /usr/bin/python3 tools/make_bert_checkpoints.py

tests/checkpoints/
  bert_tiny/          BertForMaskedLM (F32, "bert." prefix, cls.predictions.* with the
                      decoder weight stored, equal to word_embeddings, the position_ids
                      buffer), E=16 H=2 L=2 I=48, 32 positions, 2 token types; vocab.txt:
                      60 hand-written WordPiece pieces ([PAD] [UNK] [CLS] [SEP] [MASK],
                      words, ## pieces, punctuation); tokenizer_config.json: uncased
  bert_tiny_bf16/     BertModel (no head): other weights in BF16, no prefix, LayerNorm
                      gamma / beta names, pooler.dense; vocab.txt without tokenizer_config.json
  bert_tiny_cls/      BertForSequenceClassification (F32, "bert." prefix, pooler, classifier
                      [3, E], id2label negative / neutral / positive, the token_type_ids
                      buffer); tokenizer_config.json: cased (do_lower_case false)
  bert_tiny_cls_f16/  the same classifier with its floating weights in F16
  bad/bert_*/         each must fail with one line (see tests/cli/test_cli_bert.cpp);
                      bad/bert_single_type loads, but has type_vocab_size 1, so a sentence
                      pair ([SEP] in the text) is refused
tests/golden/bert/
  <case>.safetensors  attn.L [H, T, T] for every layer, logits ([T, V] for the masked-LM
                      head, [labels] for the classifier, none for BertModel), input_ids [T],
                      token_type_ids [T]
  cases.json          the manifest the C++ test walks

The reference is `Bert` below, written from the published architecture (Devlin et al.
2019; transformers' modeling_bert.py): embeddings = LayerNorm(word + position + token
type), post-LN layers (LayerNorm(x + attention), LayerNorm(x + MLP)), exact (erf) GELU,
eps 1e-12, no attention mask; the masked-LM head (dense, GELU, LayerNorm, decoder tied to
the word embeddings, bias) and the classifier on tanh(pooler(hidden[CLS])). BF16 weights
are upcast to float32, as transformers' from_pretrained does by default.

The token ids come from `WordPiece` below, written from BERT's published tokenizer
(google-research/bert tokenization.py: clean, split on whitespace, lower-case and strip
accents when uncased, split off punctuation, greedy longest-match-first pieces with "##",
[UNK] for a word that cannot be split), with special tokens written in the text kept
whole. A sentence pair is split at the first "[SEP]" typed, as headscope does, and
encoded "[CLS] A [SEP] B [SEP]" with token types 0 for [CLS], A and its [SEP], 1 for B
and the last [SEP]. Nothing here calls Headscope.
"""

import math
import os
import shutil
import sys
import unicodedata

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_safetensors  # noqa: E402  (the repository's one safetensors writer)
from make_gpt2_checkpoints import write_json  # noqa: E402
from make_vit_checkpoints import cast, from_stored, write_folder as write_weights_folder  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKPOINT_DIR = os.path.join(ROOT, "tests", "checkpoints")
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden", "bert")

E, H, L, I, N_POSITIONS, N_TYPES = 16, 2, 2, 48, 32, 2
EPS = 1e-12
LABELS = ["negative", "neutral", "positive"]

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "a", "it", "was", "is", "and", "to", "in", "on", "of", "with",
    "cat", "dog", "sat", "ran", "park", "ball", "red", "mat", "house",
    "play", "walk", "jump", "happy", "like", "quick", "un",
    "##ing", "##ed", "##s", "##er", "##ly", "##ness", "##hold",
    ".", ",", "!", "?", "'",
    "The", "It", "cafe", "movie", "great", "i", "he", "she", "##like",
    "fox", "brown", "over", "lazy", "##y", "time", "good",
]
SPECIALS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]

# (case name, checkpoint, input): text is tokenized below; a list is fed as --tokens.
TEXT = "The quick brown fox was jumping over the [MASK] dog's Caf\u00e9, unlikely!"
PAIR = "The dog ran to the park. [SEP] It was playing with a red ball!"
CLS_PAIR = "The movie was great! [SEP] It is a good time."
BF16_TEXT = "the cat sat on the mat."
TOKENS = [2, 16, 4, 0, 59, 3, 57, 1, 44]


# --------------------------------------------------------------------------------------
# tokenizer: BERT's WordPiece (google-research/bert tokenization.py)


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class WordPiece:
    def __init__(self, vocab, lower_case):
        self.ids = {t: i for i, t in enumerate(vocab)}
        self.lower_case = lower_case

    def basic(self, text):
        """BasicTokenizer: words and punctuation, lower-cased and accent-free when uncased."""
        text = "".join(" " if is_whitespace(c) else c for c in text if ord(c) not in (0, 0xFFFD) and not is_control(c))
        words = []
        for word in text.split():
            if self.lower_case:
                word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
            current = ""
            for c in word:
                if is_punctuation(c):
                    words += [current, c] if current else [c]
                    current = ""
                else:
                    current += c
            if current:
                words.append(current)
        return words

    def pieces(self, word):
        """Greedy longest-match-first; a word that cannot be split is [UNK]."""
        if len(word) > 100:
            return ["[UNK]"]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = ("##" if start > 0 else "") + word[start:end]
                if piece in self.ids:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            out.append(piece)
            start = end
        return out

    def tokenize(self, text):
        """Special tokens written in the text stay whole; the rest is split as above."""
        out, at = [], 0
        while at <= len(text):
            found = [(text.find(s, at), s) for s in SPECIALS if text.find(s, at) >= 0]
            stop, special = min(found) if found else (len(text), None)
            for word in self.basic(text[at:stop]):
                out += self.pieces(word)
            if special is None:
                break
            out.append(special)
            at = stop + len(special)
        return out

    def encode(self, text):
        """[CLS] text [SEP], or for text with "[SEP]" in it [CLS] A [SEP] B [SEP]. Returns
        (pieces, token types)."""
        if "[SEP]" not in text:
            pieces = ["[CLS]"] + self.tokenize(text) + ["[SEP]"]
            return pieces, [0] * len(pieces)
        a, b = text.split("[SEP]", 1)
        first = ["[CLS]"] + self.tokenize(a) + ["[SEP]"]
        second = self.tokenize(b) + ["[SEP]"]
        return first + second, [0] * len(first) + [1] * len(second)


# --------------------------------------------------------------------------------------
# reference model


def module(**children):
    m = nn.Module()
    for name, child in children.items():
        setattr(m, name, child)
    return m


class Layer(nn.Module):
    """One post-LN encoder layer, named as BertLayer's parameters."""

    def __init__(self):
        super().__init__()
        self.attention = module(self=module(query=nn.Linear(E, E), key=nn.Linear(E, E), value=nn.Linear(E, E)),
                                output=module(dense=nn.Linear(E, E), LayerNorm=nn.LayerNorm(E, eps=EPS)))
        self.intermediate = module(dense=nn.Linear(E, I))
        self.output = module(dense=nn.Linear(I, E), LayerNorm=nn.LayerNorm(E, eps=EPS))

    def forward(self, x):
        t = x.shape[0]
        dh = E // H
        s = self.attention.self
        q, k, v = (p(x).view(t, H, dh).transpose(0, 1) for p in (s.query, s.key, s.value))   # [H, T, Dh]
        weights = (q @ k.transpose(-1, -2) / math.sqrt(dh)).softmax(-1)                     # [H, T, T]
        context = (weights @ v).transpose(0, 1).reshape(t, E)
        x = self.attention.output.LayerNorm(x + self.attention.output.dense(context))
        x = self.output.LayerNorm(x + self.output.dense(F.gelu(self.intermediate.dense(x))))
        return x, weights


class Bert(nn.Module):
    """BertModel + the head `head` names: "mlm", "classifier" or None."""

    def __init__(self, v, head):
        super().__init__()
        self.head = head
        self.embeddings = module(word_embeddings=nn.Embedding(v, E), position_embeddings=nn.Embedding(N_POSITIONS, E),
                                 token_type_embeddings=nn.Embedding(N_TYPES, E), LayerNorm=nn.LayerNorm(E, eps=EPS))
        self.encoder = module(layer=nn.ModuleList([Layer() for _ in range(L)]))
        if head != "mlm":
            self.pooler = module(dense=nn.Linear(E, E))
        if head == "mlm":
            self.cls = module(predictions=module(transform=module(dense=nn.Linear(E, E),
                                                                  LayerNorm=nn.LayerNorm(E, eps=EPS))))
            self.cls.predictions.bias = nn.Parameter(torch.zeros(v))
        if head == "classifier":
            self.classifier = nn.Linear(E, len(LABELS))

    def forward(self, ids, types):
        emb = self.embeddings
        x = emb.LayerNorm(emb.word_embeddings(ids) + emb.position_embeddings(torch.arange(len(ids))) +
                          emb.token_type_embeddings(types))
        attentions = []
        for layer in self.encoder.layer:
            x, a = layer(x)
            attentions.append(a)
        if self.head == "mlm":
            t = self.cls.predictions.transform
            h = t.LayerNorm(F.gelu(t.dense(x)))
            return attentions, h @ emb.word_embeddings.weight.T + self.cls.predictions.bias   # [T, V], tied decoder
        if self.head == "classifier":
            return attentions, self.classifier(torch.tanh(self.pooler.dense(x[0])))           # [labels]
        return attentions, None


def randomise(model, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn_like(p))
            elif "embeddings" in name:
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(0.4 * torch.randn_like(p))


def stored_names(model, prefix):
    """The state dict under transformers' names: the backbone under `prefix`, heads not."""
    out = {}
    for k, t in model.state_dict().items():
        head = k.startswith("cls.") or k.startswith("classifier.")
        out[k if head else prefix + k] = t.detach().clone().contiguous()
    return out


def load_reference(model, stored, prefix):
    state = {}
    for k, t in from_stored(stored).items():
        k = k[len(prefix):] if prefix and k.startswith(prefix) else k
        k = k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        if k.endswith("position_ids") or k.endswith("token_type_ids") or k == "cls.predictions.decoder.weight":
            continue
        state[k] = t
    model.load_state_dict(state)


# --------------------------------------------------------------------------------------
# writing folders


def config(v, architecture, **extra):
    c = {"model_type": "bert", "architectures": [architecture], "vocab_size": v, "hidden_size": E,
         "num_hidden_layers": L, "num_attention_heads": H, "intermediate_size": I, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": N_POSITIONS,
         "type_vocab_size": N_TYPES, "initializer_range": 0.02, "layer_norm_eps": EPS, "pad_token_id": 0,
         "position_embedding_type": "absolute", "use_cache": True}
    c.update(extra)
    return c


def write_folder(name, cfg, tensors, tokenizer_config=None, vocab=True):
    folder = write_weights_folder(name, cfg, None, tensors)
    if vocab:
        with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("".join(t + "\n" for t in VOCAB))
    if tokenizer_config is not None:
        write_json(os.path.join(folder, "tokenizer_config.json"), tokenizer_config)
    return folder


def tokenizer_config(lower_case):
    return {"tokenizer_class": "BertTokenizer", "do_lower_case": lower_case, "strip_accents": None,
            "tokenize_chinese_chars": True, "model_max_length": N_POSITIONS, "cls_token": "[CLS]",
            "sep_token": "[SEP]", "unk_token": "[UNK]", "pad_token": "[PAD]", "mask_token": "[MASK]"}


CASES = []


def record(name, checkpoint, model, source, lower_case, stored_dtype):
    """`source`: text (tokenized here) or a list of ids (all token type 0)."""
    if isinstance(source, str):
        pieces, types = WordPiece(VOCAB, lower_case).encode(source)
        ids = [VOCAB.index(p) for p in pieces]
    else:
        ids, types = list(source), [0] * len(source)
    with torch.no_grad():
        attentions, logits = model(torch.tensor(ids), torch.tensor(types))
    tensors = {f"attn.{l}": a.contiguous() for l, a in enumerate(attentions)}
    if logits is not None:
        tensors["logits"] = logits.contiguous()
    tensors["input_ids"] = torch.tensor(ids, dtype=torch.int64)
    tensors["token_type_ids"] = torch.tensor(types, dtype=torch.int64)
    for a in attentions:
        assert torch.isfinite(a).all() and torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)
    save_safetensors(os.path.join(GOLDEN_DIR, name + ".safetensors"), tensors)
    case = {"name": name, "checkpoint": checkpoint, "layers": L, "heads": H, "tokens": len(ids), "ids": ids,
            "type_ids": types, "labels": [VOCAB[i] for i in ids], "weights": stored_dtype,
            "logits": list(logits.shape) if logits is not None else None}
    if isinstance(source, str):
        case["text"] = source
    CASES.append(case)
    print(f"  {name}: T = {len(ids)}, types {''.join(map(str, types))}, "
          f"largest attention weight {max(float(a.max()) for a in attentions):.3f}")


def n_parameters(model):
    return sum(p.numel() for p in model.parameters())


def main():
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    v = len(VOCAB)
    assert len(set(VOCAB)) == v

    # F32 BertForMaskedLM: "bert." prefix, cls.predictions.*, the decoder weight stored
    # (equal to the word embeddings, as a tied state dict holds it), position_ids buffer.
    mlm = Bert(v, "mlm")
    randomise(mlm, 20240612)
    f32 = stored_names(mlm, "bert.")
    f32["cls.predictions.decoder.weight"] = f32["bert.embeddings.word_embeddings.weight"].clone()
    f32["bert.embeddings.position_ids"] = torch.arange(N_POSITIONS, dtype=torch.int64).view(1, N_POSITIONS)
    mlm_cfg = config(v, "BertForMaskedLM")
    write_folder("bert_tiny", mlm_cfg, f32, tokenizer_config(True))
    ref = Bert(v, "mlm")
    load_reference(ref, f32, "bert.")
    print(f"bert_tiny (F32 BertForMaskedLM, {n_parameters(ref)} parameters)")
    record("bert_tiny.text", "bert_tiny", ref, TEXT, True, "F32")
    record("bert_tiny.pair", "bert_tiny", ref, PAIR, True, "F32")
    record("bert_tiny.tokens", "bert_tiny", ref, TOKENS, True, "F32")

    # BF16 BertModel: no prefix, LayerNorm gamma / beta, pooler; no tokenizer_config.json.
    bare = Bert(v, None)
    randomise(bare, 20240613)
    bf16 = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): t
            for k, t in cast(stored_names(bare, ""), torch.bfloat16).items()}
    write_folder("bert_tiny_bf16", config(v, "BertModel", torch_dtype="bfloat16"), bf16)
    ref_bf16 = Bert(v, None)
    load_reference(ref_bf16, bf16, "")
    print(f"bert_tiny_bf16 (BF16 BertModel, {n_parameters(ref_bf16)} parameters)")
    record("bert_tiny_bf16.text", "bert_tiny_bf16", ref_bf16, BF16_TEXT, True, "BF16")

    # F32 BertForSequenceClassification, cased tokenizer, token_type_ids buffer.
    cls = Bert(v, "classifier")
    randomise(cls, 20240614)
    f32_cls = stored_names(cls, "bert.")
    f32_cls["bert.embeddings.token_type_ids"] = torch.zeros(1, N_POSITIONS, dtype=torch.int64)
    cls_cfg = config(v, "BertForSequenceClassification", id2label={str(i): n for i, n in enumerate(LABELS)},
                     label2id={n: i for i, n in enumerate(LABELS)})
    write_folder("bert_tiny_cls", cls_cfg, f32_cls, tokenizer_config(False))
    ref_cls = Bert(v, "classifier")
    load_reference(ref_cls, f32_cls, "bert.")
    print(f"bert_tiny_cls (F32 BertForSequenceClassification, {n_parameters(ref_cls)} parameters)")
    record("bert_tiny_cls.pair", "bert_tiny_cls", ref_cls, CLS_PAIR, False, "F32")

    # The same classifier in F16 (the reference runs on the F16 values upcast to float32).
    f16_cls = {k: t.half() if t.is_floating_point() else t for k, t in f32_cls.items()}
    write_folder("bert_tiny_cls_f16", dict(cls_cfg, torch_dtype="float16"), f16_cls, tokenizer_config(False))
    ref_cls16 = Bert(v, "classifier")
    load_reference(ref_cls16, f16_cls, "bert.")
    print("bert_tiny_cls_f16 (F16 BertForSequenceClassification)")
    record("bert_tiny_cls_f16.pair", "bert_tiny_cls_f16", ref_cls16, CLS_PAIR, False, "F16")

    write_bad(v, f32, mlm_cfg)
    write_json(os.path.join(GOLDEN_DIR, "cases.json"), {"tolerance": 1e-4, "cases": CASES})
    total = 0
    for name in os.listdir(CHECKPOINT_DIR):
        if name.startswith("bert_") or name == "bad":
            for dirpath, _, files in os.walk(os.path.join(CHECKPOINT_DIR, name)):
                if name != "bad" or "/bert_" in dirpath:
                    total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
    print(f"wrote {len(CASES)} golden cases; the BERT folders hold {total / 1024:.0f} KB")


def write_bad(v, f32, cfg):
    """Broken copies of bert_tiny, its floating weights in BF16 to keep them small."""
    f32 = {k: t.bfloat16() if t.is_floating_point() else t for k, t in f32.items()}
    for name in os.listdir(os.path.join(CHECKPOINT_DIR, "bad")):
        if name.startswith("bert_"):
            shutil.rmtree(os.path.join(CHECKPOINT_DIR, "bad", name))
    wrong = dict(f32)
    wrong["bert.encoder.layer.0.intermediate.dense.weight"] = f32["bert.encoder.layer.0.intermediate.dense.weight"].T.contiguous()
    write_folder("bad/bert_wrong_shape", cfg, wrong, vocab=False)
    missing = dict(f32)
    del missing["bert.encoder.layer.1.attention.output.LayerNorm.bias"]
    write_folder("bad/bert_missing_tensor", cfg, missing, vocab=False)
    unknown = dict(f32)
    unknown["bert.encoder.layer.0.attention.self.query.weights"] = f32["bert.encoder.layer.0.attention.self.query.weight"]
    write_folder("bad/bert_unknown_tensor", cfg, unknown, vocab=False)
    decoder = dict(f32)
    decoder["cls.predictions.decoder.weight"] = f32["cls.predictions.decoder.weight"][: v - 1].clone()
    write_folder("bad/bert_decoder_shape", cfg, decoder, vocab=False)
    write_folder("bad/bert_vocab_mismatch", dict(cfg, vocab_size=v + 4), f32, vocab=False)
    write_folder("bad/bert_position_embedding_type", dict(cfg, position_embedding_type="relative_key"), None, vocab=False)
    write_folder("bad/bert_is_decoder", dict(cfg, is_decoder=True), None, vocab=False)
    # Loads (one token type), but cannot take a sentence pair.
    single = dict(f32)
    single["bert.embeddings.token_type_embeddings.weight"] = f32["bert.embeddings.token_type_embeddings.weight"][:1].clone()
    write_folder("bad/bert_single_type", dict(cfg, type_vocab_size=1), single)


if __name__ == "__main__":
    main()
