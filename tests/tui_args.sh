#!/bin/sh
# tui_args.sh — the workbench's command line (issue 24): `graphlab MODEL --set PASS.OPT=V`
# as every command takes it, before or after MODEL, with $GRAPHLAB_SET still read (for
# scripts) and the flag winning over it for the same option; a bad one refused before
# the terminal is touched. The effect is seen through a real terminal (tmux, as tui.sh):
# transpose-push.fault=2 adds a node 'fault' in step 6's diff.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
export LANG=C.UTF-8
. "$GL_SRCDIR/tests/tmux.sh"
CONV="$SRC/examples/conv_nhwc/model.onnx"
FAULT="+ Add 'fault'"

# size | environment | the command line after graphlab | whether step 6's diff has the fault
while IFS='|' read -r size env args fault; do
    [ -n "$size" ] || continue
    what="${env:+$env }graphlab $args"
    # shellcheck disable=SC2086 # size, env and args are lists
    start $size $env -- $args
    check "$what: opens" wait_for "| step 0/16"
    keys 6 d
    check "$what: at step 6's diff" wait_for "diff: 06-transpose-push against 05-dce"
    settle
    if [ "$fault" = yes ]; then
        check "$what: the fault's rewrite in the diff" wait_for "$FAULT"
    else
        check "$what: no fault in the diff" not_on_screen "$FAULT"
    fi
    keys q
    check "$what: q exits 0" [ "$(wait_rc)" = 0 ]
done <<CASES
80 24||$CONV --set transpose-push.fault=2|yes
200 60|NO_COLOR=1|--set=transpose-push.fault=2 $CONV|yes
200 60||$CONV|no
80 24|GRAPHLAB_SET=transpose-push.fault=2|$CONV|yes
80 24|GRAPHLAB_SET=transpose-push.fault=2|$CONV --set transpose-push.fault=0|no
80 24|GRAPHLAB_SET=transpose-push.fault=0|$CONV --set transpose-push.fault=2 --data $SRC/examples/conv_nhwc/test_data_set_0|yes
CASES

# A bad --set: exit 2 with one line naming it, before any terminal; so with no terminal.
"$GL" "$CONV" --set nope.x=1 </dev/null >"$work/out" 2>"$work/err"
rc=$?
check "a bad --set: exit 2" [ "$rc" -eq 2 ]
check "...one line naming it" sh -c "[ \$(wc -l <'$work/err') -eq 1 ] && grep -qF -- \"--set: 'nope.x'\" '$work/err'"
GRAPHLAB_SET=nope.y=1 "$GL" "$CONV" --set fusion.units=0 </dev/null >"$work/out" 2>"$work/err"
rc=$?
check "a bad \$GRAPHLAB_SET with a good --set: exit 2 naming the variable" \
    sh -c "[ $rc -eq 2 ] && grep -qF \"graphlab: GRAPHLAB_SET: --set: 'nope.y'\" '$work/err'"
"$GL" "$CONV" --set </dev/null >"$work/out" 2>"$work/err"
rc=$?
check "--set without a value: exit 2" \
    sh -c "[ $rc -eq 2 ] && grep -qxF 'graphlab: --set needs a setting PASS.OPT=V (see graphlab --help)' '$work/err'"
"$GL" "$CONV" --set fusion.units=0 </dev/null >"$work/out" 2>"$work/err"
rc=$?
check "a good --set without a terminal: the summary, exit 0" \
    sh -c "[ $rc -eq 0 ] && grep -q Relu '$work/out'"

tap_done
