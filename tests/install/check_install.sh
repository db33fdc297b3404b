#!/usr/bin/env bash
# The installed layout (cmake --install): the programs, the assets, the desktop entry and
# its icon; and the installed programs reading the installed assets, not the source
# tree's. Usage: check_install.sh CMAKE BUILD_DIR
set -euo pipefail
cmake=$1
build=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
expect() {
    for file in "$@"; do
        [ -f "$prefix/$file" ] || { echo "cmake --install left out $file"; exit 1; }
    done
}
expect bin/headscope-cli share/headscope/assets/default_sentence.txt share/headscope/assets/shapes.png \
    share/headscope/assets/models/tiny-story/config.json share/headscope/assets/models/tiny-shapes/config.json
if [ -f "$build/bin/headscope" ]; then
    expect bin/headscope share/applications/headscope.desktop share/icons/hicolor/scalable/apps/headscope.svg
    grep -qx 'Exec=headscope %F' "$prefix/share/applications/headscope.desktop"
    grep -qx 'Icon=headscope' "$prefix/share/applications/headscope.desktop"
fi
unset HEADSCOPE_ASSETS
"$prefix/bin/headscope-cli" info --model builtin:tiny-story >/dev/null
# The installed assets, not the source tree's: broken there, the message names them.
echo '{' >"$prefix/share/headscope/assets/models/tiny-story/config.json"
if out=$("$prefix/bin/headscope-cli" info --model builtin:tiny-story 2>&1); then
    echo "the installed headscope-cli read the source tree's assets"
    exit 1
fi
case "$out" in
*"$prefix/share/headscope/assets/models/tiny-story/config.json"*) ;;
*) echo "unexpected message: $out"; exit 1 ;;
esac
echo "installed: programs, assets, desktop entry and icon; the assets found from bin/"
