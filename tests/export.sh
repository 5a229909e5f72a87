#!/bin/sh
# export.sh — `graphlab export` and the workbench's E write a folder as a whole: into
# ".NAME.tmp.XXXXXX" beside it, renamed at the end (util/safe_write.h, gl_temp_dir), so
# that a failed, refused or interrupted export leaves no half folder and no temporary
# one; --no-onnx (and Tab in E's prompt) leaves out the per-step .onnx files; E asks
# where (default shown, Enter accepts, Esc cancels) unless $GRAPHLAB_EXPORT_DIR is set.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
work=$(mktemp -d "${TMPDIR:-/tmp}/glexport.XXXXXX")
trap 'rm -rf "$work"' EXIT

run() {
    "$GL" "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
count() { find "$1" -name "$2" | wc -l | tr -d ' '; }
# no_temp DIR: no temporary folder or file of ours is left in DIR
no_temp() { [ "$(find "$1" -name '*.tmp.*' | wc -l)" -eq 0 ]; }

# --- --no-onnx, missing parents, the folder's mode -------------------------------------------------
run export "$EX" -d "$work/a/b/c" --no-onnx
check "--no-onnx: exit 0" [ "$rc" -eq 0 ]
check "export -d creates missing parents (mkdir -p)" test -d "$work/a/b/c"
check "--no-onnx: no .onnx file" [ "$(count "$work/a/b/c" '*.onnx')" -eq 0 ]
check "--no-onnx: every step's .svg, .dot and .diff.txt" \
    [ "$(count "$work/a/b/c" '*.svg')" -eq 16 -a "$(count "$work/a/b/c" '*.dot')" -eq 16 -a \
    "$(count "$work/a/b/c" '*.diff.txt')" -eq 16 ]
check "--no-onnx: index.html and decisions.json" \
    test -s "$work/a/b/c/index.html" -a -s "$work/a/b/c/decisions.json"
check "--no-onnx: index.html links no .onnx" sh -c "! grep -q '\.onnx\"' '$work/a/b/c/index.html'"
check "no temporary folder left" no_temp "$work"
mkdir "$work/m"
check "the folder gets mkdir's mode, not mkdtemp's 0700" \
    [ "$(stat -c %a "$work/a/b/c")" = "$(stat -c %a "$work/m")" ]
check "export --help names --no-onnx" sh -c "'$GL' export --help 2>&1 | grep -q -- --no-onnx"

run export "$EX" -d "$work/full"
check "without --no-onnx: one .onnx per step" [ "$(count "$work/full" '*.onnx')" -eq 16 ]

# --- an export again into the folder: files replaced, others kept -----------------------------------
echo mine >"$work/full/notes.txt"
run export "$EX" -d "$work/full" --no-onnx
check "again into an existing folder: exit 0" [ "$rc" -eq 0 ]
check "again: the user's file is kept" grep -q mine "$work/full/notes.txt"
check "again: the .onnx of the first export are kept" [ "$(count "$work/full" '*.onnx')" -eq 16 ]
check "again: no temporary folder left" no_temp "$work"

# --- -d . : into the current folder, file by file ----------------------------------------------------
mkdir "$work/here"
(cd "$work/here" && "$GL" export "$EX" -d . --no-onnx >/dev/null 2>"$work/err")
check "-d .: exit 0, the files in the current folder" test -s "$work/here/index.html"
check "-d .: no temporary folder left" no_temp "$work"

# --- a refused destination: nothing moved, nothing left ---------------------------------------------
mkdir -p "$work/blocked/00-input.svg"
run export "$EX" -d "$work/blocked"
check "a folder where a file goes: exit 2" [ "$rc" -eq 2 ]
check "its message names it" grep -qF "blocked/00-input.svg: exists and is not a regular file" "$work/err"
check "no file moved into the destination" [ "$(ls "$work/blocked")" = 00-input.svg ]
check "no temporary folder left after the refusal" no_temp "$work"

ln -s "$work/full" "$work/link"
run export "$EX" -d "$work/link"
check "a symbolic link as the folder: exit 2" [ "$rc" -eq 2 ]
check "nothing written through the link" [ "$(count "$work/full" 'notes.txt')" -eq 1 -a \
    "$(find "$work/full" -newer "$work/link" -type f | wc -l)" -eq 0 ]
check "no temporary folder left after the link" no_temp "$work"

chmod 555 "$work/a"
if [ ! -w "$work/a" ]; then # root writes anyway
    run export "$EX" -d "$work/a/ro"
    check "an unwritable parent: exit 2" [ "$rc" -eq 2 ]
    check "an unwritable parent: nothing there" [ ! -e "$work/a/ro" ]
else
    skip "running as root: an unwritable folder cannot be made"
fi
chmod 755 "$work/a"

# --- SIGTERM while the export is written: neither folder remains -------------------------------------
model="$GL_SRCDIR/examples/transformer_block/model.onnx"
landed=0
attempt=0
left=0
while [ "$attempt" -lt 5 ] && [ "$landed" -eq 0 ]; do
    attempt=$((attempt + 1))
    rm -rf "$work/sig" "$work"/.sig.tmp.*
    "$GL" export "$model" -d "$work/sig" >/dev/null 2>&1 &
    pid=$!
    polls=0
    sent=0
    while [ "$polls" -lt 6000 ] && kill -0 "$pid" 2>/dev/null; do
        if ls -d "$work"/.sig.tmp.* >/dev/null 2>&1; then
            kill -TERM "$pid" 2>/dev/null && sent=1
            break
        fi
        sleep 0.005
        polls=$((polls + 1))
    done
    wait "$pid"
    rc=$?
    [ "$sent" -eq 1 ] && [ "$rc" -gt 128 ] && landed=1
    ls -d "$work"/.sig.tmp.* >/dev/null 2>&1 && left=1
    [ "$landed" -eq 1 ] && [ -e "$work/sig" ] && left=1
done
check "SIGTERM during export: no half folder, no temporary folder ($attempt tries)" [ "$left" -eq 0 ]
if [ "$landed" -eq 1 ]; then
    ok "SIGTERM landed mid-export and ended the process (exit $rc)"
else
    skip "SIGTERM never landed mid-export in $attempt tries (machine too fast or busy)"
fi

# --- the workbench's E: the prompt ------------------------------------------------------------------
if command -v tmux >/dev/null 2>&1; then
    if [ -n "$GL_SANITIZED" ]; then TIMEOUT=60; else TIMEOUT=15; fi
    export LANG=C.UTF-8
    tui=$work/tui
    mkdir "$tui"
    work_outer=$work
    work=$tui
    . "$GL_SRCDIR/tests/tmux.sh"
    trap '$T kill-server >/dev/null 2>&1; rm -rf "$work_outer"' EXIT
    start 140 30 -- "$EX"
    wait_for "steps: ] and [" >/dev/null
    keys E
    check "E: the prompt shows the default folder" \
        wait_for "export every step to: ./graphlab-export/conv_nhwc_"
    check "E: the prompt says .onnx files are in, Tab toggles" wait_for ".onnx files: yes, Tab toggles"
    keys Escape
    check "Esc cancels" wait_for "export cancelled"
    check "Esc: nothing written" [ ! -e "$tui/graphlab-export" ]
    keys E C-u
    keys -l "out/e1"
    keys Tab
    check "Tab: .onnx files no" wait_for ".onnx files: no"
    keys Enter
    check "Enter exports to the folder typed" wait_for "exported 16 steps to out/e1/"
    check "the status says no .onnx" wait_for "no .onnx files"
    check "E without .onnx: .svg but no .onnx" \
        [ "$(count "$tui/out/e1" '*.svg')" -eq 16 -a "$(count "$tui/out/e1" '*.onnx')" -eq 0 ]
    keys e
    check "e then writes where E did" wait_for "exported 00-input to out/e1/"
    keys q
    wait_rc >/dev/null

    start 140 30 GRAPHLAB_EXPORT_DIR=$tui/env -- "$EX"
    wait_for "steps: ] and [" >/dev/null
    keys E
    check "\$GRAPHLAB_EXPORT_DIR: E exports there without asking" wait_for "exported 16 steps to $tui/env/"
    check "\$GRAPHLAB_EXPORT_DIR: the files are there" test -s "$tui/env/index.html"
    keys q
    wait_rc >/dev/null
    check "no temporary folder left by the workbench" no_temp "$tui"
else
    skip "tmux not found: E's prompt untested"
fi

tap_done
