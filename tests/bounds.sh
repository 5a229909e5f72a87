#!/bin/sh
# bounds.sh — hostile models that try to hang graphlab or take the machine's memory
# (tests/data/make_hostile_exec.py) end with exit 2 and one stderr line naming the file and
# the node or value, within a time bound (timeout 60) and, outside sanitizer builds (ASan
# reserves terabytes of address space), a memory bound (ulimit -v).
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
BAD="$GL_SRCDIR/tests/data/bad"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glbounds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# bounded ARGS...: graphlab ARGS under the bounds (address space: $vmem KiB); sets rc and
# leaves $tmp/out, $tmp/err.
vmem=4194304
bounded() {
    (
        [ -n "$GL_SANITIZED" ] || ulimit -v "$vmem"
        exec timeout 60 "$GL" "$@"
    ) >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# refused LABEL NEEDLE...: the last bounded run exited 2 with one stderr line holding every
# NEEDLE (fixed strings).
refused() {
    label=$1
    shift
    check "$label: exit 2" [ "$rc" -eq 2 ]
    [ "$rc" -eq 2 ] || diag "exit status $rc"
    check "$label: one stderr line" [ "$(wc -l <"$tmp/err" | tr -d ' ')" -eq 1 ]
    missing=
    for needle; do
        grep -qF -- "$needle" "$tmp/err" || missing="$missing [$needle]"
    done
    check "$label: names$(printf ' %s,' "$@" | sed 's/,$//')" [ -z "$missing" ]
    [ -z "$missing" ] || diag "stderr: $(cat "$tmp/err")"
}

# --- function calls: one bound for every walk that expands them -----------------------------
for cmd in optimize export run; do
    case $cmd in
    optimize) args="-o $tmp/o.onnx" ;;
    export) args="-d $tmp/exp" ;;
    run) args= ;;
    esac
    # shellcheck disable=SC2086
    bounded $cmd "$BAD/function_recursive.onnx" $args
    refused "$cmd recursive function" function_recursive.onnx "node 'call'" "calls itself"
    # shellcheck disable=SC2086
    bounded $cmd "$BAD/function_fanout.onnx" $args
    refused "$cmd function fan-out" function_fanout.onnx "node 'call_f25'" \
        "expand to more than"
done

# --- loops that never end by themselves: the iteration cap ends them -------------------------
# (The default cap, 2^24 iterations, takes about half a minute; the tests set a lower one.)
for f in loop_huge_trip loop_while_forever loop_huge_trip_const; do
    bounded run "$BAD/$f.onnx" --max-iterations 100000
    refused "run $f" "$f.onnx" "node 'forever' (Loop)" "more than 100000 loop iterations" \
        "--max-iterations"
done
# Folding evaluates the constant loop, under a cap of its own: it is left unfolded.
bounded optimize "$BAD/loop_huge_trip_const.onnx" -o "$tmp/o.onnx" --explain
check "optimize constant endless loop: exit 0" [ "$rc" -eq 0 ]
check "...the fold refused, the cap named" \
    grep -q "eval-failed: .*node 'forever' (Loop): more than 65536 loop iterations" "$tmp/out"

# --- memory: a tensor, or all alive together, over --max-memory -------------------------------
# Scan pieces stack up until the stack does not fit.
for f in loop_scan_growing loop_scan_huge_trip; do
    bounded run "$BAD/$f.onnx" --max-memory 64M
    refused "run $f" "$f.onnx" "node 'forever' (Loop): scan output 'ys' float[" \
        "over the memory limit (--max-memory) of 67108864 bytes"
done
# A declared input of 1 GiB: refused before a byte of it is made.
bounded run "$BAD/huge_input.onnx" --max-memory 512M
refused "run huge declared input" huge_input.onnx "input 'x' float[16384,16384] takes \
1073741824 bytes" "memory limit (--max-memory) of 536870912 bytes"
bounded run "$BAD/huge_intermediate.onnx"
refused "run huge intermediate, default limit" huge_intermediate.onnx \
    "node 'fill' (ConstantOfShape): output 'big' float[65536,65536] takes 17179869184 bytes"
# The default limit is half of memory, or of the address-space limit when lower.
if [ -z "$GL_SANITIZED" ]; then
    vmem=1048576
    bounded run "$BAD/huge_input.onnx"
    refused "run huge declared input under ulimit -v 1G" huge_input.onnx "input 'x'" \
        "of 536870912 bytes"
    vmem=4194304
else
    skip "the default memory limit under ulimit -v (sanitizers)"
fi

# --- a graph with no nodes: nothing to sort, count or run, and no crash (UBSan once saw
# qsort handed NULL in info) -------------------------------------------------------------------
for cmd in info "info --json" optimize export run; do
    case $cmd in
    optimize) args="-o $tmp/o.onnx" ;;
    export) args="-d $tmp/exp" ;;
    *) args= ;;
    esac
    # shellcheck disable=SC2086
    bounded $cmd "$BAD/no_nodes.onnx" $args
    check "$cmd on a graph with no nodes: exit 0" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || diag "stderr: $(cat "$tmp/err")"
done

# --- what is not a regular file: refused at once, never waited on ---------------------------
mkdir -p "$tmp/fifo/ext" "$tmp/fifo/data" "$tmp/fifo/dir.onnx"
mkfifo "$tmp/fifo/model.onnx" "$tmp/fifo/ext/weights.bin" "$tmp/fifo/data/input_0.pb"
cp "$GL_SRCDIR/examples/mlp_external/model.onnx" "$tmp/fifo/ext/model.onnx"
for cmd in info optimize export run; do
    case $cmd in
    optimize) args="-o $tmp/o.onnx" ;;
    export) args="-d $tmp/exp" ;;
    *) args= ;;
    esac
    # shellcheck disable=SC2086
    bounded $cmd "$tmp/fifo/model.onnx" $args
    refused "$cmd, the model a FIFO" "fifo/model.onnx: not a regular file (a FIFO)"
    # shellcheck disable=SC2086
    bounded $cmd "$tmp/fifo/ext/model.onnx" $args
    refused "$cmd, external data a FIFO" "ext/model.onnx: initializer 'fc0.weight': external \
data 'weights.bin': not a regular file (a FIFO)"
done
bounded run "$GL_SRCDIR/examples/mlp_external/model.onnx" --data "$tmp/fifo/data"
refused "run, a --data file a FIFO" "data/input_0.pb: not a regular file (a FIFO)"
bounded info "$tmp/fifo/dir.onnx"
refused "info, the model a folder" "dir.onnx: not a regular file (a directory)"

tap_done
