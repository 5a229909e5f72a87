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

# The op column is as wide as its longest op (a fused group's kind is long), so every
# count starts in one column (issue 24).
run optimize "$GL_SRCDIR/examples/conv_nhwc/model.onnx" -o "$tmp/fused.onnx"
run info "$tmp/fused.onnx"
check "info lists the fused groups by kind" grep -q "^  graphlab.fused:FusedNhwcConvRelu  *2$" "$tmp/out"
check "info's op counts line up under long op names" \
    sh -c "awk '/^ops\$/ { o = 1; next } o { print length(\$0) - length(\$NF) }' '$tmp/out' |
           sort -u | wc -l | grep -qx 1"

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

# --- messages: the exact line on stderr, and the exit code ---------------------------------
# exit | the stderr line's text (fixed string) | arguments
m="$tmp/m.onnx"
while IFS='|' read -r code text args; do
    [ -n "$code" ] || continue
    eval "set -- $args"
    run "$@"
    check "graphlab $args: exit $code" [ "$rc" -eq "$code" ]
    check "graphlab $args: says '$text'" grep -qF -- "$text" "$tmp/err"
    [ "$rc" -eq "$code" ] && grep -qF -- "$text" "$tmp/err" || diag "$(cat "$tmp/err")"
done <<TABLE
2|graphlab: unknown command 'foo' (commands: info, optimize, export, run, profile, bisect, conformance; or a MODEL file; see graphlab --help)|foo
2|graphlab: unknown command 'optimise' (commands: info,|optimise "$m" -o "$tmp/x.onnx"
2|$tmp/nothing-here: cannot open|"$tmp/nothing-here"
2|foo.onnx: cannot open|foo.onnx
2|./foo: cannot open|./foo
2|graphlab optimize: --set: 'fusion.bogus' is not an option of pass 'fusion' (its options: exact-shapes, units, probe, measure, veto, force, fault)|optimize "$m" -o "$tmp/x.onnx" --set fusion.bogus=1
2|graphlab run: --set: 'load.x' is not an option of 'load' (its options: freeze-inputs)|run "$m" --set load.x=1
2|graphlab run: --set: 'nope.x' is not an option of any pass; no pass 'nope' (the keys: toposort, shape-inference, constant-folding, cse, dce, transpose-push,|run "$m" --set nope.x=1
2|graphlab export: --passes: unknown pass 'bogus' (passes: toposort, shape-inference,|export "$m" -d "$tmp/x" --passes bogus
2|; alone: all, all:K or none)|export "$m" -d "$tmp/x" --passes bogus
2|graphlab optimize: --passes: 'all:x': the rewrite budget after ':' must be a whole number >= 0|optimize "$m" -o "$tmp/x.onnx" --passes all:x
2|graphlab optimize: --passes: 'all:-1': the rewrite budget|optimize "$m" -o "$tmp/x.onnx" --passes all:-1
2|graphlab run: --threads '1024' is over the limit of 256 (the larger of 256 and the number of CPUs)|run "$m" --backend dnnl --threads 1024
2|graphlab profile: --threads '100000' is over the limit of|profile "$m" --threads 100000
0|graphlab run: passes: none (the model as loaded); inputs random (seed 0x6772617068; no --data)|run "$m"
0|graphlab run: passes (rewrites): toposort 0, dce 0; 0 in all; inputs random (seed 0x6772617068; no --data)|run "$m" --passes toposort,dce
0|graphlab run: passes (rewrites): transpose-push 4; 4 in all; inputs from $GL_SRCDIR/examples/conv_nhwc/test_data_set_0|run "$GL_SRCDIR/examples/conv_nhwc/model.onnx" --passes transpose-push --data "$GL_SRCDIR/examples/conv_nhwc/test_data_set_0"
0|dce 0, patterns 0, layout 1; 5 in all;|run "$GL_SRCDIR/examples/conv_nhwc/model.onnx" --passes all:5
TABLE
# The workbench's environment, checked at start (piped, it prints the summary): read whole
# (GRAPHLAB_SET was cut at 1023 bytes) or refused with one line (GRAPHLAB_EXPORT_DIR longer
# than the workbench keeps was cut, and the export written into the cut path).
pad=$(printf 'load.freeze-inputs=0 %.0s' $(seq 60)) # 1260 bytes of valid settings
GRAPHLAB_SET="$pad" run "$m"
check "GRAPHLAB_SET of ${#pad} valid bytes: the summary, exit 0" sh -c "[ $rc -eq 0 ] && grep -q Relu '$tmp/out'"
GRAPHLAB_SET="$pad nope.x=1" run "$m"
check "GRAPHLAB_SET with a bad setting past byte 1023: exit 2" [ "$rc" -eq 2 ]
check "...one line naming the variable and the setting" sh -c "[ $(lines "$tmp/err") -eq 1 ] &&
    grep -qF \"graphlab: GRAPHLAB_SET: \" '$tmp/err' && grep -qF \"'nope.x'\" '$tmp/err'"
long=$(printf "$tmp/%01100d" 0)
GRAPHLAB_EXPORT_DIR="$long" run "$m"
check "GRAPHLAB_EXPORT_DIR of ${#long} bytes: exit 2" [ "$rc" -eq 2 ]
check "...one line naming it and the limit" sh -c "[ $(lines "$tmp/err") -eq 1 ] &&
    grep -qF 'graphlab: GRAPHLAB_EXPORT_DIR is ${#long} bytes long; the workbench takes a folder of at most 1023 bytes' '$tmp/err'"
long=$(printf "$tmp/%0$((1023 - ${#tmp} - 1))d" 0)
GRAPHLAB_EXPORT_DIR="$long" run "$m"
check "GRAPHLAB_EXPORT_DIR of ${#long} bytes: the summary, exit 0" sh -c "[ $rc -eq 0 ] && grep -q Relu '$tmp/out'"

# What run says goes to stderr: stdout is still the outputs, first line first.
run run "$m"
check "run: stdout starts with the output's line" sh -c "head -n 1 '$tmp/out' | grep -qx 'y: float\[2\]'"
check "run: one line on stderr" [ "$(lines "$tmp/err")" -eq 1 ]

# --- --version, and COMMAND --help from the command's own table --------------------------
version=$(sed -n 's/^AC_INIT(\[graphlab\], \[\([^]]*\)\].*/\1/p' "$GL_SRCDIR/configure.ac")
for args in --version version "run --version" "info --version" "conformance --version"; do
    # shellcheck disable=SC2086
    run $args
    check "graphlab $args: exit 0, 'graphlab $version'" \
        sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = 'graphlab $version' ]"
done
for cmd in info optimize export run profile bisect conformance; do
    run "$cmd" --help
    check "$cmd --help: exit 0, its own usage first" \
        sh -c "[ $rc -eq 0 ] && head -n 1 '$tmp/out' | grep -q '^usage: graphlab $cmd '"
    check "$cmd --help: not the general help" sh -c "! grep -q '^commands:' '$tmp/out'"
    # Every option the help lists is one the parser takes (unknown: exit 2 before --help).
    # "--name" alone, "--name=1" for one with a value (its VALUE, one space after it).
    opts=$(sed -n 's/^  \(-[a-z], \)\{0,1\}--\([a-z-]*\)\( [^ ][^ ]*\)\{0,1\}\(  .*\)\{0,1\}$/--\2\3/p' \
        "$tmp/out" | sed 's/ .*/=1/')
    check "$cmd --help lists options" [ -n "$opts" ]
    bad=
    for o in $opts; do
        "$GL" "$cmd" "$o" --help >/dev/null 2>"$tmp/err2"
        if grep -q "unknown option\|needs a value" "$tmp/err2"; then bad="$bad $o"; fi
    done
    check "$cmd --help: every listed option is parsed ($opts)" [ -z "$bad" ]
    [ -z "$bad" ] || diag "not parsed:$bad"
done
run help run
check "graphlab help run: run's help" sh -c "[ $rc -eq 0 ] && head -n 1 '$tmp/out' | grep -q '^usage: graphlab run '"
run run --help
for o in backend compare intermediates save-tensors max-iterations unfused data passes set; do
    check "run --help: --$o with its line" grep -q "^  --$o " "$tmp/out"
done
run optimize --help
check "optimize --help: -o with its line" grep -q "^  -o, --output OUT.onnx  *where the result goes" "$tmp/out"
run --help
check "--help: says what all:K is" grep -q "all:K is the default" "$tmp/out"
check "--help: lists each pass's --set options" grep -q "set fusion.units=V" "$tmp/out"

# --- all:K: the first K rewrites of the default pipeline, counted over all its steps -------
tb="$GL_SRCDIR/examples/transformer_block/model.onnx"
cn="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
run optimize "$cn" -o "$tmp/allk.onnx" --passes all:2
run optimize "$cn" -o "$tmp/list.onnx" --passes toposort,shape-inference,constant-folding,cse,dce,transpose-push:2
check "all:2 makes the model of the list that stops at the 2nd rewrite" cmp -s "$tmp/allk.onnx" "$tmp/list.onnx"
check "all:2: the last step is the one with the 2nd rewrite" grep -q "^06-transpose-push-K2 " "$tmp/out"
run optimize "$tb" -o "$tmp/all.onnx" --passes all
run optimize "$tb" -o "$tmp/allbig.onnx" --passes all:100000
check "all:K past the end is all" cmp -s "$tmp/all.onnx" "$tmp/allbig.onnx"
run optimize "$tb" -o "$tmp/all0.onnx" --passes all:0
check "all:0 runs no step" sh -c "[ $rc -eq 0 ] && ! grep -q '^01-' '$tmp/out'"
if [ -n "$GL_PYTHON" ] && [ "$GL_PYTHON" != none ]; then
    for k in 1 7 26 30; do
        run optimize "$tb" -o "$tmp/allk.onnx" --passes "all:$k" --json
        check "all:$k: $k rewrites in all, the last step stopped by the budget" "$GL_PYTHON" -c '
import json, sys
d, k = json.load(open(sys.argv[1])), int(sys.argv[2])
assert sum(p["rewrites"] for p in d["passes"]) == k, d["passes"]
assert d["passes"][-1]["budget"] == d["passes"][-1]["rewrites"], d["passes"][-1]
assert all(p["budget"] is None for p in d["passes"][:-1]), d["passes"]
' "$tmp/out" "$k"
    done
fi
run bisect "$cn" --set transpose-push.fault=2
check "bisect names the all:K that makes the first bad model" grep -q "^  or: graphlab run .* --passes all:2 --set transpose-push.fault=2$" "$tmp/out"

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
    # a veto is a field of the record, not only words in its reason
    run optimize "$GL_SRCDIR/examples/conv_nhwc/model.onnx" -o "$tmp/cn.onnx" --json \
        --set transpose-push.veto=2
    check "optimize --json: the vetoed record says vetoed, no other does" "$GL_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
flagged = [(x["id"], x.get("vetoed"), x.get("forced")) for x in d["decisions"]
           if x.get("vetoed") or x.get("forced")]
assert flagged == [(2, True, None)], flagged
' "$tmp/out"
fi

# --- defaults a newcomer expects (issue 24) -------------------------------------------------
# Which passes a command ran, from its own words: run says it on stderr ("passes: none" or
# "passes (rewrites): ..."), profile's fused/unfused runs exist only with a fusion step.
# command args | what stderr or stdout must hold (grep -E) | what it must not
CONV="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
if "$GL" run "$CONV" --backend dnnl >/dev/null 2>&1; then
    while IFS='|' read -r args want refuse; do
        [ -n "$args" ] || continue
        # shellcheck disable=SC2086 # args is a list
        run $args
        check "defaults: $args: exit 0" [ "$rc" -eq 0 ]
        [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err")"
        check "defaults: $args: $want" grep -qE -- "$want" "$tmp/out" "$tmp/err"
        [ -z "$refuse" ] ||
            check "defaults: $args: not $refuse" sh -c "! grep -qE -- '$refuse' '$tmp/out' '$tmp/err'"
    done <<CASES
run $CONV|passes: none \(the model as loaded\)|fusion [0-9]
run $CONV --backend fused|passes \(rewrites\): .*fusion 2|passes: none
run $CONV --backend unfused|passes \(rewrites\): .*fusion 2|passes: none
run $CONV --compare fused|passes \(rewrites\): .*fusion 2|passes: none
run $CONV --backend fused --passes all:5|passes \(rewrites\): toposort|fusion 2
profile $CONV --reps 1 --warmup 0|^total fused .*whole run median|^total dnnl
profile $CONV --reps 1 --warmup 0|^total unfused .*whole run median|
profile $CONV --reps 1 --warmup 0 --passes none|^total dnnl .*whole run median|^total fused
CASES
    run run "$CONV" --backend fused --passes none
    check "defaults: --backend fused --passes none: exit 2, the passes named" \
        sh -c "[ $rc -eq 2 ] && grep -qF \"which --passes 'none' does not run\" '$tmp/err'"
else
    skip "defaults of run and profile: built without oneDNN"
fi

tap_done
