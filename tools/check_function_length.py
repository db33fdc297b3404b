#!/usr/bin/env python3
"""Fails (exit 1) when a function in the given folders is longer than the limit.

Usage: tools/check_function_length.py [--limit N] FOLDER [FOLDER ...]

Prints `path:line: function 'name' is N lines (limit 80)` for each function whose
definition, from its first line to its closing brace, is longer than the limit. A long
function is usually several jobs; splitting it into named helpers says what each does.
.ci/run runs it next to tools/check_format.sh. Python 3 standard library only.

How it reads C++: comments, string and character literals (raw strings too) and
preprocessor lines are blanked, then braces are matched. A `{` at namespace or class
scope opens a function body when the text before it (back to the previous `;`, `{` or
`}`) has a parenthesised parameter list and is not a namespace, class, struct, union,
enum or an initialiser (`= {`). That covers definitions at column 0 or indented in a
class, `const`, `noexcept`, `override`, trailing return types, templates, and
constructors whose member-init list (with `a_(x)` or `b_{y}`) spans several lines.
Lambdas and local classes count as part of the function that holds them.
"""

import argparse
import os
import re
import sys

DEFAULT_LIMIT = 80

# Folders and files the limit does not apply to, each with why. Paths are relative to
# the repository root and match as prefixes.
ALLOWED = {
    # The measured kernels: each is one loop nest unrolled and tuned as a whole against a
    # benchmark (docs/performance.md); split into calls it is no longer what was measured.
    "core/tensor/kernels/": "measured kernels, tuned as one piece",
}

EXTENSIONS = (".cpp", ".h", ".hpp", ".cc")
SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
EXTERN_BLOCK = re.compile(r"^\s*extern\s*\"\s*\"\s*$")
IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_]")


def blank(text):
    """Returns `text` with comments, literals and preprocessor lines replaced by spaces
    (newlines kept, so offsets and line numbers stay those of the file); a string
    literal keeps its quotes so that `extern "C"` is still recognisable."""
    out = list(text)
    i = 0
    n = len(text)
    at_line_start = True

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if at_line_start and c == "#":
            # A directive, with its backslash continuations.
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            wipe(i, j)
            i = j
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not IDENTIFIER_CHAR.match(text[i - 1])):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            wipe(i + 2, end - 1)
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and re.match(r"[0-9A-Fa-f]", text[i - 1]) and i + 1 < n
                                              and re.match(r"[0-9A-Fa-f]", text[i + 1]))):
            # A string or character literal (a ' between digits is a digit separator).
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching_close(code, open_at, opener="{", closer="}"):
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == opener:
            depth += 1
        elif code[k] == closer:
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


def depth0_paren(head):
    """Index of the first `(` at bracket depth 0 in `head`, or -1."""
    depth = 0
    for k, ch in enumerate(head):
        if ch in "([":
            if ch == "(" and depth == 0:
                return k
            depth += 1
        elif ch in ")]":
            depth -= 1
    return -1


def has_depth0(head, what):
    depth = 0
    for k, ch in enumerate(head):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and head.startswith(what, k):
            return k
    return -1


def in_member_init_list(head):
    """True when `head` is `...(params) [qualifiers] : member(...), ...`: a `{` in it
    initialises a member rather than opening the body."""
    depth = 0
    closed_params = False
    for k, ch in enumerate(head):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                closed_params = True
        elif ch == ":" and depth == 0 and closed_params:
            before = head[k - 1] if k > 0 else ""
            after = head[k + 1] if k + 1 < len(head) else ""
            if before != ":" and after != ":":
                return True
    return False


def function_name(head):
    """The (qualified) name before the parameter list, e.g. `HfBertModel::HfBertModel`."""
    paren = depth0_paren(head)
    before = head[:paren].rstrip()
    m = re.search(r"((?:[A-Za-z_]\w*\s*(?:<[^<>()]*>)?\s*::\s*)*~?\s*(?:operator\s*[^\s\w(]+|operator\s+\w+|[A-Za-z_]\w*))$",
                  before)
    return re.sub(r"\s+", "", m.group(1)) if m else before.split()[-1] if before.split() else "?"


def classify(head):
    """'scope' (namespace, extern "C", class ...), 'function', or 'other' (an initialiser)."""
    stripped = re.sub(r"\b(public|private|protected)\s*:", " ", head)
    stripped = re.sub(r"^\s*template\s*<.*?>\s*(?=[A-Za-z_])", "", stripped, flags=re.S)
    if EXTERN_BLOCK.match(stripped):
        return "scope"
    paren = depth0_paren(stripped)
    keyword = SCOPE_KEYWORDS.search(stripped)
    if keyword and (paren < 0 or keyword.start() < paren) and has_depth0(stripped, "=") < 0:
        return "scope"
    if paren < 0:
        return "other"
    eq = has_depth0(stripped, "=")
    if 0 <= eq < paren and not re.search(r"\boperator\s*$", stripped[:eq]):
        return "other"
    # `= {` after the parameters: a variable initialised from a call, e.g. `X x = f() {`.
    return "function"


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def scan(code, start, end, found):
    """Collects (name, first line, last line) of the functions in code[start:end], a
    namespace or class scope."""
    head_start = start
    i = start
    while i < end:
        ch = code[i]
        if ch in ";}":
            head_start = i + 1
        elif ch == "{":
            head = code[head_start:i]
            if in_member_init_list(head) and re.search(r"[\w>]\s*$", head):
                i = matching_close(code, i) + 1   # a member's brace initialiser
                continue
            close = matching_close(code, i)
            kind = classify(head)
            if kind == "scope":
                scan(code, i + 1, close, found)
            elif kind == "function":
                # The definition's first line: past blank space and access specifiers.
                lead = re.match(r"(?:\s|\b(?:public|private|protected)\s*:)*", head)
                first = head_start + lead.end()
                name = function_name(re.sub(r"\b(public|private|protected)\s*:", " ", head))
                found.append((name, line_of(code, first), line_of(code, close)))
            i = close + 1
            head_start = i
            continue
        i += 1


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        code = blank(f.read())
    found = []
    scan(code, 0, len(code), found)
    return found


def allowed(path):
    rel = os.path.relpath(path).replace(os.sep, "/")
    return any(rel.startswith(prefix) for prefix in ALLOWED)


def source_files(folder):
    if os.path.isfile(folder):
        yield folder
        return
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(EXTENSIONS):
                yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(description="Fail when a C++ function is longer than the limit.")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="longest function in lines (default 80)")
    parser.add_argument("folders", nargs="+", help="folders (or files) of .cpp / .h files")
    args = parser.parse_args()
    too_long = 0
    for folder in args.folders:
        if not os.path.exists(folder):
            print(f"check_function_length: {folder}: no such folder", file=sys.stderr)
            return 2
        for path in source_files(folder):
            if allowed(path):
                continue
            for name, first, last in functions(path):
                lines = last - first + 1
                if lines > args.limit:
                    print(f"{path}:{first}: function '{name}' is {lines} lines (limit {args.limit})")
                    too_long += 1
    if too_long:
        print(f"check_function_length: {too_long} function(s) longer than {args.limit} lines; split each into "
              "named helpers", file=sys.stderr)
        return 1
    print(f"check_function_length: every function in {' '.join(args.folders)} is at most {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
