#!/bin/sh
# saves.sh — `run --save-tensors DIR` and `run --save-outputs DIR` replace the last save
# in DIR as a whole (onnx/save_set.h). A save killed at any point (SIGKILL at an exact
# point, through the test-only GRAPHLAB_TEST_SAVE_SIGNAL) or stopped by a full disk
# leaves what a reader of DIR sees — index.json and the files it names — as the last save
# left it; the next save removes what a killed one left (its temporary folder, its files
# no index names), but never the temporary folder of a live process, a name not exactly
# of the pattern, or a file no index names.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
PY="${GL_PYTHON:-}"
conv="$EX/conv_nhwc/model.onnx"
data="$EX/conv_nhwc/test_data_set_0"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glsaves.XXXXXX")
mnt=
cleanup() {
    [ -z "$mnt" ] || umount "$mnt" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# save DIR ARGS...: run conv_nhwc with --save-tensors DIR; sets rc. Without ARGS the
# inputs are random, with --data "$data" the data set's: the tensors differ.
save() {
    dir=$1
    shift
    "$GL" run "$conv" --save-tensors "$dir" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# killed SIG:PHASE:N DIR ARGS...: save, the process sending itself SIG at that point
killed() {
    at=$1
    dir=$2
    shift 2
    env GRAPHLAB_TEST_SAVE_SIGNAL="$at" "$GL" run "$conv" --save-tensors "$dir" "$@" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# listed DIR: the files DIR/index.json names, sorted
listed() { sed -n 's/.*"file": "\(.*\)",$/\1/p' "$1/index.json" | sort; }
# seen DIR: what a reader of DIR sees: index.json and every file it names, with checksums
# (a file named but missing shows as an error line)
seen() { (cd "$1" && cksum index.json $(listed .) 2>&1); }
# exactly DIR: nothing in DIR but index.json and the files it names
exactly() { [ "$(ls -A "$1" | sort)" = "$( (echo index.json; listed "$1") | sort)" ]; }
# temps DIR: how many save temporaries DIR holds
temps() { ls -A "$1" | grep -c '^\.graphlab-save\.'; }

# clean: the last save exited 0 and left exactly index.json and its files in $dest
clean() { [ "$rc" -eq 0 ] && [ "$(temps "$dest")" -eq 0 ] && exactly "$dest"; }
# unchanged FILE: what a reader of $dest sees is what FILE recorded
unchanged() { seen "$dest" >"$tmp/now" && cmp -s "$1" "$tmp/now"; }
# files N: $dest holds N files (temporary folders apart)
files() { [ "$(ls "$dest" | wc -l)" -eq "$1" ]; }

# --- a save killed while writing, while moving, after its commit ---------------------------
# (check's own variable is d: the folder here is dest)
dest="$tmp/t"
save "$dest" --data "$data"
check "the first save: exit 0, exactly index.json and its 14 files" \
    eval 'clean && files 15'
seen "$dest" >"$tmp/first"
n=$(listed "$dest" | wc -l)

killed KILL:write:3 "$dest"
check "killed after 3 files written: exit 137 (SIGKILL)" [ "$rc" -eq 137 ]
check "...index.json and every file it names as the first save left them" \
    unchanged "$tmp/first"
check "...its temporary folder is left (SIGKILL cannot be caught)" [ "$(temps "$dest")" -eq 1 ]
save "$dest" --data "$data"
check "the next save removes the temporary folder; the first save's files are gone" clean
seen "$dest" >"$tmp/second"

killed KILL:move:3 "$dest"
check "killed after 3 files moved into DIR: exit 137" [ "$rc" -eq 137 ]
check "...index.json and the files it names unchanged" unchanged "$tmp/second"
check "...the 3 moved files are there, named by no index" files $((n + 1 + 3))
save "$dest" --data "$data"
check "the next save removes them: exactly index.json and its files" clean
seen "$dest" >"$tmp/third"

killed KILL:move:$((n + 1)) "$dest"
check "killed right after index.json moved in (the commit): exit 137" [ "$rc" -eq 137 ]
seen "$dest" >"$tmp/now"
check "...the new index, with every file it names" \
    eval '! cmp -s "$tmp/third" "$tmp/now" && [ "$(listed "$dest" | wc -l)" -eq "$n" ] &&
          ! grep -q "No such" "$tmp/now"'
check "...the old save's files are left, named by no index" files $((2 * n + 1))
save "$dest"
check "the next save removes them too" clean

# --- a save of fewer tensors replaces a save of more -----------------------------------------
save "$dest" conv1_out features
check "saving 2 tensors over 14: exactly index.json and the 2 files" eval 'clean && files 3'

# --- what is never removed ------------------------------------------------------------------
# Files no index names, whatever their name; names an index gives that no save would.
dest="$tmp/mine"
mkdir -p "$dest"
: >"$dest/0099_mine.AbCdEf.pb"
: >"$dest/notes.txt"
: >"$dest/model.onnx"
printf '{"tensors": [{"name": "m", "file": "model.onnx"}, {"name": "u", "file": "../up.pb"}]}\n' \
    >"$dest/index.json"
: >"$tmp/up.pb"
save "$dest"
save "$dest"
check "files no index named, and names no save gives, stay" \
    eval '[ "$rc" -eq 0 ] && [ -e "$dest/0099_mine.AbCdEf.pb" ] && [ -e "$dest/notes.txt" ] &&
          [ -e "$dest/model.onnx" ] && [ -e "$tmp/up.pb" ]'

# Temporary folders: only ".graphlab-save.<pid>.tmp.XXXXXX" of a process that is gone.
dest="$tmp/stale"
mkdir -p "$dest"
dead=$(sh -c 'echo $$') # that shell has ended
stale=".graphlab-save.$dead.tmp.AbC123"
mkdir "$dest/$stale"
: >"$dest/$stale/0001_x.AbC123.pb"
alive=".graphlab-save.$$.tmp.AbC123" # this shell
mkdir "$dest/$alive"
others=".graphlab-save.$dead.tmp.AbC12 .graphlab-save.0$dead.tmp.AbC123
.graphlab-save.$dead.tmp.AbC1234 .graphlab-save.$dead.tmp.AbC12_ graphlab-save.$dead.tmp.AbC123
.graphlab-export.$dead.tmp.AbC123"
for o in $others; do mkdir "$dest/$o"; done
: >"$dest/.graphlab-save.$dead.tmp.XyZ789" # a file, not a folder
save "$dest"
check "a dead process's temporary folder is removed, with its files" \
    eval '[ "$rc" -eq 0 ] && [ ! -e "$dest/$stale" ]'
check "...a live process's stays" [ -d "$dest/$alive" ]
for o in $others .graphlab-save.$dead.tmp.XyZ789; do
    check "...'$o' (not exactly the pattern, or not a folder) stays" [ -e "$dest/$o" ]
done

# A save stopped (alive) while writing: another save into DIR leaves its folder alone.
dest="$tmp/live"
env GRAPHLAB_TEST_SAVE_SIGNAL=STOP:write:1 "$GL" run "$conv" --save-tensors "$dest" \
    >/dev/null 2>&1 &
pid=$!
state() { cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null; }
polls=0
while [ "$polls" -lt 3000 ] && [ "$(state)" != T ]; do
    sleep 0.01
    polls=$((polls + 1))
done
check "a save stopped after its first file" [ "$(state)" = T ]
save "$dest"
check "...another save meanwhile: exit 0, the stopped one's folder left" \
    eval '[ "$rc" -eq 0 ] && [ -d "$(echo "$dest"/.graphlab-save.$pid.tmp.*)" ]'
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
save "$dest"
check "...once it is killed, the next save removes it" clean

# --- --save-outputs --------------------------------------------------------------------------
# A model of two outputs, the second larger: output_0.pb is written first.
dest="$tmp/outs"
if [ -n "$PY" ] && "$PY" -c 'import onnx, numpy' 2>/dev/null; then
    "$PY" - "$tmp/two.onnx" "$tmp/twodata" <<'EOF'
import os, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["small"], name="relu"),
     helper.make_node("Tile", ["x", "reps"], ["large"], name="tile")],
    "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
    [helper.make_tensor_value_info("small", TensorProto.FLOAT, [1, 1024]),
     helper.make_tensor_value_info("large", TensorProto.FLOAT, [1, 8192])],
    initializer=[numpy_helper.from_array(np.array([1, 8], np.int64), "reps")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
os.makedirs(sys.argv[2])
x = numpy_helper.from_array(np.full((1, 1024), 2.0, np.float32), "x")
open(os.path.join(sys.argv[2], "input_0.pb"), "wb").write(x.SerializeToString())
EOF
    outs() { "$GL" run "$tmp/two.onnx" --save-outputs "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
    outs "$dest" --data "$tmp/twodata"
    (cd "$dest" && cksum output_0.pb output_1.pb) >"$tmp/first"
    env GRAPHLAB_TEST_SAVE_SIGNAL=KILL:write:1 "$GL" run "$tmp/two.onnx" --save-outputs "$dest" \
        >/dev/null 2>&1
    rc=$?
    (cd "$dest" && cksum output_0.pb output_1.pb) >"$tmp/now"
    check "--save-outputs killed after output_0.pb written: exit 137, both old outputs as they were" \
        sh -c "[ $rc -eq 137 ] && cmp -s '$tmp/first' '$tmp/now'"
    : >"$dest/output_7.pb"
    outs "$dest"
    check "...the next save: exit 0, the temporary folder removed, output_7.pb too (no output 7)" \
        sh -c "[ $rc -eq 0 ] && [ \"\$(ls -A '$dest' | tr '\\n' ' ')\" = 'output_0.pb output_1.pb ' ]"
else
    skip "no python with onnx (GL_PYTHON): no two-output model for --save-outputs"
fi

# --- a full disk -----------------------------------------------------------------------------
# A small tmpfs holding the last save, filled but 20 KiB: the first new file (12 KiB) fits,
# the second (32 KiB) does not.
mnt="$tmp/mnt"
mkdir "$mnt"
if mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
    dest="$mnt/t"
    save "$dest" --data "$data"
    seen "$dest" >"$tmp/first"
    dd if=/dev/zero of="$mnt/filler" bs=4096 2>/dev/null
    truncate -s -20480 "$mnt/filler"
    save "$dest"
    check "a full disk: exit 2, one line saying so" \
        sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] &&
               grep -q 'No space left on device' '$tmp/err'"
    seen "$dest" >"$tmp/now"
    check "...index.json and the files it names as the last save left them" \
        cmp -s "$tmp/first" "$tmp/now"
    check "...nothing else left in DIR" exactly "$dest"
    if [ -e "$tmp/two.onnx" ]; then
        dest="$mnt/outs"
        rm -f "$mnt/filler"
        outs "$dest" --data "$tmp/twodata"
        (cd "$dest" && cksum output_0.pb output_1.pb) >"$tmp/first"
        dd if=/dev/zero of="$mnt/filler" bs=4096 2>/dev/null
        truncate -s -20480 "$mnt/filler"
        outs "$dest"
        (cd "$dest" && cksum output_0.pb output_1.pb) >"$tmp/now"
        check "--save-outputs on a full disk: exit 2, both old outputs as they were, nothing else" \
            sh -c "[ $rc -eq 2 ] && cmp -s '$tmp/first' '$tmp/now' &&
                   [ \"\$(ls -A '$dest' | tr '\\n' ' ')\" = 'output_0.pb output_1.pb ' ]"
    fi
    umount "$mnt"
    mnt=
else
    skip "a full disk: cannot mount a small tmpfs here (needs root)"
fi

tap_done
