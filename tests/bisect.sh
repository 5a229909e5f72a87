#!/bin/sh
# bisect.sh — `graphlab bisect` on the command line: a rewrite corrupted by the fault
# switch (--set PASS.fault=K) is named with its decision and exit 1, a pipeline that
# breaks nothing says so with exit 0, bad usage and bad vetoes exit 2; the --passes list
# it prints makes the first bad model (and one rewrite fewer does not); `--set
# PASS.veto=ID` shows in --explain. A 4-conv NHWC net: the in-tree nhwc_convnet_mini, and
# the shared nhwc_convnet when ../shared exists.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glbisect.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# expect NAME CODE TEXT ARGS...: `graphlab ARGS` exits CODE with TEXT in its stdout+stderr.
expect() {
    name=$1 code=$2 text=$3
    shift 3
    "$GL" "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$code" ] && grep -qF -- "$text" "$tmp/out"; then
        ok "$name"
    else
        not_ok "$name (exit $rc, wanted $code and '$text')"
        sed 's/^/# /' "$tmp/out"
    fi
}

C="$EX/conv_nhwc/model.onnx"
CD="$EX/conv_nhwc/test_data_set_0"
T="$EX/transformer_block/model.onnx"
# name | exit | text | arguments
while IFS='|' read -r name code text args; do
    [ -n "$name" ] || continue
    eval "set -- $args"
    expect "$name" "$code" "$text" "$@"
done <<TABLE
nothing breaks|0|no rewrite changes the outputs (18 rewrites in 16 steps|bisect "$C"
nothing breaks, --data|0|inputs from --data|bisect "$C" --data "$CD"
the last rewrite|1|first bad decision: #16 fusion conv-activation (step 15, rewrite 2 of 2) nodes: conv2, relu2|bisect "$C" --set fusion.fault=2
the rewrite before it|1|first bad decision: #15 fusion conv-activation (step 15, rewrite 1 of 2) nodes: conv1, relu1|bisect "$C" --set fusion.fault=1
a push in the first transpose-push|1|first bad decision: #3 transpose-push push-through-Add (step 6, rewrite 2 of 4)|bisect "$C" --data "$CD" --set transpose-push.fault=2
its record|1|#3    APPLIED  push-through-Add: Transpose 'channel_scale/Transpose'|bisect "$C" --set transpose-push.fault=2
what differs|1|output 'features': max_abs|bisect "$C" --set layout.fault=1
a pass without records|1|first bad rewrite: shape-inference (step 2, rewrite 5 of 25; the pass keeps no record|bisect "$T" --set shape-inference.fault=5
a fault before a Softmax is none (units apart: q.k alone)|0|no rewrite changes the outputs|bisect "$T" --set fusion.units=0 --set fusion.fault=4
the same fault in the attention unit|1|first bad decision: #30 fusion attention (step 15, rewrite 4 of 6)|bisect "$T" --set fusion.fault=4
--passes limits the search|0|no rewrite changes the outputs (4 rewrites in 6 steps|bisect "$C" --passes toposort,shape-inference,constant-folding,cse,dce,transpose-push --set fusion.fault=1
no model|2|expected one MODEL|bisect
a missing model|2|cannot open|bisect "$tmp/none.onnx"
an unknown pass|2|unknown pass 'nosuch'|bisect "$C" --passes nosuch
a veto of another pass|2|decision #3 is transpose-push 'push-through-Add' (applied), not a rewrite of cse|bisect "$C" --set cse.veto=3
a veto past the end|2|there is no decision #99|optimize "$C" -o "$tmp/o.onnx" --set fusion.veto=99
a veto in --explain|0|#3    refused  push-through-Add: vetoed (--set transpose-push.veto=3)|optimize "$C" -o "$tmp/o.onnx" --explain --set transpose-push.veto=3
help: its own, with each option's line|0|  --data DIR |bisect --help
help: --backend and --slower|0|  --slower PCT |bisect --help
a fused group's fault, on fused|1|first bad decision: #15 fusion conv-activation (step 15, rewrite 1 of 2) nodes: conv1, relu1|bisect "$C" --backend fused --set dnnl.fault=FusedNhwcConvRelu_1
the second group's fault, on fused|1|first bad decision: #16 fusion conv-activation (step 15, rewrite 2 of 2) nodes: conv2, relu2|bisect "$C" --backend fused --set dnnl.fault=FusedNhwcConvRelu_2
the same fault, on the reference|0|no rewrite changes the outputs (18 rewrites in 16 steps|bisect "$C" --set dnnl.fault=FusedNhwcConvRelu_1
the third group of six: named as in the full pipeline|1|first bad decision: #29 fusion matmul-add (step 15, rewrite 3 of 6)|bisect "$T" --backend fused --set dnnl.fault=FusedMatMulAdd_3
a node oneDNN runs from the start|1|the input model already differs on dnnl, before any rewrite|bisect "$C" --backend dnnl --set dnnl.fault=conv2
unfused: the pipeline without fusion|0|no rewrite changes the outputs (18 rewrites in 15 steps|bisect "$C" --backend unfused --set dnnl.fault=FusedNhwcConvRelu_1
the backend in the answer|1|(backend fused)|bisect "$C" --backend fused --data "$CD" --set dnnl.fault=FusedNhwcConvRelu_1
fused without fusion in --passes|2|fused and unfused differ by the fusion pass|bisect "$C" --backend fused --passes toposort
an unknown backend|2|--backend 'tpu' is not ref, dnnl, fused or unfused|bisect "$C" --backend tpu
a negative --slower|2|--slower '-5' is not a percentage above 0|bisect "$C" --slower -5
a --slower that is no number|2|--slower 'x' is not a percentage above 0|bisect "$C" --slower x
an empty dnnl.fault|2|--set dnnl.fault: expected a NAME|bisect "$C" --set dnnl.fault=
TABLE

# Progress lines go to stderr for a person at a terminal, or when asked; a script that
# reads stderr sees nothing there but an error, as from every command.
export GRAPHLAB_PROGRESS=1
expect "progress on stderr with GRAPHLAB_PROGRESS=1" 1 \
    "bisect: rewrite 9 of 19 (transpose-push 4/8, step 12): same outputs" \
    bisect "$C" --set fusion.fault=1
unset GRAPHLAB_PROGRESS
"$GL" bisect "$C" --set fusion.fault=1 >"$tmp/out" 2>"$tmp/err"
check "no progress when stderr is not a terminal" [ ! -s "$tmp/err" ]

# The printed --passes makes the first bad model; one rewrite fewer is still good.
"$GL" bisect "$C" --data "$CD" --set transpose-push.fault=2 2>/dev/null >"$tmp/found"
passes=$(sed -n 's/.*that model: graphlab run .* --passes \([^ ]*\).*/\1/p' "$tmp/found")
check "the printed list is PASS:K" [ "${passes##*,}" = "transpose-push:2" ]
"$GL" run "$C" --data "$CD" --passes "$passes" --set transpose-push.fault=2 >/dev/null 2>&1
check "that model differs from the expected outputs" [ $? -eq 1 ]
"$GL" run "$C" --data "$CD" --passes "${passes%:2}:1" --set transpose-push.fault=2 >/dev/null 2>&1
check "one rewrite fewer does not" [ $? -eq 0 ]

# The reproduction lines carry every option they need, quoted (a model and a data folder
# with spaces here): pasted, each exits 1 where bisect found something. Without --data a
# oneDNN line compares with the reference (--compare ref).
mkdir -p "$tmp/my data"
cp "$C" "$tmp/my model.onnx"
cp "$CD"/*.pb "$tmp/my data/"
M="$tmp/my model.onnx"
while IFS='|' read -r name args; do
    [ -n "$name" ] || continue
    eval "set -- $args"
    "$GL" bisect "$@" >"$tmp/found" 2>/dev/null
    rc=$?
    sed -n 's/^  \(that model\|or\): graphlab //p' "$tmp/found" >"$tmp/lines"
    n=0 bad=0
    while read -r line; do
        n=$((n + 1))
        eval "\"\$GL\" $line" >"$tmp/repro" 2>&1
        r=$?
        [ "$r" -eq 1 ] || { bad=1; echo "# exit $r: graphlab $line"; sed 's/^/#   /' "$tmp/repro"; }
    done <"$tmp/lines"
    good=0
    [ "$rc" -eq 1 ] && [ "$n" -ge 1 ] && [ "$bad" -eq 0 ] && good=1
    check "reproduction lines exit 1: $name ($n lines)" [ "$good" -eq 1 ]
done <<TABLE
fused, random inputs|"$M" --backend fused --set dnnl.fault=FusedNhwcConvRelu_1
fused, --data, tolerances|"$M" --backend fused --data "$tmp/my data" --set dnnl.fault=FusedNhwcConvRelu_1 --atol 3e-4 --rtol 0.01
ref, --data, a pass's fault|"$M" --data "$tmp/my data" --set transpose-push.fault=2
dnnl before any rewrite|"$M" --backend dnnl --set dnnl.fault=conv2
TABLE
# --dim (a NAME the model's inputs have: conv_nhwc has no symbolic dim, and a NAME no
# input has is refused) is carried into the lines too.
"$GL" bisect "$EX/transformer_block/model.onnx" --set constant-folding.fault=2 --dim seq=2 \
    >"$tmp/found" 2>/dev/null
check "bisect --dim seq=2: exit 1, the lines carry --dim" sh -c "[ $? -eq 1 ] &&
    grep -q -e '^  that model: graphlab run .* --dim seq=2\$' '$tmp/found'"
"$GL" bisect "$M" --backend fused --data "$tmp/my data" --set dnnl.fault=FusedNhwcConvRelu_1 \
    --atol 3e-4 >"$tmp/found" 2>/dev/null
check "the line quotes what needs it and keeps the numbers short" \
    grep -qF -- "run '$tmp/my model.onnx' --passes all:14 --backend fused --data '$tmp/my data' --set dnnl.fault=FusedNhwcConvRelu_1 --atol 0.0003" "$tmp/found"

# --slower finds the group an injected 20 ms delay follows. Not a timing assertion: the
# delay is far above any noise; when the machine is too busy to say, bisect refuses (exit
# 2, naming the noise) and the test skips. One thread: with two, the input model's run
# after each sleep waits for OpenMP's sleeping second thread, noise enough to skip always.
"$GL" bisect "$C" --slower 50 --threads 1 --set dnnl.delay=FusedNhwcConvRelu_1 >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "timing noise" "$tmp/out"; then
    skip "--slower: the machine is too noisy now ($(cat "$tmp/out"))"
else
    good=0
    [ "$rc" -eq 1 ] && grep -q "first bad decision: #15 fusion conv-activation (step 15, rewrite 1 of 2)" "$tmp/out" &&
        grep -q "noise .*interleaved rounds" "$tmp/out" && good=1
    check "--slower lands on the delayed group's fusion, the noise printed" [ "$good" -eq 1 ]
    [ "$good" -eq 1 ] || sed 's/^/# /' "$tmp/out"
    # a time is no output `run` compares: the line is bisect --slower over the rewrites
    # up to the one found, and pasted it finds that one again (exit 1)
    line=$(sed -n 's/^  or: graphlab //p' "$tmp/out")
    check "--slower: the reproduction line is a bisect --slower" \
        sh -c "echo \"\$1\" | grep -q -- '^bisect .* --passes all:14 --slower 50 --backend fused'" _ "$line"
    eval "\"\$GL\" $line" >"$tmp/again" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "timing noise" "$tmp/again"; then
        skip "--slower's line: the machine is too noisy now"
    else
        check "--slower: pasted, the line finds the same decision (exit 1)" \
            sh -c "[ $rc -eq 1 ] && grep -q 'first bad decision: #15 ' '$tmp/again'"
        [ "$rc" -eq 1 ] || sed 's/^/# /' "$tmp/again"
    fi
fi

# A slowdown that does not repeat (the first plan alone sleeps: what a burst of load looks
# like) is no answer: the pair the search ends on is timed again and disagrees (exit 2).
"$GL" bisect "$C" --slower 50 --set dnnl.delay=FusedNhwcConvRelu_1@1 >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "timing noise (" "$tmp/out"; then
    skip "--slower, a slowdown once: the machine is too noisy now"
else
    check "--slower: a slowdown that does not repeat is refused (exit 2)" \
        sh -c "[ $rc -eq 2 ] && grep -q 'did not repeat their first timing' '$tmp/out'"
    [ "$rc" -eq 2 ] || sed 's/^/# /' "$tmp/out"
fi

for N in "$TREE_MODELS/nhwc_convnet_mini" "$SHARED_MODELS/nhwc_convnet"; do
    [ -f "$N/model.onnx" ] || continue
    name=$(basename "$N")
    expect "$name: nothing breaks" 0 "no rewrite changes the outputs" \
        bisect "$N/model.onnx" --data "$N/test_data_set_0"
    expect "$name: a fused group" 1 "fusion conv-activation (step 15, rewrite 3 of 3)" \
        bisect "$N/model.onnx" --data "$N/test_data_set_0" --set fusion.fault=3
done
tap_done
