#!/usr/bin/env bash
# Fails (exit 1), naming each line, when core/ or session/ includes a window library.
# The build holds the rooms apart (cmake/rooms.cmake: an include of a room above fails
# to compile, as does ImGui, whose headers only ui/ is given), but GLFW's and OpenGL's
# headers sit in /usr/include where any file finds them; CI (.ci/run) runs this too.
set -euo pipefail
cd "$(dirname "$0")/.."
if found=$(git grep -nE '^\s*#\s*include\s*[<"](GLFW/|GL/|imgui|backends/)' -- core session); then
    echo "check_rooms: core/ and session/ draw nothing (no GLFW, OpenGL or ImGui):"
    echo "$found"
    exit 1
fi
echo "check_rooms: core/ and session/ include no window library"
