#!/bin/sh
# export.sh — `graphlab export` and the workbench's E write a folder as a whole
# (util/safe_write.h, gl_temp_dir): a new folder is written as ".NAME.tmp.XXXXXX" beside
# it and renamed at the end; an existing one (a mount point too) gets
# "DIR/.graphlab.tmp.XXXXXX" on its own file system, whose files are moved in at the end,
# under a lock (DIR/.graphlab.lock) that refuses a second writer. A failed, refused or
# interrupted export leaves no half folder and no temporary one. The folder's manifest
# (DIR/.graphlab-export.json) lists the files the export owns: the next export removes
# those it does not write again, `e` adds to them, nothing else is touched. --no-onnx (and
# Tab in E's prompt) leaves out the per-step .onnx files; E asks where (default shown,
# Enter accepts, Esc cancels) unless $GRAPHLAB_EXPORT_DIR is set.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples/conv_nhwc/model.onnx"
work=$(mktemp -d "${TMPDIR:-/tmp}/glexport.XXXXXX")
mnt=$work/mnt # a tmpfs mounted there by the mount-point section
unmount() { if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt"; fi; }
trap 'unmount; rm -rf "$work"' EXIT

run() {
    "$GL" "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
count() { find "$1" -name "$2" | wc -l | tr -d ' '; }
# one_line_naming WORDS...: the last command's stderr is one line holding every WORD
one_line_naming() {
    [ "$(wc -l <"$work/err")" -eq 1 ] || return 1
    for w in "$@"; do grep -qF -- "$w" "$work/err" || return 1; done
}
# no_temp DIR: no temporary folder or file of ours is left in DIR
no_temp() { [ "$(find "$1" -name '*.tmp.*' | wc -l)" -eq 0 ]; }

# --- --no-onnx, missing parents, the folder's mode -------------------------------------------------
run export "$EX" -d "$work/a/b/c" --no-onnx
check "--no-onnx: exit 0" [ "$rc" -eq 0 ]
check "export -d creates missing parents (mkdir -p)" test -d "$work/a/b/c"
check "--no-onnx: no .onnx file" [ "$(count "$work/a/b/c" '*.onnx')" -eq 0 ]
check "--no-onnx: every step's .svg, .dot and .diff.txt" \
    [ "$(count "$work/a/b/c" '*.svg')" -eq 17 -a "$(count "$work/a/b/c" '*.dot')" -eq 17 -a \
    "$(count "$work/a/b/c" '*.diff.txt')" -eq 17 ]
check "--no-onnx: index.html and decisions.json" \
    test -s "$work/a/b/c/index.html" -a -s "$work/a/b/c/decisions.json"
check "--no-onnx: index.html links no .onnx" sh -c "! grep -q '\.onnx\"' '$work/a/b/c/index.html'"
check "no temporary folder left" no_temp "$work"
mkdir "$work/m"
check "the folder gets mkdir's mode, not mkdtemp's 0700" \
    [ "$(stat -c %a "$work/a/b/c")" = "$(stat -c %a "$work/m")" ]
check "export --help names --no-onnx" sh -c "'$GL' export --help 2>&1 | grep -q -- --no-onnx"

run export "$EX" -d "$work/full"
check "without --no-onnx: one .onnx per step" [ "$(count "$work/full" '*.onnx')" -eq 17 ]

# --- the steps' .onnx share one weights file (issue 24) ----------------------------------------------
# A whole copy of the weights per step was 361 MB for efficientnet_b0 (17 steps of 20 MB);
# now one file, weights.data, holds each distinct tensor of 1 KB or more once, and every
# step's .onnx points into it (ONNX external data, location "weights.data"). Each step
# still runs alone to the data set's outputs, in graphlab and in ONNX Runtime.
MLP="$GL_SRCDIR/examples/mlp_external"
ORT_NODE="${GL_ORT_NODE:-$HOME/.cache/graphlab-ort}"
# model_bytes DIR: the bytes of its models and their weights (the drawings apart)
model_bytes() { cat "$1"/*.onnx "$1"/*.onnx.data "$1"/weights.data 2>/dev/null | wc -c; }
# model | flags | stdout says | weights.data? | .onnx files | .onnx.data files
while IFS='|' read -r model flags says weights n_onnx n_data; do
    [ -n "$model" ] || continue
    dest="$work/w-$(basename "$(dirname "$model")")$(echo "$flags" | tr -d ' -')"
    # shellcheck disable=SC2086 # flags is a list
    run export "$model" -d "$dest" $flags
    what="export $(basename "$(dirname "$model")") $flags"
    check "$what: exit 0" [ "$rc" -eq 0 ]
    check "$what: stdout says '$says'" grep -qF -- "$says" "$work/out"
    has=no
    [ -s "$dest/weights.data" ] && has=yes
    check "$what: weights.data $weights" [ "$has" = "$weights" ]
    check "$what: $n_onnx .onnx, $n_data .onnx.data" \
        [ "$(count "$dest" '*.onnx')" -eq "$n_onnx" -a "$(count "$dest" '*.onnx.data')" -eq "$n_data" ]
done <<CASES
$MLP/model.onnx||the steps' .onnx share weights.data (|yes|17|0
$MLP/model.onnx|--self-contained|each step's .onnx holds its own weights|no|17|17
$MLP/model.onnx|--no-onnx|no .onnx files|no|0|0
$EX||the steps' .onnx share weights.data (4.5 KiB, 1 tensor; 16 more found there)|yes|17|0
$GL_SRCDIR/tests/data/good_relu.onnx||the steps' .onnx hold their weights (none of 1024 bytes or more)|no|17|0
CASES
shared="$work/w-mlp_external" whole="$work/w-mlp_externalselfcontained"
check "shared: the steps' models hold about one copy of the weights, not one per step" \
    [ "$(model_bytes "$shared")" -lt $(( $(wc -c <"$MLP/weights.bin") * 2 )) ]
check "shared: a tenth of the self-contained steps' bytes or less" \
    [ "$(( $(model_bytes "$shared") * 10 ))" -le "$(model_bytes "$whole")" ]
check "shared: the manifest lists weights.data" grep -q '"weights.data"' "$shared/.graphlab-export.json"
bad=""
for step in "$shared"/*.onnx; do
    "$GL" run "$step" --data "$MLP/test_data_set_0" >"$work/step" 2>&1 || bad="$bad $(basename "$step")"
done
check "shared: every step runs alone to the data set's outputs${bad:+ (not:$bad)}" [ -z "$bad" ]
run export "$MLP/model.onnx" -d "$work/bad" --no-onnx --self-contained
check "--no-onnx with --self-contained: exit 2, one line" \
    sh -c "[ $rc -eq 2 ] && grep -q 'self-contained' '$work/err'"
if command -v node >/dev/null 2>&1 && [ -d "$ORT_NODE/node_modules/onnxruntime-node" ]; then
    bad=""
    for step in 00-input 05-dce 09-dce; do
        node "$GL_SRCDIR/bench/ort_time.js" --ort "$ORT_NODE" --model "$shared/$step.onnx" \
            --data "$MLP/test_data_set_0" --warmup 1 --runs 1 >"$work/ort" 2>&1 &&
            grep -qE '"max_abs_vs_data":[0-9.e-]+' "$work/ort" &&
            awk -F'"max_abs_vs_data":' '{ split($2, v, /[,}]/); exit !(v[1] + 0 < 1e-4) }' "$work/ort" ||
            { bad="$bad $step"; sed 's/^/# /' "$work/ort"; }
    done
    check "shared: ONNX Runtime loads the steps and computes the data set's outputs${bad:+ (not:$bad)}" \
        [ -z "$bad" ]
else
    skip "shared weights in ONNX Runtime: no onnxruntime-node in $ORT_NODE"
fi

# --- an export again into the folder: the set it owns replaced, nothing else touched ----------------
MANIFEST=.graphlab-export.json
LOCK=.graphlab.lock
# listing DIR: its names, hidden ones too, on one line
listing() { (cd "$1" && ls -A | tr '\n' ' '); }
# the names of 00-input's files with (or without, "no-onnx") its .onnx
input_files() {
    if [ "${1:-}" = no-onnx ]; then echo "00-input.diff.txt 00-input.dot 00-input.svg"
    else echo "00-input.diff.txt 00-input.dot 00-input.onnx 00-input.svg"; fi
}
check "the export's manifest lists what it wrote" \
    grep -q '"01-toposort.onnx"' "$work/full/$MANIFEST"
check "the manifest records the model" grep -qF "\"$EX\"" "$work/full/$MANIFEST"
echo mine >"$work/full/notes.txt"
run export "$EX" -d "$work/full" --no-onnx
check "again into an existing folder: exit 0" [ "$rc" -eq 0 ]
check "again: the user's file is kept" grep -q mine "$work/full/notes.txt"
check "again --no-onnx: the first export's .onnx are removed" [ "$(count "$work/full" '*.onnx')" -eq 0 ]
check "again: the manifest lists no .onnx" sh -c "! grep -qE '^ +\"[^\"]*\.onnx\",?\$' '$work/full/$MANIFEST'"
check "again: no temporary folder or lock left" [ "$(find "$work" -name '.graphlab.*' | wc -l)" -eq 0 ]
check "again: no temporary folder left" no_temp "$work"
run export "$EX" -d "$work/full" --passes none
check "--passes none after all: exit 0" [ "$rc" -eq 0 ]
check "--passes none after all: the 15 later steps' files removed, notes.txt kept" \
    [ "$(listing "$work/full")" = "$MANIFEST $(input_files) decisions.json index.html notes.txt weights.data " ]

# Another model's export (external data: NN-PASS.onnx.data) replaced by this one's.
run export "$GL_SRCDIR/examples/mlp_external/model.onnx" -d "$work/other" --self-contained
check "mlp_external's export has .onnx.data files" [ "$(count "$work/other" '*.onnx.data')" -gt 0 ]
run export "$EX" -d "$work/other" --no-onnx --passes none
check "another model's export replaced: exit 0" [ "$rc" -eq 0 ]
check "another model's export replaced: none of its files remain" \
    [ "$(listing "$work/other")" = "$MANIFEST $(input_files no-onnx) decisions.json index.html " ]

# A folder without a manifest (an older graphlab's export): the names written are
# replaced, nothing else is removed.
mkdir "$work/legacy"
echo old >"$work/legacy/14-fusion.onnx"
echo old >"$work/legacy/00-input.svg"
run export "$EX" -d "$work/legacy" --no-onnx --passes none
check "no manifest: exit 0" [ "$rc" -eq 0 ]
check "no manifest: a file of the same name replaced" sh -c "! grep -q old '$work/legacy/00-input.svg'"
check "no manifest: other files kept" grep -q old "$work/legacy/14-fusion.onnx"
check "no manifest: it has one now, without the file it did not write" \
    sh -c "grep -q '00-input.svg' '$work/legacy/$MANIFEST' && ! grep -q fusion '$work/legacy/$MANIFEST'"

# A manifest written by hand: only plain names of regular files in the folder are ever
# removed — nothing outside it, no folder, no link (nor what it points to), not graphlab's
# own bookkeeping; a manifest that does not parse removes nothing.
mkdir -p "$work/forged/sub"
echo outside >"$work/outside.txt"
echo target >"$work/target.txt"
ln -s "$work/target.txt" "$work/forged/link"
echo mine >"$work/forged/mine.txt"
printf '{"files": ["../outside.txt", "%s", "sub", "link", ".", "..", "", "sub/x", ".graphlab.lock"]}\n' \
    "$work/target.txt" >"$work/forged/$MANIFEST"
run export "$EX" -d "$work/forged" --no-onnx --passes none
check "a forged manifest: exit 0" [ "$rc" -eq 0 ]
check "a forged manifest: nothing outside the folder removed" \
    test -f "$work/outside.txt" -a -f "$work/target.txt"
check "a forged manifest: the folder and the link it lists are kept" \
    test -d "$work/forged/sub" -a -L "$work/forged/link"
check "a forged manifest: the user's file is kept" test -f "$work/forged/mine.txt"
printf '{"files": ["mine.txt", ' >"$work/forged/$MANIFEST"
run export "$EX" -d "$work/forged" --no-onnx --passes none
check "a manifest that does not parse: exit 0, nothing it names removed" \
    [ "$rc" -eq 0 -a -f "$work/forged/mine.txt" ]
check "a manifest that does not parse: replaced by one that does" \
    grep -q '"files"' "$work/forged/$MANIFEST"

# The model read from the folder is never removed, even when the manifest lists it.
run export "$EX" -d "$work/self"
run export "$work/self/05-dce.onnx" -d "$work/self" --passes none
check "the input inside the folder: exit 0" [ "$rc" -eq 0 ]
check "the input inside the folder: kept though the export did not write it" \
    test -f "$work/self/05-dce.onnx"
check "the input inside the folder: still listed, removed by a later export" \
    grep -q '"05-dce.onnx"' "$work/self/$MANIFEST"
check "the input inside the folder: the other steps' files removed" \
    [ ! -e "$work/self/06-transpose-push.svg" ]

# --- a second writer: refused while the folder's lock is held ----------------------------------------
if command -v flock >/dev/null 2>&1; then
    run export "$EX" -d "$work/locked" --no-onnx --passes none
    : >"$work/locked/$LOCK"
    before=$(listing "$work/locked")
    (
        exec 9>"$work/locked/$LOCK"
        flock 9
        echo $$ >&9
        "$GL" export "$EX" -d "$work/locked" >"$work/out" 2>"$work/err" 9>&-
        echo $? >"$work/rc"
    )
    rc=$(cat "$work/rc")
    check "the folder locked by another writer: exit 2" [ "$rc" -eq 2 ]
    check "its one line names the folder and the process holding it" \
        one_line_naming "$work/locked" "process $$"
    check "the locked folder is unchanged" [ "$(listing "$work/locked")" = "$before" ]
    check "no temporary folder left after the refusal" no_temp "$work"
    run export "$EX" -d "$work/locked" --no-onnx --passes none
    check "a lock file nobody holds (its process gone): taken over, exit 0" [ "$rc" -eq 0 ]
    check "the lock file is removed at the end" [ ! -e "$work/locked/$LOCK" ]
else
    skip "flock(1) not found: the lock untested"
fi
rm -f "$work/locked/$LOCK"
echo target >"$work/target.txt"
ln -s "$work/target.txt" "$work/locked/$LOCK"
run export "$EX" -d "$work/locked" --no-onnx --passes none
check "the lock file a symbolic link: exit 2" [ "$rc" -eq 2 ]
check "the lock file a symbolic link: its target untouched" grep -qx target "$work/target.txt"
rm "$work/locked/$LOCK"

# --- a mount point as the folder: the temporary folder on its file system ----------------------------
mkdir "$mnt"
if mount -t tmpfs -o size=64m none "$mnt" 2>"$work/err"; then
    run export "$EX" -d "$mnt"
    check "a mount point as the folder: exit 0" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || diag "$(cat "$work/err")"
    check "a mount point: every step's .onnx there" [ "$(count "$mnt" '*.onnx')" -eq 17 ]
    run export "$EX" -d "$mnt" --no-onnx --passes none
    check "a mount point again: the set replaced" \
        [ "$(listing "$mnt")" = "$MANIFEST $(input_files no-onnx) decisions.json index.html " ]
    run export "$EX" -d "$mnt/new" --no-onnx
    check "a new folder on the mount point: exit 0" [ "$rc" -eq 0 -a -s "$mnt/new/index.html" ]
    mount -o remount,ro "$mnt"
    before=$(listing "$mnt")
    run export "$EX" -d "$mnt"
    check "a read-only folder: exit 2" [ "$rc" -eq 2 ]
    check "a read-only folder: one line naming it" one_line_naming "$mnt"
    check "a read-only folder: unchanged" [ "$(listing "$mnt")" = "$before" ]
    unmount
else
    skip "mounting a tmpfs is not permitted here ($(head -n 1 "$work/err")): the mount point untested"
fi

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

# --- SIGTERM while the export is written: no temporary folder, no lock, no half folder --------------
# sigterm_export PREPARE DIR TEMP_GLOB: runs PREPARE, exports into DIR and sends SIGTERM as
# soon as a name matching TEMP_GLOB (the temporary folder) shows; up to 5 tries until one
# lands mid-export. Sets landed (1: it did), attempt, and left (1: a temporary folder or
# the lock remained after some try).
model="$GL_SRCDIR/examples/transformer_block/model.onnx"
sigterm_export() {
    landed=0 attempt=0 left=0
    while [ "$attempt" -lt 5 ] && [ "$landed" -eq 0 ]; do
        attempt=$((attempt + 1))
        $1
        "$GL" export "$model" -d "$2" >/dev/null 2>&1 &
        pid=$!
        signal_when_shown TERM "$pid" "$3"
        wait "$pid"
        rc=$?
        [ "$sent" -eq 1 ] && [ "$rc" -gt 128 ] && landed=1
        # shellcheck disable=SC2086 # $3 is a pattern
        ls -d $3 >/dev/null 2>&1 && left=1
        [ -e "$2/$LOCK" ] && left=1
    done
}
report_landed() {
    if [ "$landed" -eq 1 ]; then
        ok "SIGTERM landed mid-export and ended the process (exit $rc)"
    else
        skip "SIGTERM never landed mid-export in $attempt tries (machine too fast or busy)"
    fi
}
# all_listed DIR: every file in DIR (not the hidden ones) is named in its manifest
all_listed() {
    for f in "$1"/*; do grep -qF "\"${f##*/}\"" "$1/$MANIFEST" || return 1; done
}
no_sig_folder() { rm -rf "$work/sig" "$work"/.sig.tmp.*; }
sigterm_export no_sig_folder "$work/sig" "$work/.sig.tmp.*"
[ "$landed" -eq 1 ] && [ -e "$work/sig" ] && left=1
check "SIGTERM during export: no half folder, no temporary folder ($attempt tries)" [ "$left" -eq 0 ]
report_landed

# Into an existing folder: its temporary folder is inside it, and the lock is held.
earlier_sig_export() {
    no_sig_folder
    "$GL" export "$model" -d "$work/sig" --passes none >/dev/null 2>&1
}
sigterm_export earlier_sig_export "$work/sig" "$work/sig/.graphlab.tmp.*"
check "SIGTERM during export into a folder: no temporary folder, no lock left ($attempt tries)" \
    [ "$left" -eq 0 ]
# the signal may land while the files are moved in: the manifest covers them still
check "SIGTERM during export into a folder: every file there is in the manifest" \
    all_listed "$work/sig"
report_landed

# --- the workbench's e, E and w: the prompt ---------------------------------------------------------
if command -v tmux >/dev/null 2>&1; then
    if [ -n "$GL_SANITIZED" ]; then TIMEOUT=60; else TIMEOUT=15; fi
    export LANG=C.UTF-8
    tui=$work/tui
    mkdir "$tui"
    work_outer=$work
    work=$tui
    . "$GL_SRCDIR/tests/tmux.sh"
    trap '$T kill-server >/dev/null 2>&1; unmount; rm -rf "$work_outer"' EXIT
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
    check "Enter exports to the folder typed" wait_for "exported 17 steps to out/e1/"
    check "the status says no .onnx" wait_for "no .onnx files"
    keys e
    check "e asks where, the last folder shown" wait_for "export this step to: out/e1_"
    check "e's prompt: no Tab (that is E's)" not_on_screen ".onnx files:"
    keys Escape
    check "e: Esc cancels" wait_for "export cancelled"
    check "e: Esc wrote nothing" [ "$(count "$tui/out/e1" '*.svg')" -eq 17 ]
    check "E without .onnx: .svg but no .onnx" \
        [ "$(count "$tui/out/e1" '*.svg')" -eq 17 -a "$(count "$tui/out/e1" '*.onnx')" -eq 0 ]
    keys e Enter
    check "e then writes where E did" wait_for "exported 00-input to out/e1/"
    check "e after E: E's files are all there still" [ "$(count "$tui/out/e1" '*.svg')" -eq 17 ]
    keys 6 -
    wait_for "3/4 rewrites" >/dev/null
    keys e Enter
    check "e inside a pass, after E" wait_for "exported 06-transpose-push-K3 to out/e1/"
    check "e after E: E's files kept, the step's added" \
        [ "$(count "$tui/out/e1" '*.svg')" -eq 18 -a -f "$tui/out/e1/06-transpose-push-K3.svg" ]
    check "e after E: its files join the manifest" \
        grep -q '"06-transpose-push-K3.onnx"' "$tui/out/e1/$MANIFEST"
    keys E Enter
    check "E again, after e" wait_for "exported 17 steps to out/e1/"
    check "E after e: the step's files removed, the pipeline's there" \
        [ "$(count "$tui/out/e1" '06-transpose-push-K3*')" -eq 0 -a \
        "$(count "$tui/out/e1" '*.onnx')" -eq 17 ]
    keys q
    wait_rc >/dev/null

    start 140 30 GRAPHLAB_EXPORT_DIR=$tui/env -- "$EX"
    wait_for "steps: ] and [" >/dev/null
    keys E
    check "\$GRAPHLAB_EXPORT_DIR: E exports there without asking" wait_for "exported 17 steps to $tui/env/"
    check "\$GRAPHLAB_EXPORT_DIR: E's status says where the weights went" \
        wait_for "(index.html, decisions.json; the steps' .onnx share"
    check "\$GRAPHLAB_EXPORT_DIR: the files are there" test -s "$tui/env/index.html"
    keys 3 e
    check "\$GRAPHLAB_EXPORT_DIR: e exports there without asking" \
        wait_for "exported 03-constant-folding to $tui/env/"
    keys 1 5 r
    wait_for "ran 15-fusion on seeded random inputs" >/dev/null
    keys Enter
    wait_for "against the reference" >/dev/null
    keys w
    check "\$GRAPHLAB_EXPORT_DIR: w writes there without asking" wait_for "wrote $tui/env/step15-"
    keys q
    wait_rc >/dev/null

    # e and w ask where at every size, with and without colour: golden prompts.
    # size | environment | keys, then the text they lead to | the keys to the prompt | golden
    while IFS='|' read -r size env to shown ask name; do
        # shellcheck disable=SC2086 # size and env are lists
        start $size $env -- "$EX"
        wait_for "steps: ] and [" >/dev/null
        # shellcheck disable=SC2086 # the keys are lists
        keys $to
        wait_for "$shown" >/dev/null
        # shellcheck disable=SC2086
        keys $ask
        check "$name: the prompt" wait_for "to: ./graphlab-export/conv_nhwc_"
        golden "$name"
        check "$name: fits the terminal" fits ${size% *} ${size#* }
        keys Escape
        check "$name: Esc cancels" wait_for "cancelled"
        keys q
        wait_rc >/dev/null
    done <<CASES
80 24|NO_COLOR=1|6|step 6/16|e|prompt-e-80x24
200 60||6|step 6/16|e|prompt-e-200x60
80 24|GRAPHLAB_STABLE_TIMES=1|1 5 r|ran 15-fusion on seeded|s Enter w|prompt-w-80x24
200 60|NO_COLOR=1 GRAPHLAB_STABLE_TIMES=1|1 5 r|ran 15-fusion on seeded|s Enter w|prompt-w-200x60
CASES
    check "the prompts wrote nothing" [ ! -e "$tui/graphlab-export" ]
    start 120 30 -- "$EX"
    wait_for "steps: ] and [" >/dev/null
    keys 1 5 r
    wait_for "ran 15-fusion on seeded random inputs" >/dev/null
    keys Enter
    wait_for "against the reference" >/dev/null
    keys w C-u
    keys -l "out/tensors"
    keys Enter
    check "w: Enter writes into the folder typed" wait_for "wrote out/tensors/step15-"
    check "w: the .pb is there" sh -c "ls '$tui'/out/tensors/step15-*.pb"
    keys e
    check "e after w: the folder w wrote to shown" wait_for "export this step to: out/tensors_"
    keys q
    wait_rc >/dev/null
    check "no temporary folder left by the workbench" no_temp "$tui"
else
    skip "tmux not found: E's prompt untested"
fi

tap_done
