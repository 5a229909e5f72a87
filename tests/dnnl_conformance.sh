#!/bin/sh
# dnnl_conformance.sh — the ONNX node cases of the ops the oneDNN backend claims beyond
# Conv/MatMul/Gemm/eltwise/binary/pooling, run with --backend dnnl: every data set must
# reproduce its expected outputs (graphlab run exits 0). `graphlab conformance` runs the
# reference kernels only; this is the same data through the oneDNN primitives (or their
# fallbacks). A case the reference backend fails too is skipped (it is not ours to judge
# here: the reference runner skips it). For each case, a diag line says where the node ran.
# The cases of ../shared/conformance, else those made in the build from the installed
# onnx (tests/corpus.sh); skips everything when there are none.
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
NODE=$CONFORMANCE
OPS='qlinearconv|qlinearmatmul|batchnorm|instancenorm|layer_normalization|lrn|softmax|logsoftmax|concat|sum|mean|max|min|reduce|prelu|resize|upsample|convtranspose|transpose|reshape|flatten|squeeze|unsqueeze|slice|split|shape|quantizelinear|dequantizelinear|dynamicquantizelinear|convinteger|matmulinteger|lstm|gru|rnn|simple_rnn'
# A plan line "OP 'name' BACKEND IMPL ...": on dnnl, not on the reference kernel (impl
# "ref" with a reason); oneDNN's own reference code (its GRU) says so in the note.
on_onednn() {
    # shellcheck disable=SC2086 # the line's words
    set -- $1
    [ "$3" = dnnl ] && { [ "$4" != ref ] || echo "$*" | grep -q "oneDNN's reference implementation"; }
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gldnnlconf.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ -z "$NODE" ]; then
    skip "$NO_CONFORMANCE"
    tap_done
    exit $?
fi

for dir in "$NODE"/test_*; do
    case_name=$(basename "$dir")
    # The ops' own cases; "_expanded" ones are the function bodies (other ops).
    echo "$case_name" | grep -Eq "^test_($OPS)(_|\$)" || continue
    echo "$case_name" | grep -q '_expanded$' && continue
    echo "$case_name" | grep -Eq '^test_(maxpool|maxunpool|max_pool|min_max|mean_variance)' && continue
    for data in "$dir"/test_data_set_*; do
        [ -d "$data" ] || continue
        what="$case_name $(basename "$data")"
        "$GL" run "$dir/model.onnx" --data "$data" --backend dnnl --plan >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -ne 0 ] &&
            ! "$GL" run "$dir/model.onnx" --data "$data" >/dev/null 2>&1; then
            skip "$what: the reference backend fails it too"
            continue
        fi
        check "$what: dnnl reproduces the expected outputs" [ "$rc" -eq 0 ]
        [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err" "$tmp/out")"
        # Where the node ran: the plan line of the first node.
        line=$(grep -v '^#' "$tmp/out" | head -n 1 | tr -s ' ')
        diag "$case_name: $line"
        # The recurrent ops run on oneDNN's RNN primitives, none refused (dn_rnn.c).
        case "$case_name" in test_lstm_* | test_gru_* | test_rnn_* | test_simple_rnn_*)
            check "$what: the node ran on oneDNN" on_onednn "$line" ;;
        esac
    done
done
tap_done
