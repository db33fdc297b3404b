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
//
// The prose, so that C++ can build exactly the same text: P = the contents of
// tests/golden/tokenizers/prose_passage.txt without its final "\n" (968 ASCII characters, no
// other newline); text = P repeated 104 times, joined by "\n" (no trailing newline):
// 104 * 968 + 103 = 100,775 bytes.
import { createRequire } from 'node:module';
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
const root = process.argv[2] || path.join(cache, `tokenizers-${hfVersion}-lenml-${lenmlVersion}`);
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

const same = hf.ids.length === lenml.ids.length && hf.ids.every((id, i) => id === lenml.ids[i]);
const row = (name, r) => `| ${name.padEnd(24)} | ${r.load.toFixed(1).padStart(9)} | ${r.first.toFixed(1).padStart(13)} | ` +
    `${r.encode.toFixed(1).padStart(10)} | ${(text.length / 1024 / (r.encode / 1000)).toFixed(0).padStart(8)} |`;
console.log(`Qwen3 tokenizer.json, ${text.length} bytes of prose (${hf.ids.length} tokens), node ${process.version}, ` +
    `${os.cpus().length} CPUs, median of ${runs}`);
console.log('| library                  | load (ms) | 1st enc. (ms) | enc. (ms)  |  KiB/s   |');
console.log('|--------------------------|-----------|---------------|------------|----------|');
console.log(row(`tokenizers ${hfVersion}`, hf));
console.log(row(`@lenml/tokenizers ${lenmlVersion}`, lenml));
console.log(same ? 'ids: the same from both' : `ids DIFFER: ${hf.ids.length} vs ${lenml.ids.length} tokens`);
