#!/bin/sh
# cli.sh — the command-line contract of DESIGN.md, driven through the real program:
# exit codes, one-line messages naming file/node/value, the input never written.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
DATA="$GL_SRCDIR/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glcli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run ARGS...: sets rc, out (stdout file), err (stderr file)
run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }

# --- a good model ---------------------------------------------------------------------
run info "$DATA/good_relu.onnx"
check "info exits 0" [ "$rc" -eq 0 ]
check "info lists the op" grep -q "Relu" "$tmp/out"
check "info shows the input type" grep -q "float\[2\]" "$tmp/out"

run info --json "$DATA/good_relu.onnx"
check "info --json exits 0" [ "$rc" -eq 0 ]
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    check "info --json is JSON with the contract's keys" "$GL_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
need = ["ir_version", "opsets", "producer", "inputs", "outputs", "node_count", "op_histogram", "initializer_bytes"]
missing = [k for k in need if k not in d]
assert not missing, missing
assert d["node_count"] == 1 and d["op_histogram"] == {"Relu": 1}, d
assert d["inputs"][0] == {"name": "x", "dtype": "float", "shape": [2]}, d["inputs"]
assert d["opsets"] == {"ai.onnx": 13}, d["opsets"]
' "$tmp/out"
else
    check "info --json has node_count" grep -q '"node_count": 1' "$tmp/out"
fi

# --- bad input: exit 2, one line on stderr naming the file and the thing ---------------
# file | words the message must contain (| separated)
while IFS='|' read -r file words; do
    [ -n "$file" ] || continue
    cp "$DATA/bad/$file" "$tmp/$file"
    sum_before=$(cksum <"$tmp/$file")
    run info "$tmp/$file"
    desc="bad input $file: exit 2"
    check "$desc" [ "$rc" -eq 2 ]
    check "bad input $file: exactly one line on stderr" [ "$(lines "$tmp/err")" -eq 1 ]
    check "bad input $file: names the file" grep -q "$file" "$tmp/err"
    oldifs=$IFS; IFS='|'
    for w in $words; do
        check "bad input $file: mentions $w" grep -q -- "$w" "$tmp/err"
    done
    IFS=$oldifs
    check "bad input $file: file untouched" [ "$(cksum <"$tmp/$file")" = "$sum_before" ]
    diag "$(cat "$tmp/err")"
done <<'CASES'
empty.onnx|empty
truncated.onnx|
random.onnx|
text.onnx|
cycle.onnx|cycle|cyc_a|cyc_b
missing_input.onnx|add_ghost|ghost
two_producers.onnx|'y'|first|second
dangling_output.onnx|nowhere
huge_dims.onnx|'w'
negative_dims.onnx|'w'|negative
external_escape.onnx|'w'
external_absolute.onnx|'w'
negative_type_dim.onnx|'x'
many_attributes.onnx|relu_attrs|5000 attributes
CASES

# Functions calling functions twice over would plan 2^26 bodies: refused, quickly.
cp "$DATA/bad/function_fanout.onnx" "$tmp/function_fanout.onnx"
run run "$tmp/function_fanout.onnx"
check "function fan-out: exit 2" [ "$rc" -eq 2 ]
check "function fan-out: one line naming the expansion" sh -c \
    "[ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q 'expand to more than' '$tmp/err'"

run info "$tmp/does-not-exist.onnx"
check "missing file: exit 2" [ "$rc" -eq 2 ]
check "missing file: named" grep -q "does-not-exist.onnx" "$tmp/err"

# Without sanitizers, a hostile size must fail under a 1 GB address-space cap too.
if [ -z "$GL_SANITIZED" ]; then
    (ulimit -v 1048576; "$GL" info "$tmp/huge_dims.onnx" >/dev/null 2>&1)
    check "huge dims refused without allocating (1 GB cap)" [ $? -eq 2 ]
else
    skip "address-space cap under sanitizers"
fi

# --- optimize: round trip, atomic write, never the input --------------------------------
cp "$DATA/good_relu.onnx" "$tmp/m.onnx"
sum_before=$(cksum <"$tmp/m.onnx")
run optimize "$tmp/m.onnx" -o "$tmp/out.onnx" --passes none
check "optimize --passes none exits 0" [ "$rc" -eq 0 ]
check "optimize wrote the output" [ -s "$tmp/out.onnx" ]
check "optimize left the input alone" [ "$(cksum <"$tmp/m.onnx")" = "$sum_before" ]
run info "$tmp/out.onnx"
check "the output loads" [ "$rc" -eq 0 ]
check "no temp files left" [ -z "$(ls "$tmp" | grep '\.tmp\.')" ]

run optimize "$tmp/m.onnx" -o "$tmp/m.onnx"
check "optimize refuses to overwrite its input" [ "$rc" -eq 2 ]
check "...and says so in one line" [ "$(lines "$tmp/err")" -eq 1 ]
check "...input still intact" [ "$(cksum <"$tmp/m.onnx")" = "$sum_before" ]
(cd "$tmp" && "$GL" optimize m.onnx -o ./m.onnx >/dev/null 2>&1)
check "optimize refuses the input under another spelling" [ $? -eq 2 ]

run optimize "$tmp/m.onnx" -o "$tmp/no/such/dir/out.onnx"
check "unwritable output: exit 2" [ "$rc" -eq 2 ]
check "unwritable output: named" grep -q "no/such/dir" "$tmp/err"

run optimize "$tmp/m.onnx" -o "$tmp/o2.onnx" --passes toposort --json
check "optimize --json exits 0" [ "$rc" -eq 0 ]
check "optimize --json lists the pass" grep -q '"name": "toposort"' "$tmp/out"

run optimize "$DATA/bad/cycle.onnx" -o "$tmp/never.onnx"
check "optimize on a cycle: exit 2" [ "$rc" -eq 2 ]
check "optimize on a cycle: no output" [ ! -e "$tmp/never.onnx" ]

# --- usage errors -------------------------------------------------------------------------
for args in "optimize $tmp/m.onnx" "optimize $tmp/m.onnx -o $tmp/x.onnx --passes bogus" \
            "optimize $tmp/m.onnx -o $tmp/x.onnx --passes toposort:-1" \
            "optimize $tmp/m.onnx -o $tmp/x.onnx --set nope.x=1" "info" "info --frobnicate x" \
            "--frobnicate"; do
    # shellcheck disable=SC2086
    run $args
    check "usage error exits 2: graphlab $args" [ "$rc" -eq 2 ]
done
run optimize "$tmp/m.onnx" -o "$tmp/x.onnx" --set load.freeze-inputs=1
check "--set load.freeze-inputs=1 accepted" [ "$rc" -eq 0 ]
run --help
check "--help exits 0 and lists the commands" sh -c "[ $rc -eq 0 ] && grep -q optimize '$tmp/out'"

# --- the bundled examples ------------------------------------------------------------------
for m in "$GL_SRCDIR"/examples/*/model.onnx; do
    [ -e "$m" ] || continue
    name=$(basename "$(dirname "$m")")
    run optimize "$m" -o "$tmp/$name.onnx" --passes toposort
    check "example $name: optimize exits 0" [ "$rc" -eq 0 ]
    run info --json "$tmp/$name.onnx"
    check "example $name: optimized copy loads" [ "$rc" -eq 0 ]
done

# --- export: every step as files, decisions.json, one self-contained index.html -----------
ex="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
run export "$ex" -d "$tmp/exp" --passes toposort,dce,cse
check "export exits 0" [ "$rc" -eq 0 ]
for step in 00-input 01-toposort 02-dce 03-cse; do
    for ext in dot svg onnx diff.txt; do
        check "export wrote $step.$ext" [ -s "$tmp/exp/$step.$ext" ]
    done
    run info "$tmp/exp/$step.onnx"
    check "export: $step.onnx loads" [ "$rc" -eq 0 ]
done
check "export: the input's diff says nothing changed" grep -q "no changes" "$tmp/exp/00-input.diff.txt"
check "export wrote decisions.json" [ -s "$tmp/exp/decisions.json" ]
check "export wrote index.html" [ -s "$tmp/exp/index.html" ]
check "index.html loads nothing from the network" \
    sh -c "! grep -Eo '(src|href)=\"[a-z]+://[^\"]*' '$tmp/exp/index.html' | grep -q ."
check "index.html inlines the graphs" grep -q "<svg" "$tmp/exp/index.html"
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    check "decisions.json: one entry per step, ids in order" "$GL_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["label"] for s in d["steps"]] == ["00-input", "01-toposort", "02-dce", "03-cse"], d["steps"]
assert [x["id"] for x in d["decisions"]] == list(range(len(d["decisions"])))
for s in d["steps"]:
    for i in s["decisions"]:
        assert d["decisions"][i]["step"] == s["step"]
' "$tmp/exp/decisions.json"
    check "every exported .onnx passes onnx.checker" "$GL_PYTHON" -c '
import glob, onnx, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.onnx")):
    onnx.checker.check_model(onnx.load(f), full_check=True)
' "$tmp/exp"
    check "every exported .svg is well-formed XML" "$GL_PYTHON" -c '
import glob, sys, xml.etree.ElementTree as ET
for f in sorted(glob.glob(sys.argv[1] + "/*.svg")):
    ET.parse(f)
' "$tmp/exp"
fi
run export "$ex" -d "$tmp/new/parents//exp" --passes toposort
check "export -d creates missing parent folders (mkdir -p)" [ -s "$tmp/new/parents/exp/01-toposort.onnx" ]
: >"$tmp/plainfile"
run export "$ex" -d "$tmp/plainfile/exp" --passes toposort
check "export -d under a file: exit 2, naming it" sh -c "[ $rc -eq 2 ] && grep -q 'plainfile: exists and is not a folder' '$tmp/err'"
run export "$DATA/bad/cycle.onnx" -d "$tmp/exp-bad"
check "export of a bad model: exit 2" [ "$rc" -eq 2 ]
run export "$ex"
check "export without -d: exit 2" [ "$rc" -eq 2 ]

# --- optimize --explain / --json carry the decisions --------------------------------------
run optimize "$GL_SRCDIR/examples/transformer_block/model.onnx" -o "$tmp/tb.onnx" --passes cse,dce --explain
check "optimize --explain exits 0" [ "$rc" -eq 0 ]
check "optimize --explain lists decisions per pass" grep -q "01-cse: [0-9]* decision" "$tmp/out"
run optimize "$GL_SRCDIR/examples/transformer_block/model.onnx" -o "$tmp/tb.onnx" --passes cse,dce --json
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    check "optimize --json: passes and decisions agree" "$GL_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [p["name"] for p in d["passes"]] == ["cse", "dce"], d["passes"]
assert sum(p["decisions"] for p in d["passes"]) == len(d["decisions"])
for p in d["passes"]:
    applied = [x for x in d["decisions"] if x["step"] == p["step"] and x["verdict"] == "applied"]
    assert len(applied) == p["rewrites"], (p, len(applied))
' "$tmp/out"
fi

tap_done
