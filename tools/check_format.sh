#!/usr/bin/env bash
# Fails (exit 1), naming each file, when clang-format would change any tracked C++ file:
# the house style is .clang-format, and CI (.ci/run) runs this before building.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (third_party/install-deps.sh)"; exit 1; }
unformatted=()
while IFS= read -r file; do
    if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then unformatted+=("$file"); fi
done < <(git ls-files '*.cpp' '*.h')
if [[ ${#unformatted[@]} -gt 0 ]]; then
    echo "check_format: clang-format would change ${#unformatted[@]} file(s); run clang-format -i on them:"
    printf '  %s\n' "${unformatted[@]}"
    exit 1
fi
echo "check_format: every C++ file follows .clang-format"
