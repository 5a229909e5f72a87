#!/bin/sh
# escape.sh — names from a model (or a path, or an argument) never reach the terminal
# raw: no control byte but LF (and TAB), no C1 or bidirectional control, nothing that is
# not UTF-8, on stdout, on stderr or in the files export writes; an error stays one line.
# The fixtures' names carry ESC [2J, ESC ]0;, BEL, CR, LF, U+202E and the bytes FF FE
# (tests/data/make_hostile_attrs.py).
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
DATA="$GL_SRCDIR/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glesc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }
# clean FILE: nothing in it a terminal would act on or show out of order
clean() {
    ! LC_ALL=C grep -qP \
        '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]' \
        "$1" && ! LC_ALL=C.UTF-8 grep -qaxv '.*' "$1"
}
has() { grep -qF -- "$2" "$1"; }

if ! printf 'a\033b\n' | LC_ALL=C grep -qP '\x1b' 2>/dev/null; then
    echo "1..0 # SKIP grep -P is not available"
    exit 0
fi
# the check itself: it must see what it is there to see
rejects() {
    printf "$2" >"$tmp/raw"
    if clean "$tmp/raw"; then not_ok "clean sees $1"; else ok "clean sees $1"; fi
}
rejects "a raw ESC" 'a\033[2Jb\n'
rejects "a raw CR" 'a\rb\n'
rejects "a raw U+202E" 'x\342\200\256y\n'
rejects "a raw C1 CSI" 'x\302\233y\n'
rejects "bytes that are not UTF-8" 'y_\377\376\n'

M="$DATA/hostile_names.onnx"
BAD="$DATA/bad/hostile_names_attr.onnx"

run info "$M"
check "info: exit 0" [ "$rc" -eq 0 ]
check "info: stdout clean" clean "$tmp/out"
check "info: the graph name escaped" has "$tmp/out" 'graph\x1B[31mred\x0A: 3 nodes'
check "info: a bidi override escaped" has "$tmp/out" 'x\u{202E}evil float[2,3]'
check "info: bytes that are not UTF-8 escaped" has "$tmp/out" 'y_\xFF\xFE'

run info --json "$M"
check "info --json: exit 0" [ "$rc" -eq 0 ]
check "info --json: stdout clean" clean "$tmp/out"
check "info --json: controls as JSON escapes" has "$tmp/out" '"graph_name": "graph\u001b[31mred\n"'
check "info --json: bidi as a JSON escape" has "$tmp/out" '"name": "x\u202eevil"'
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    check "info --json: valid JSON with the names as they are" "$GL_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["graph_name"] == "graph\x1b[31mred\n", d["graph_name"]
assert d["inputs"][0]["name"] == "x\u202eevil"
assert d["outputs"][0]["name"] == "y_\ufffd\ufffd"
' "$tmp/out"
fi

run run "$M"
check "run: exit 0" [ "$rc" -eq 0 ]
check "run: stdout clean" clean "$tmp/out"
check "run: the output named, escaped" has "$tmp/out" 'y_\xFF\xFE: float[2,3]'

run run "$M" --plan
check "run --plan: stdout clean" clean "$tmp/out"
check "run --plan: the nodes named, escaped" has "$tmp/out" "'tA\\x1B[2J\\x07'"

run optimize "$M" -o "$tmp/o.onnx" --explain
check "optimize --explain: exit 0" [ "$rc" -eq 0 ]
check "optimize --explain: stdout clean" clean "$tmp/out"
check "optimize --explain: the decision names the nodes, escaped" \
    has "$tmp/out" "Transpose 'tB\\x0D\\x0AFAKE: all good' follows Transpose 'tA\\x1B[2J\\x07'"
check "optimize --explain: every decision on one line" [ "$(grep -c 'FAKE: all good' "$tmp/out")" -eq 1 ]
run optimize "$M" -o "$tmp/o.onnx" --json
check "optimize --json: stdout clean" clean "$tmp/out"

run export "$M" -d "$tmp/exp"
check "export: exit 0" [ "$rc" -eq 0 ]
for f in "$tmp"/exp/*.txt "$tmp"/exp/*.dot "$tmp"/exp/*.svg "$tmp"/exp/*.json "$tmp"/exp/*.html; do
    check "export: $(basename "$f") clean" clean "$f"
done
# (the diff quotes values its own reversible way: \x1b, \n; util/escape.h for the rest)
check "export: the diff names the nodes, escaped" \
    has "$tmp/exp/06-transpose-push.diff.txt" "Transpose 'tA\\x1b[2J\\x07'"
check "export: the diff escapes a bidi override" \
    has "$tmp/exp/06-transpose-push.diff.txt" "Relu 'relu\\u{202E}evil'"

# An error on such a node: exit 2, one line, escaped, whatever the command.
for cmd in info run "optimize -o $tmp/never.onnx" "export -d $tmp/never"; do
    # shellcheck disable=SC2086
    run $cmd "$BAD"
    check "$cmd on a bad hostile node: exit 2" [ "$rc" -eq 2 ]
    check "$cmd on a bad hostile node: one line" [ "$(lines "$tmp/err")" -eq 1 ]
    check "$cmd on a bad hostile node: stderr clean" clean "$tmp/err"
    check "$cmd on a bad hostile node: the node named, escaped" \
        has "$tmp/err" "node 'tr\\x1B[2J\\x0D\\x0A\\u{202E}' (Transpose): attribute 'perm' is floats"
done

# Paths and arguments are the user's, but a path can come from anywhere (a download).
hostile_path=$(printf '%s/m\033[2J\r\n.onnx' "$tmp")
cp "$M" "$hostile_path"
run info "$hostile_path"
check "a hostile path: stdout clean" clean "$tmp/out"
check "a hostile path: shown escaped" has "$tmp/out" 'm\x1B[2J\x0D\x0A.onnx'
run info "$hostile_path.missing"
check "a hostile missing path: one line" [ "$(lines "$tmp/err")" -eq 1 ]
check "a hostile missing path: stderr clean" clean "$tmp/err"
run info "$(printf -- '--\033[2J')"
check "a hostile option: stderr clean" clean "$tmp/err"
check "a hostile option: named, escaped" has "$tmp/err" '\x1B[2J'
run "$(printf -- '-\033]0;x\007')"
check "a hostile top-level option: stderr clean" clean "$tmp/err"

# conformance: case names are folder names, reasons are load errors.
case_dir=$(printf '%s/conf/test_\033[2J\342\200\256x' "$tmp")
mkdir -p "$case_dir"
cp "$BAD" "$case_dir/model.onnx"
run conformance "$tmp/conf"
check "conformance: a failing hostile case: exit 1" [ "$rc" -eq 1 ]
check "conformance: stdout clean" clean "$tmp/out"
check "conformance: one line per case and the count" [ "$(lines "$tmp/out")" -eq 2 ]
check "conformance: the case named, escaped" has "$tmp/out" 'FAIL test_\x1B[2J\u{202E}x: '
tap_done
