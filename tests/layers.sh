#!/bin/sh
# layers.sh — the source folders form layers, and every `#include "..."` in src/, passes/
# and ui/ goes down (or stays in its own folder), never up or sideways:
#     util → ir → ops → onnx → {diff, exec} → passes → render → driver → {cli, ui}
# A folder may include from the folders to its left and from itself; diff and exec are
# peers and must not include each other, nor must cli and ui. Besides:
#   - the generated onnx.pb-c.h is included only from src/onnx (the loader and saver);
#   - src/exec/dnnl/ lies below the rest of src/exec/: it includes no other exec header;
#   - every quoted include names a file in the tree (so no path slips past the rules).
# Known breaches wait in the allow-list below, each naming its issue point; an entry that
# no longer breaks a rule fails the test too, so the list only shrinks.
. "${GL_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gllayers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Breaches still to fix, one "FILE INCLUDED" a line (FILE from the top of the tree,
# INCLUDED as written); a comment names the issue point that removes them.
allowed() {
    cat <<'EOF'
# issue 25 point 2, step 4: layout's trial runs transpose-push, found by name in the table
passes/layout.c passes/pass_table.h
EOF
}

# layer_of PATH: sets layer (and rank, its place in the order) for a path from the top of
# the tree; layer is empty for a path in no layer.
layer_of() {
    layer='' rank=''
    case $1 in
    src/util/*) layer=util rank=0 ;;
    src/ir/*) layer=ir rank=1 ;;
    src/ops/*) layer=ops rank=2 ;;
    src/onnx/*) layer=onnx rank=3 ;;
    src/diff/*) layer=diff rank=4 ;;
    src/exec/*) layer=exec rank=4 ;;
    passes/*) layer=passes rank=5 ;;
    src/render/*) layer=render rank=6 ;;
    src/driver/*) layer=driver rank=7 ;;
    src/main.c) layer=main rank=9 ;;
    src/cli/*) layer=cli rank=8 ;;
    ui/*) layer=ui rank=8 ;;
    esac
}

# resolve ROOT FILE INCLUDED: sets target to the included file's path from the top, as the
# compiler finds it (-Isrc, then -I.; a bare name is looked up beside FILE); empty when no
# file of the tree has that name.
resolve() {
    target=''
    case $3 in
    */*)
        if [ -f "$1/src/$3" ]; then target=src/$3
        elif [ -f "$1/$3" ]; then target=$3
        fi ;;
    *) [ -f "$1/${2%/*}/$3" ] && target=${2%/*}/$3 ;;
    esac
}

# breach FILE INCLUDED: the rule FILE's include of INCLUDED breaks, or nothing.
breach() {
    if [ "$2" = onnx.pb-c.h ]; then
        case $1 in
        src/onnx/*) ;;
        *) echo "onnx.pb-c.h is included only from src/onnx (the loader and saver)" ;;
        esac
        return
    fi
    resolve "$root" "$1" "$2"
    if [ -z "$target" ]; then
        echo "names no file in src/ or the top of the tree"
        return
    fi
    layer_of "$1"
    from=$layer from_rank=$rank
    layer_of "$target"
    if [ -z "$from" ] || [ -z "$layer" ]; then
        echo "$1 or $target is in no layer: add its folder to tests/layers.sh"
    elif [ "$from" = exec ] && { [ "$target" = src/onnx/onnx_io.h ] || [ "$target" = src/onnx/save_set.h ]; }; then
        echo "src/exec handles tensors in memory: files are read and written around it, not from it"
    elif [ "$layer" = "$from" ]; then
        case $1:$target in
        src/exec/dnnl/*:src/exec/dnnl/*) ;;
        src/exec/dnnl/*:src/exec/exec.h | src/exec/dnnl/*:src/exec/target.h) ;;
        src/exec/dnnl/*:*) echo "src/exec/dnnl lies below src/exec: of exec it includes only exec.h and target.h" ;;
        passes/pipeline.*:* | passes/pass_table.*:* | passes/pass_ctx.c:*) ;;
        passes/*:passes/pipeline.h | passes/*:passes/pass_table.h)
            echo "a pass includes its interface (passes.h, pass_ctx.h), not the list of passes nor the pipeline" ;;
        *:src/exec/dnnl/dn.h) ;;
        *:src/exec/dnnl/*) echo "src/exec includes of dnnl/ only its interface, exec/dnnl/dn.h" ;;
        esac
    elif [ "$rank" -eq "$from_rank" ]; then
        echo "$from and $layer are peers and must not include each other"
    elif [ "$rank" -gt "$from_rank" ]; then
        echo "$from must not include from $layer, which lies above it (util → ir → ops → onnx → {diff, exec} → passes → render → driver → {cli, ui})"
    fi
}

# scan ROOT: one line "FILE:LINE: INCLUDED: RULE" for each include under ROOT that breaks
# a rule.
scan() {
    root=$1
    (cd "$root" && find src passes ui -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) \
        2>/dev/null | LC_ALL=C sort | xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"') |
        while IFS= read -r hit; do
            file=${hit%%:*} rest=${hit#*:}
            line=${rest%%:*} inc=${rest#*\"}
            inc=${inc%%\"*}
            rule=$(breach "$file" "$inc")
            [ -n "$rule" ] && echo "$file:$line: $inc: $rule"
        done
}

# the check itself must see what it is there to see: a miniature tree with one include of
# each kind
mini=$tmp/mini
mkdir -p "$mini/src/util" "$mini/src/ir" "$mini/src/diff" "$mini/src/exec/dnnl" \
    "$mini/src/onnx" "$mini/passes"
: >"$mini/src/ir/graph.h"
: >"$mini/src/exec/exec.h"
: >"$mini/src/exec/dnnl/dn.h"
: >"$mini/src/util/strbuf.h"
printf '#include "util/strbuf.h"\n#include "ir/graph.h"\n' >"$mini/src/util/up.c"
printf '#include "exec/exec.h"\n' >"$mini/src/diff/peer.c"
printf '#include "exec/exec.h"\n#include "exec/plan.h"\n#include "dn.h"\n' \
    >"$mini/src/exec/dnnl/dn_x.c"
: >"$mini/src/exec/plan.h"
: >"$mini/src/exec/dnnl/dn_private.h"
printf '#include "exec/dnnl/dn.h"\n#include "exec/dnnl/dn_private.h"\n' >"$mini/src/exec/backend.c"
: >"$mini/src/onnx/onnx_io.h"
: >"$mini/src/onnx/dataset.h"
printf '#include "onnx/dataset.h"\n#include "onnx/onnx_io.h"\n' >"$mini/src/exec/compare.c"
printf '#include "ir/graph.h"\n#include "onnx.pb-c.h"\n' >"$mini/src/onnx/load.c"
printf ' #  include "onnx.pb-c.h"\n#include "nowhere.h"\n#include "ir/graph.h"\n' \
    >"$mini/passes/p.c"
: >"$mini/passes/pass_table.h"
: >"$mini/passes/pass_ctx.h"
printf '#include "passes/pass_ctx.h"\n#include "passes/pass_table.h"\n' >"$mini/passes/q.c"
printf '#include "passes/pass_table.h"\n' >"$mini/passes/pass_table.c"
scan "$mini" >"$tmp/mini.out"
expected='passes/p.c:1: onnx.pb-c.h: onnx.pb-c.h is included only from src/onnx (the loader and saver)
passes/p.c:2: nowhere.h: names no file in src/ or the top of the tree
passes/q.c:2: passes/pass_table.h: a pass includes its interface (passes.h, pass_ctx.h), not the list of passes nor the pipeline
src/diff/peer.c:1: exec/exec.h: diff and exec are peers and must not include each other
src/exec/backend.c:2: exec/dnnl/dn_private.h: src/exec includes of dnnl/ only its interface, exec/dnnl/dn.h
src/exec/compare.c:2: onnx/onnx_io.h: src/exec handles tensors in memory: files are read and written around it, not from it
src/exec/dnnl/dn_x.c:2: exec/plan.h: src/exec/dnnl lies below src/exec: of exec it includes only exec.h and target.h
src/util/up.c:2: ir/graph.h: util must not include from ir, which lies above it (util → ir → ops → onnx → {diff, exec} → passes → render → driver → {cli, ui})'
if [ "$(cat "$tmp/mini.out")" = "$expected" ]; then
    ok "the check finds an upward, a sideways, two dnnl, a file I/O, a pass-table, a generated-header and a dangling include"
else
    not_ok "the check finds an upward, a sideways, two dnnl, a file I/O, a pass-table, a generated-header and a dangling include"
    sed 's/^/# got: /' "$tmp/mini.out"
fi

# the tree itself
scan "$GL_SRCDIR" >"$tmp/found"
allowed | sed -n 's/[[:space:]]*#.*//; /./p' | LC_ALL=C sort -u >"$tmp/allowed"
# a breach as "FILE INCLUDED", to set against the allow-list
sed 's/^\([^:]*\):[0-9]*: \([^:]*\): .*/\1 \2/' "$tmp/found" | LC_ALL=C sort -u >"$tmp/found.keys"
: >"$tmp/new"
while IFS= read -r hit; do
    key=$(echo "$hit" | sed 's/^\([^:]*\):[0-9]*: \([^:]*\): .*/\1 \2/')
    grep -qxF "$key" "$tmp/allowed" || echo "$hit" >>"$tmp/new"
done <"$tmp/found"
if [ -s "$tmp/new" ]; then
    not_ok "every include in src/, passes/ and ui/ follows the layer order"
    sed 's/^/# /' "$tmp/new"
else
    ok "every include in src/, passes/ and ui/ follows the layer order"
fi
n_allowed=$(grep -c . "$tmp/allowed")
[ "$n_allowed" -gt 0 ] && diag "$n_allowed known breaches still allowed (see the allow-list in tests/layers.sh)"
stale=$(LC_ALL=C comm -23 "$tmp/allowed" "$tmp/found.keys")
if [ -n "$stale" ]; then
    not_ok "the allow-list names only breaches still in the tree (remove the fixed ones)"
    echo "$stale" | sed 's/^/# fixed: /'
else
    ok "the allow-list names only breaches still in the tree"
fi
tap_done
