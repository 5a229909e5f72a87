#!/bin/sh
# keep_weights.sh — `optimize -o` writes only the weights a pass changed (issue 23).
#
# An initializer whose bytes are still those loaded from the input's external-data file
# is not written again: the output points at it there (ONNX external data, location and
# offset). ONNX Runtime refuses a location outside the model's folder, so the file is
# reached from OUT's folder through a hard link "OUT.NAME" (no bytes on one file system),
# or under its own name when OUT is in the input's folder. Only changed tensors go to
# OUT.data. The link is the input: no later save writes into it, replaces it or removes
# it. --self-contained writes every weight into OUT.data, a folder that works alone.
#
# Models: examples/mlp_external (always) and a small GPT-like decoder from
# bench/make_big_decoder.py when /usr/bin/python3 has onnx. Before issue 23 every check on
# the link and on the bytes written failed: OUT.data held a whole copy of the weights.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
ORT_NODE="${ORT_DIR:-${GL_ORT_NODE:-/work/ort}}"
work=$(mktemp -d "${TMPDIR:-/tmp}/glkeep.XXXXXX")
trap 'rm -rf "$work"' EXIT

run() {
    "$GL" "$@" >"$work/out" 2>"$work/err" </dev/null
    rc=$?
}
inode() { stat -c '%d:%i' "$1" 2>/dev/null; }
sum() { cksum <"$1"; }
size_of() { if [ -e "$1" ]; then stat -c %s "$1"; else echo 0; fi; }
# ort_matches MODEL DATA: ONNX Runtime loads MODEL and computes DATA's outputs
ort_matches() {
    node "$GL_SRCDIR/bench/ort_time.js" --ort "$ORT_NODE" --model "$1" --data "$2" \
        --warmup 0 --runs 1 >"$work/ort" 2>&1 </dev/null &&
        awk -F'"max_abs_vs_data":' '{ split($2, v, /[,}]/); exit !(v[1] != "" && v[1] + 0 < 1e-3) }' \
            "$work/ort" || { sed 's/^/# /' "$work/ort"; return 1; }
}
have_ort() { command -v node >/dev/null 2>&1 && [ -d "$ORT_NODE/node_modules/onnxruntime-node" ]; }

# Each model is copied into the work folder: the links made are then on one file system
# with it, and the copy may be deleted (the folder that must work alone).
cp -r "$GL_SRCDIR/examples/mlp_external" "$work/mlp"
models="$work/mlp/model.onnx|weights.bin"
if /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null &&
   /usr/bin/python3 "$GL_SRCDIR/bench/make_big_decoder.py" "$work/dec" --layers 2 --hidden 256 \
       --heads 4 >/dev/null 2>&1 &&
   /usr/bin/python3 "$GL_SRCDIR/tests/data/make_changed_weights.py" "$work/changed" >/dev/null 2>&1
then
    models="$models
$work/dec/model.onnx|weights.data
$work/changed/model.onnx|weights.data"
    # constant folding makes Transpose(w1) a new tensor: written; w2 kept
    run optimize "$work/changed/model.onnx" -o "$work/changed-out.onnx"
    check "changed: one weight kept in place, the folded one written into the model" \
        sh -c "[ $rc -eq 0 ] && grep -q 'weights: 1 tensor ([0-9.]* [KM]*i*B) kept in place' '$work/out' &&
               [ \$(stat -c %s '$work/changed-out.onnx') -gt 16384 ]"
else
    skip "the small decoder and a changed weight: /usr/bin/python3 has no onnx and numpy"
fi

# model | its data file's name
while IFS='|' read -r model data; do
    src=$(dirname "$model") name=$(basename "$src")
    orig="$src/$data" out="$work/out-$name" link="$work/out-$name/model.onnx.$data"
    before=$(sum "$orig")
    mkdir "$out" "$work/alone-$name"
    # first a whole copy there, as every optimize wrote before: the next one drops it
    run optimize "$model" --self-contained -o "$out/model.onnx"
    run optimize "$model" -o "$out/model.onnx"
    check "$name: optimize -o: exit 0" [ "$rc" -eq 0 ]
    check "$name: the earlier save's whole copy in OUT.data is gone" \
        [ ! -e "$out/model.onnx.data" ]
    check "$name: OUT.$data is a hard link to the input's $data (same inode)" \
        [ "$(inode "$link")" = "$(inode "$orig")" ]
    check "$name: OUT.data holds only changed tensors: smaller than $data" \
        [ "$(size_of "$out/model.onnx.data")" -lt "$(size_of "$orig")" ]
    check "$name: stdout says which weights were kept in place" grep -q 'kept in place' "$work/out"
    check "$name: the input's $data is byte-identical" [ "$(sum "$orig")" = "$before" ]
    run run "$out/model.onnx" --data "$src/test_data_set_0"
    check "$name: the output runs to the data set's outputs in graphlab" [ "$rc" -eq 0 ]
    if have_ort; then
        check "$name: ONNX Runtime loads the output and computes the data set's outputs" \
            ort_matches "$out/model.onnx" "$src/test_data_set_0"
    else
        skip "$name in ONNX Runtime: no onnxruntime-node in $ORT_NODE (set ORT_DIR)"
    fi

    # Again into the same folder: its link is the input, left as it is.
    run optimize "$model" -o "$out/model.onnx"
    check "$name: optimize -o again into the folder with the link: exit 0" [ "$rc" -eq 0 ]
    check "$name: ... the link is still the input's file" [ "$(inode "$link")" = "$(inode "$orig")" ]
    check "$name: ... the input's $data is byte-identical" [ "$(sum "$orig")" = "$before" ]

    # The output optimized in its own folder: points at the link under its own name.
    run optimize "$out/model.onnx" -o "$out/second.onnx"
    check "$name: optimizing the output beside itself: exit 0, no second link" \
        sh -c "[ $rc -eq 0 ] && [ ! -e '$out/second.onnx.model.onnx.$data' ]"
    run run "$out/second.onnx" --data "$src/test_data_set_0"
    check "$name: ... and it runs to the data set's outputs" [ "$rc" -eq 0 ]
    run optimize "$out/model.onnx" -o "$out/model.onnx"
    check "$name: -o onto the input model itself: refused, exit 2" [ "$rc" -eq 2 ]

    # A user's hard link to the input's data where OUT.data goes: never written into.
    hard="$work/hard-$name"
    mkdir "$hard" && ln "$orig" "$hard/model.onnx.data"
    run optimize "$model" -o "$hard/model.onnx"
    check "$name: OUT.data a hard link to the input's data: not written into or removed" \
        sh -c "[ '$(inode "$orig")' = \"\$(stat -c '%d:%i' '$hard/model.onnx.data')\" ] &&
               [ \"\$(cksum <'$orig')\" = '$before' ]"

    # A symbolic link where the hard link goes: refused, its target untouched.
    sym="$work/sym-$name"
    mkdir "$sym" && echo victim >"$work/victim-$name" && ln -s "$work/victim-$name" "$sym/model.onnx.$data"
    run optimize "$model" -o "$sym/model.onnx"
    check "$name: a symbolic link at OUT.$data: exit 2, one line naming it" \
        sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$work/err') -eq 1 ] && grep -qF 'model.onnx.$data' '$work/err'"
    check "$name: ... its target untouched" [ "$(cat "$work/victim-$name")" = victim ]

    # --self-contained: no link, every weight in OUT.data; works once the input is gone.
    cp -r "$src" "$work/gone-$name"
    run optimize "$work/gone-$name/model.onnx" --self-contained -o "$work/alone-$name/model.onnx"
    check "$name: --self-contained: exit 0, no link, OUT.data" \
        sh -c "[ $rc -eq 0 ] && [ ! -e '$work/alone-$name/model.onnx.$data' ] &&
               [ -s '$work/alone-$name/model.onnx.data' ]"
    rm -rf "$work/gone-$name"
    run run "$work/alone-$name/model.onnx" --data "$src/test_data_set_0"
    check "$name: --self-contained: runs with the input deleted" [ "$rc" -eq 0 ]
    if have_ort; then
        check "$name: --self-contained: ONNX Runtime computes the data set's outputs" \
            ort_matches "$work/alone-$name/model.onnx" "$src/test_data_set_0"
    fi
done <<MODELS
$models
MODELS
# Another file system (tmpfs at /dev/shm): no hard link can be made; the weights are
# copied into OUT.data and stdout says why.
shm=$(mktemp -d /dev/shm/glkeep.XXXXXX 2>/dev/null) || shm=""
if [ -n "$shm" ] && [ "$(stat -c %d "$shm")" != "$(stat -c %d "$work/mlp")" ]; then
    run optimize "$work/mlp/model.onnx" -o "$shm/model.onnx"
    check "another file system: exit 0, the weights copied into OUT.data, stdout says why" \
        sh -c "[ $rc -eq 0 ] && [ -s '$shm/model.onnx.data' ] && [ ! -e '$shm/model.onnx.weights.bin' ] &&
               grep -q '^copied instead of kept: .*cannot link' '$work/out'"
    run run "$shm/model.onnx" --data "$work/mlp/test_data_set_0"
    check "another file system: the copy runs to the data set's outputs" [ "$rc" -eq 0 ]
    rm -rf "$shm"
else
    [ -n "$shm" ] && rm -rf "$shm"
    skip "another file system: /dev/shm is not one here"
fi
tap_done
