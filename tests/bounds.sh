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

# bounded ARGS...: graphlab ARGS under the bounds; sets rc and leaves $tmp/out, $tmp/err.
bounded() {
    (
        [ -n "$GL_SANITIZED" ] || ulimit -v 4194304
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

tap_done
