#!/bin/sh
# attrs.sh — attributes are checked against the op's schema at load: a wrongly typed or
# unknown attribute is exit 2 with one line naming file, node, op, attribute, the type
# found and the type expected, whatever the command; good models still load and run.
# (Fixtures: tests/data/make_hostile_attrs.py.)
. "$GL_SRCDIR/tests/tap.sh"
. "$GL_SRCDIR/tests/corpus.sh"
GL="$GL_BUILDDIR/graphlab"
DATA="$GL_SRCDIR/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glattrs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run() {
    "$GL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }

# file | words the message must contain (| separated)
while IFS='|' read -r file words; do
    [ -n "$file" ] || continue
    cp "$DATA/bad/$file" "$tmp/$file"
    for cmd in info "optimize --passes all -o $tmp/never.onnx" run; do
        # shellcheck disable=SC2086
        run $cmd "$tmp/$file"
        check "$file, $cmd: exit 2" [ "$rc" -eq 2 ]
        check "$file, $cmd: one line on stderr" [ "$(lines "$tmp/err")" -eq 1 ]
        check "$file, $cmd: names the file" grep -q "$tmp/$file: " "$tmp/err"
        oldifs=$IFS; IFS='|'
        for w in $words; do
            check "$file, $cmd: says $w" grep -qF -- "$w" "$tmp/err"
        done
        IFS=$oldifs
    done
    check "$file: nothing written" [ ! -e "$tmp/never.onnx" ]
    diag "$(cat "$tmp/err")"
done <<'CASES'
attr_perm_floats.onnx|node 'tr' (Transpose): attribute 'perm' is floats, expected ints
attr_perm_string.onnx|node 'tr' (Transpose): attribute 'perm' is string, expected ints
attr_concat_axis_ints.onnx|node 'cat' (Concat): attribute 'axis' is ints, expected int
attr_conv_kernel_string.onnx|node 'conv' (Conv): attribute 'kernel_shape' is string, expected ints
attr_unknown.onnx|node 'relu' (Relu): attribute 'alpha' is not an attribute of Relu-6|opset 13
attr_removed.onnx|node 'add_bc' (Add): attribute 'broadcast' is not an attribute of Add-7
attr_in_subgraph.onnx|node 'cat_in_then' (Concat) in subgraph 'then_graph' of node 'if1'|'axis' is float, expected int
attr_graph_ints.onnx|node 'if_ints' (If): attribute 'then_branch' is ints, expected graph
attr_function_call.onnx|node 'call_swap' (Swap): attribute 'p' is floats, expected ints|'perm' of node 'inner_tr' (Transpose)
attr_ref_outside.onnx|node 'tr' (Transpose): attribute 'perm' refers to the caller's attribute 'p' outside a function body
CASES

# The same function called with the type its body reads: loads, runs, transposes.
run info "$DATA/function_perm.onnx"
check "function call with an ints perm: info exit 0" [ "$rc" -eq 0 ]
run run "$DATA/function_perm.onnx"
check "function call with an ints perm: run exit 0" [ "$rc" -eq 0 ]
check "function call with an ints perm: the output is transposed" grep -q "float\[3,2\]" "$tmp/out"

# Models shaped like real exports still load (the shared ones nobody here wrote, when
# present): the table must not refuse what the spec allows.
for dir in "$TREE_MODELS"/*/ "$SHARED_MODELS"/*/; do
    [ -f "$dir/model.onnx" ] || continue
    run info "$dir/model.onnx"
    check "model $(basename "$dir") loads" [ "$rc" -eq 0 ]
done
if [ -n "$CONFORMANCE" ]; then
    # the ops whose attributes changed type or name across versions
    ops='cast|castlike|constant|lppool|globallppool|resize|split|scan|gru|lstm|rnn'
    ops="$ops|averagepool|maxpool|dropout|clip|reduce_sum|reshape|pad|upsample|tfidf|strnorm"
    run conformance "$CONFORMANCE" --filter "^test_($ops)"
    check "conformance on attribute-heavy ops: nothing fails" grep -q " 0 failed" "$tmp/out"
    diag "$(tail -n 1 "$tmp/out")"
else
    skip "$NO_CONFORMANCE"
fi
tap_done
