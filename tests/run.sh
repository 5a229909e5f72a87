#!/bin/sh
# run.sh — `graphlab run` and `graphlab conformance` through the real program: the
# examples reproduce their test data, a wrong expected output exits 1, bad arguments
# exit 2, and the conformance runner reports per case and ends with its count line.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glrun.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run ARGS...: sets rc, out (stdout file), err (stderr file)
run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }

# --- the examples reproduce their own test data ------------------------------------------
for m in "$EX"/*/model.onnx; do
    [ -e "$m" ] || continue
    dir=$(dirname "$m")
    name=$(basename "$dir")
    for data in "$dir"/test_data_set_*; do
        [ -d "$data" ] || continue
        run run "$m" --data "$data"
        check "example $name $(basename "$data"): exit 0" [ "$rc" -eq 0 ]
        check "example $name $(basename "$data"): every output ok" \
            sh -c "grep -q ': ok\$' '$tmp/out' && ! grep -q MISMATCH '$tmp/out'"
        [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err" "$tmp/out")"
    done
done

# --- a wrong expected output: exit 1, the output named -------------------------------------
mlp="$EX/mlp_external/model.onnx"
mkdir -p "$tmp/wrong" "$tmp/saved" "$tmp/same"
cp "$EX/mlp_external/test_data_set_0/input_0.pb" "$tmp/wrong/"
cp "$EX/mlp_external/test_data_set_0/input_0.pb" "$tmp/same/"
# Outputs for random inputs are not the outputs for the data set's inputs.
run run "$mlp" --save-outputs "$tmp/saved"
check "run on random inputs: exit 0" [ "$rc" -eq 0 ]
check "--save-outputs wrote output_0.pb" [ -s "$tmp/saved/output_0.pb" ]
cp "$tmp/saved/output_0.pb" "$tmp/wrong/output_0.pb"
run run "$mlp" --data "$tmp/wrong"
check "wrong expected output: exit 1" [ "$rc" -eq 1 ]
check "wrong expected output: MISMATCH on the output's line" grep -q "^y: .*MISMATCH" "$tmp/out"

# Saved outputs of a --data run are exactly what the next run computes.
run run "$mlp" --data "$EX/mlp_external/test_data_set_0" --save-outputs "$tmp/saved2"
cp "$tmp/saved2/output_0.pb" "$tmp/same/output_0.pb"
run run "$mlp" --data "$tmp/same" --rtol 0 --atol 0
check "saved outputs reproduce exactly" [ "$rc" -eq 0 ]
check "...with zero error" grep -q "^y: max_abs 0," "$tmp/out"

# The same inputs on two runs of one backend agree.
run run "$mlp" --compare ref
check "--compare ref: exit 0" [ "$rc" -eq 0 ]
check "--compare ref: a line per output" grep -q "^y \[ref vs ref\]: .*: ok" "$tmp/out"

run run "$mlp" --plan
check "--plan lists the nodes with their backend" grep -q "^MatMul .* ref" "$tmp/out"

# --unfused (DESIGN.md's flag): the same passes without their fusion steps.
conv="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
run run "$conv" --passes all --backend dnnl --plan
check "--passes all --plan: a fused group runs" grep -q "(fused: " "$tmp/out"
run run "$conv" --passes all --backend dnnl --plan --unfused --compare ref
check "--unfused: exit 0, outputs as the reference" [ "$rc" -eq 0 ]
check "--unfused --plan: no fused group" sh -c "! grep -q '(fused: ' '$tmp/out'"
run run "$conv" --passes all --unfused --backend fused
check "--unfused with --backend fused: exit 2" [ "$rc" -eq 2 ]

# --max-memory bounds every tensor (tests/bounds.sh tries the hostile models).
run run "$mlp" --max-memory 64M
check "--max-memory 64M: exit 0" [ "$rc" -eq 0 ]
run run "$mlp" --max-memory 100
check "--max-memory 100: exit 2" [ "$rc" -eq 2 ]
check "...one line naming the option" \
    sh -c "[ $(lines "$tmp/err") -eq 1 ] && grep -q 'over the memory limit (--max-memory) of 100 bytes' '$tmp/err'"

# --- symbolic dims ---------------------------------------------------------------------------
tb="$EX/transformer_block/model.onnx"
run run "$tb"
check "symbolic dim without --dim: exit 0" [ "$rc" -eq 0 ]
check "...the dim taken as 1" grep -q "^hidden: float\[1,1,32\]" "$tmp/out"
check "...and stderr says so" grep -q "; seq=1 (symbolic dims; --dim NAME=V sizes them)" "$tmp/err"
run run "$tb" --dim seq=3
check "--dim seq=3: exit 0" [ "$rc" -eq 0 ]
check "--dim seq=3: stderr names no default" sh -c "! grep -q 'symbolic dims' '$tmp/err'"
check "--dim seq=3: the output has it" grep -q "^hidden: float\[1,3,32\]" "$tmp/out"
# A NAME no input has is refused (it was ignored), on every command that takes --dim,
# with one line naming it and the dims the inputs do have.
for cmd in run profile bisect; do
    run $cmd "$tb" --dim sequence=3
    check "$cmd --dim sequence=3 (no such dim): exit 2" [ "$rc" -eq 2 ]
    check "...one line naming it and listing 'seq'" sh -c "[ $(lines "$tmp/err") -eq 1 ] &&
        grep -q -e \"--dim 'sequence': no input has a symbolic dim.*symbolic dims: 'seq'\" '$tmp/err'"
done
run run "$mlp" --dim n=2
check "--dim on a model with no symbolic dims: exit 2" [ "$rc" -eq 2 ]
check "...one line saying it has none" sh -c "[ $(lines "$tmp/err") -eq 1 ] &&
    grep -q -e \"--dim 'n': .*the inputs have none\" '$tmp/err'"
run run "$tb" --dim seq=2 --dim seq=3
check "--dim given twice: the last wins" grep -q "^hidden: float\[1,3,32\]" "$tmp/out"

# --- usage errors: exit 2 ------------------------------------------------------------------------
for args in "run" "run $tb --dim seq" "run $tb --dim seq=-1" "run $tb --dim =3" \
            "run $tb --dim seq=x" "run $mlp --rtol abc" "run $mlp --atol -1" \
            "run $mlp --threads many" "run $mlp --backend tpu" "run $mlp --compare tpu" \
            "run $mlp --passes bogus" "run $mlp --data $tmp/nowhere" "run $tmp/none.onnx" \
            "run $mlp --frobnicate" "run $mlp --max-memory 0" "run $mlp --max-memory 12X" \
            "run $mlp --max-memory -5" "run $mlp --max-memory 99999999999G" \
            "run $mlp --max-iterations 0" "run $mlp --max-iterations many"; do
    # shellcheck disable=SC2086
    run $args
    check "exit 2: graphlab $args" [ "$rc" -eq 2 ]
done

# --- conformance ---------------------------------------------------------------------------------
CONF=$CONFORMANCE
if [ -n "$CONF" ]; then
    run conformance "$CONF" --filter '^test_(abs|relu)$'
    check "conformance --filter: exit 0" [ "$rc" -eq 0 ]
    check "conformance --filter: the count line is last" \
        sh -c "tail -n 1 '$tmp/out' | grep -qx '2 passed, 0 failed, 0 skipped'"
    run conformance "$CONF" --filter '^test_(bernoulli|identity_sequence)$' --verbose
    check "conformance: random and sequence cases are skipped" \
        sh -c "tail -n 1 '$tmp/out' | grep -qx '0 passed, 0 failed, 2 skipped'"
    check "conformance --verbose: the reason is printed" grep -q "^SKIP test_bernoulli: random" "$tmp/out"
    run conformance "$CONF" --filter 'no-case-is-named-like-this'
    check "conformance: nothing matched" \
        sh -c "[ $rc -eq 0 ] && grep -qx '0 passed, 0 failed, 0 skipped' '$tmp/out'"

    # A suite of our own: a good case, a wrong expected output, a broken model.
    mkdir -p "$tmp/suite"
    cp -r "$CONF/test_abs" "$tmp/suite/test_good"
    cp -r "$CONF/test_abs" "$tmp/suite/test_wrong"
    cp "$CONF/test_relu/test_data_set_0/output_0.pb" "$tmp/suite/test_wrong/test_data_set_0/"
    mkdir -p "$tmp/suite/test_broken/test_data_set_0"
    printf 'not a model' >"$tmp/suite/test_broken/model.onnx"
    run conformance "$tmp/suite"
    check "own suite: exit 1" [ "$rc" -eq 1 ]
    check "own suite: counts" sh -c "tail -n 1 '$tmp/out' | grep -qx '1 passed, 2 failed, 0 skipped'"
    check "own suite: the wrong output is located" \
        grep -q "^FAIL test_wrong: output 'y': max_abs .* over tolerance at element" "$tmp/out"
    check "own suite: the broken model says why" grep -q "^FAIL test_broken: model.onnx" "$tmp/out"
    check "own suite: cases in name order" \
        sh -c "grep -n FAIL '$tmp/out' | head -n 1 | grep -q test_broken"
else
    skip "$NO_CONFORMANCE"
fi
run conformance "$tmp/no-such-dir"
check "conformance on a missing folder: exit 2" [ "$rc" -eq 2 ]
run conformance "$tmp" --filter '(['
check "conformance with a bad regex: exit 2" [ "$rc" -eq 2 ]
run conformance
check "conformance without DIR: exit 2" [ "$rc" -eq 2 ]

# --- the oneDNN backend: every model reproduces its test data ----------------------------------
# Conv, MatMul and Gemm must run on dnnl with a oneDNN implementation (not the fallback
# to our kernels, nor oneDNN's slow "ref:any"); the plan is printed after the run, when
# the implementations are chosen.
for m in "$TREE_MODELS"/*/model.onnx "$SHARED_MODELS"/*/model.onnx "$EX"/*/model.onnx; do
    [ -e "$m" ] || continue
    dir=$(dirname "$m")
    name=$(basename "$dir")
    for data in "$dir"/test_data_set_*; do
        [ -d "$data" ] || continue
        run run "$m" --backend dnnl --data "$data" --rtol 1e-3 --atol 1e-4 --plan
        check "dnnl: $name $(basename "$data"): exit 0" [ "$rc" -eq 0 ]
        check "dnnl: $name $(basename "$data"): every output ok" \
            sh -c "grep -q ': ok\$' '$tmp/out' && ! grep -q MISMATCH '$tmp/out'"
        check "dnnl: $name: Conv/MatMul/Gemm run on oneDNN, not on a reference" \
            sh -c "! grep -E '^ *(Conv|MatMul|Gemm) ' '$tmp/out' | grep -Ev ' dnnl +[a-z0-9_]+:' | grep -q . &&
                   ! grep -Eq '^ *(Conv|MatMul|Gemm) .* dnnl +ref:' '$tmp/out'"
        [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err" "$tmp/out")"
    done
done
run run "$mlp" --backend dnnl --threads 1 --compare ref
check "dnnl --threads 1 --compare ref: exit 0" [ "$rc" -eq 0 ]
check "dnnl --threads 1 --compare ref: a line per output" grep -q "^y \[ref vs dnnl\]: .*: ok" "$tmp/out"

# --- NaN and infinities (issue 26) ---------------------------------------------------------------
# tests/data/nan/*: an input holding NaN, +Inf, -Inf and -0, and the output ONNX defines for
# it (tests/data/make_nan_models.py). Every backend reproduces it: oneDNN's relu, clip and
# max pooling made the NaN a number, which `run` printed as a result without a word. On
# dnnl and fused every node runs on oneDNN (no fallback that would hide the question), and
# fused runs the Conv and its activation as one primitive with a post-op.
for m in "$GL_SRCDIR"/tests/data/nan/*/model.onnx; do
    dir=$(dirname "$m")
    name=$(basename "$dir")
    for how in "--backend ref" "--backend dnnl" "--backend fused --passes all"; do
        # shellcheck disable=SC2086 # how is a list of arguments
        run run "$m" $how --data "$dir/test_data_set_0" --plan
        check "NaN/Inf: $name $how: exit 0, the output as ONNX defines it" \
            sh -c "[ $rc -eq 0 ] && grep -q '^y: .*: ok\$' '$tmp/out'"
        [ "$rc" -eq 0 ] || diag "$(grep '^y: ' "$tmp/out")"
        case $how in *ref) continue ;; esac
        check "NaN/Inf: $name $how: every node on a oneDNN kernel" \
            sh -c "! grep -E \"^[A-Za-z]+ +'\" '$tmp/out' | grep -Ev ' dnnl +[a-z0-9_]+:' | grep -q ."
        case $name@$how in conv_*fused*)
            check "NaN/Inf: $name $how: the activation is a post-op" \
                grep -Eq "^FusedConv.* \+ eltwise_" "$tmp/out" ;;
        esac
    done
done

tap_done
