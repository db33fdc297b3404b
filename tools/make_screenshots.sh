#!/usr/bin/env bash
# Renders the screenshots of each view (README, docs/window.md) into docs/screenshots/, with the app's
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
# SIZE (WIDTHxHEIGHT) and SCALE (the content scale) change a shot's window; 1100x700 at 1x.
shot() {
    local name=$1 size=${SIZE:-1100x700} scale=${SCALE:-1}
    shift
    xvfb-run -a -s "-screen 0 2400x1600x24" "$app" --size "$size" --scale "$scale" --screenshot "$out/$name.png" "$@"
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
# The window at its smallest supported size, and at content scale 2 (a HiDPI laptop): the
# same layout, wrapped where a row no longer fits, twice as large.
SIZE=1024x640 shot small --view model --layer 0 --head 1
SIZE=2200x1400 SCALE=2 shot hidpi --view matrix --layer 1 --head 0
# A tiny random GPT-2 (tests/checkpoints): its predictions are noise, but the panel is real.
shot predictions --model tests/checkpoints/gpt2_tiny --text "The cat sat on the mat" --disable 0.0,1.1 --view matrix
# A tiny random Flan-T5 (its tokenizer a trained one's): a typed source, eight tokens generated,
# each target token's cross-attention over the source, step 3 pinned.
shot cross --model tests/checkpoints/flan_t5_text_tiny --text "translate English to German: The house is wonderful." \
    --generate 8 --kind cross --view matrix --query 3
# Shots that need input: the window driven by xdotool (the wheel, a key), then its own
# --screenshot-after picture. Usage: driven NAME "XDOTOOL ACTIONS ($w: the window)" FLAGS...
driven() {
    local name=$1 actions=$2
    shift 2
    xvfb-run -a -s "-screen 0 1100x700x24" bash -c '
        "$0" --size 1100x700 --screenshot-after 10 --screenshot "$1" "${@:3}" & pid=$!
        w=$(timeout 60 xdotool search --sync --name "^Headscope" | head -n 1)
        sleep 4
        eval "$2"
        wait $pid' "$app" "$out/$name.png" "$actions" "$@"
    /usr/bin/python3 -c "import sys; from PIL import Image; Image.open(sys.argv[1]).quantize(128).save(sys.argv[1], optimize=True)" \
        "$out/$name.png" 2>/dev/null || true
    echo "wrote $out/$name.png"
}
# The induction head zoomed into (five wheel notches) where the phrase comes again: every
# label in sight, the hovered cell's row and column marked on the axes.
story=(--text "$(cat assets/default_sentence.txt) And the little red hen said: who will help me?")
zoom='xdotool mousemove --window $w 530 430; for i in 1 2 3 4 5; do xdotool click 4; sleep 0.2; done; xdotool mousemove --window $w 560 400'
driven matrix-zoomed "$zoom" "${story[@]}" --layer 1 --head 0
# File > Export on that zoom: the part in sight, as SVG.
driven export "$zoom; xdotool keydown ctrl keydown e; sleep 0.15; xdotool keyup e keyup ctrl; sleep 0.5; xdotool mousemove --window \$w 282 143 click 1" \
    "${story[@]}" --layer 1 --head 0
