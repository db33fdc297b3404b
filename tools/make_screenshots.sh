#!/usr/bin/env bash
# Renders the README's screenshots of each view into docs/screenshots/, with the app's
# own --screenshot under xvfb-run. Usage: tools/make_screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
app="${1:-build/release}/bin/headscope"
out=docs/screenshots
mkdir -p "$out"
# The recent-models list of these runs goes to a scratch folder, not the user's own.
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
shot() {
    local name=$1
    shift
    xvfb-run -a -s "-screen 0 1100x700x24" "$app" --size 1100x700 --screenshot "$out/$name.png" "$@"
    # 128 colours keep the files small for the repository (Pillow, when installed).
    /usr/bin/python3 -c "import sys; from PIL import Image; Image.open(sys.argv[1]).quantize(128).save(sys.argv[1], optimize=True)" \
        "$out/$name.png" 2>/dev/null || true
    echo "wrote $out/$name.png"
}
# What a first launch shows: the trained builtin:tiny-story on assets/default_sentence.txt,
# at the head the app picks (its previous-token head), its induction head, and every head.
shot first-launch
shot tiny-story-induction --layer 1 --head 0
shot tiny-story-model --view model --layer 0 --head 1
# The built demo model, whose heads are known by construction, on its own sentence.
toy=(--model builtin:toy-text --text "The cat sat on the mat because the cat was tired .")
shot matrix "${toy[@]}" --view matrix --head 1
shot matrix-causal "${toy[@]}" --view matrix --head 0 --causal
shot tokens "${toy[@]}" --view tokens --layer 0
shot image --model builtin:toy-vit --view image --query 95
shot model "${toy[@]}" --view model
shot compare "${toy[@]}" --view compare --head 0
shot stages "${toy[@]}" --view stages --head 0
shot heads "${toy[@]}" --view heads --metric prev_token --scan-importance
shot rollout --model builtin:toy-vit --view rollout
# The trained ViT (assets/models/tiny-shapes) on one of its sample scenes: last-layer head 0,
# the one that learned to find the shape.
shot tiny-shapes --model builtin:tiny-shapes --view image --layer 3 --head 0
shot similarity "${toy[@]}" --view similarity
shot model-metric "${toy[@]}" --view model --metric prev_token --colour-by-metric
# A tiny random GPT-2 (tests/checkpoints): its predictions are noise, but the panel is real.
shot predictions --model tests/checkpoints/gpt2_tiny --text "The cat sat on the mat" --disable 0.0,1.1 --view matrix
