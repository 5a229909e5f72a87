#!/bin/sh
# hostile.sh — every file in tests/data/bad/ and tests/data/fuzz-finds/ (whatever is there:
# new fixtures are picked up by themselves) and a FIFO, through every command: info,
# info --json, optimize -o, export -d, run, run --backend dnnl, bisect, and some of them through
# the workbench under tmux.
# One TAP line per (file, command) asserts: the exit status the table below expects (2
# unless it says otherwise); for a failure exactly one line on stderr (on the restored
# terminal for the workbench) naming the file, for a success none; no crash signal and
# no hang; every file beside the input unchanged. Outside the sanitizer build (ASan
# reserves terabytes of address space) each command runs under `ulimit -v` 1 GiB, so a
# model that makes graphlab allocate without bound fails here instead of taking the
# machine. `run` gets --max-memory 256M and --max-iterations 100000, so that what it
# refuses does not depend on the machine's memory (the default limit is half of it) and an
# endless loop ends in a moment (the default cap, 2^24 iterations, takes half a minute;
# bounds.sh tests both defaults).
#
# A pair that fails today is marked TODO in the table with the finding it waits for: TAP
# "# TODO" keeps it from failing the suite. When a fix makes it pass it shows as XPASS,
# which does fail the suite: the fix removes its mark. A TODO pair expected to hang is
# given TODO_LIMIT seconds, not the full limit.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
SRC="$GL_SRCDIR"
COMMANDS="info info-json optimize export run run-dnnl bisect"
# the files also opened in the workbench: refused at load, a bad graph, calls and a loop
# the pipeline stops or folds under a cap, a FIFO
TUI_FILES="empty.onnx cycle.onnx external_escape.onnx huge_dims.onnx function_fanout.onnx
    loop_huge_trip_const.onnx fifo.onnx"

if [ -n "$GL_SANITIZED" ]; then
    LIMIT=120 VMEM_KB=
else
    LIMIT=30 VMEM_KB=1048576
fi
TODO_LIMIT=2
RUN_LIMITS="--max-memory 256M --max-iterations 100000"

# FILES|COMMANDS|STATUS|TODO — FILES a shell pattern of file names; COMMANDS a list of
# $COMMANDS and tui, or * for all of them; the first line that matches wins. A pair no
# line matches expects status 2 and no TODO. For tui, status 0 means: the workbench opens
# on the model (step 0 in the status bar) and q leaves it with 0 (a pipeline that stops
# says why on the screen). A TODO line looks like:
#   fifo.onnx|*|2|issue 9: a FIFO as the model blocks open() forever
# A TODO that starts with "san:" is a read the sanitizers catch and the plain build may
# survive by luck: TODO in the sanitizer build, skipped in the other (its outcome there
# depends on what the stray read finds).
EXPECT='
# models that load and optimize, but that run refuses
loop_*.onnx|info info-json optimize export tui|0|
huge_input.onnx|info info-json optimize export|0|
huge_intermediate.onnx|info info-json optimize export|0|
# models that load, but whose pipeline stops (with the reason) when it expands the calls
function_recursive.onnx|info info-json tui|0|
function_fanout.onnx|info info-json tui|0|
no_nodes.onnx|*|0|
# what fuzzing found (tests/data/fuzz-finds/README.md); the ops without their inputs
# (window_no_input, dft_no_input, transpose_no_input) are refused at load: status 2
range_empty.onnx|*|0|
plan_hannwindow_expanded.onnx|*|0|
# zero-size tensors (issue 26): they run; the runs are also compared below
zero_*.onnx|*|0|
# QDQ units with zero, negative, NaN and infinite scales (issue 21): they load, optimize
# (the qdq pass refuses the unit) and run as ONNX says
qdq_*.onnx|*|0|
'

# expect FILE COMMAND: sets want (the status) and todo (the finding, or empty)
expect() {
    want=2 todo=
    while IFS='|' read -r pattern cmds status reason; do
        case $pattern in '' | '#'*) continue ;; esac
        # shellcheck disable=SC2254 # the pattern is meant to match as a pattern
        case $1 in $pattern) ;; *) continue ;; esac
        case " $cmds " in *" $2 "* | " * ") ;; *) continue ;; esac
        want=$status todo=$reason
        return
    done <<EOF
$EXPECT
EOF
}

base=$(mktemp -d "${TMPDIR:-/tmp}/glhostile.XXXXXX")
trap 'rm -rf "$base"' EXIT
# Copies, so that a bug cannot destroy the fixtures, with the other files of their folder
# beside them (external data a fixture names is looked for there); the FIFO alone.
mkdir "$base/out" "$base/in" "$base/in/fifo"
cp -R "$SRC/tests/data/bad" "$SRC/tests/data/fuzz-finds" "$base/in/"
mkfifo "$base/in/fifo/fifo.onnx"
# paths below $base/in: bad/cycle.onnx, fuzz-finds/plan_hannwindow_expanded.onnx, fifo/fifo.onnx
files=$(cd "$base/in" && ls -- bad/*.onnx fuzz-finds/*.onnx fifo/*.onnx | tr '\n' ' ')
# every regular file beside the input, with its checksum (never read a FIFO)
snapshot() { find "$(dirname "$1")" -type f -exec cksum {} + | sort; }
lines() { awk 'END { print NR }' "$1"; }

# verdict STDERR: sets why from rc, want, what the program wrote on stderr (a file; none
# when the program did not end) and the input's folder (as $before had it)
verdict() {
    why=
    if [ -z "$rc" ] || [ "$rc" = hang ]; then
        why="$why; no exit within $limit s"
    elif [ "$rc" -gt 128 ]; then
        why="$why; died of signal $((rc - 128))"
    elif [ "$rc" != "$want" ]; then
        why="$why; exit status $rc, expected $want"
    fi
    if [ -z "$1" ]; then
        :
    elif [ "$want" = 0 ]; then
        # `run` ends with one line saying which passes ran and where its inputs came
        # from: a report, not a complaint; anything else is.
        grep -v '^graphlab run: passes' "$1" >"$1.rest"
        [ "$(lines "$1.rest")" -eq 0 ] || why="$why; output on stderr: $(head -n 1 "$1.rest")"
    elif [ "$rc" = "$want" ]; then
        n=$(lines "$1")
        [ "$n" -eq 1 ] || why="$why; $n lines on stderr, expected 1"
        grep -qF -- "$file" "$1" || why="$why; the message does not name $file"
    fi
    [ "$(snapshot "$input")" = "$before" ] || why="$why; the input's folder changed"
}

report() {
    if [ -n "$todo" ]; then
        todo "$todo" "$desc" [ -z "$why" ]
    else
        check "$desc" [ -z "$why" ]
    fi
    [ -z "$why" ] || diag "${why#; }"
}

# --- the commands ---------------------------------------------------------------------
for path in $files; do
    file=${path##*/} input=$base/in/$path
    before=$(snapshot "$input")
    for cmd in $COMMANDS; do
        expect "$file" "$cmd"
        case $todo in
        san:*)
            if [ -z "$GL_SANITIZED" ]; then
                skip "$file $cmd: ${todo#san: } (seen with the sanitizers only)"
                continue
            fi
            todo=${todo#san: }
            ;;
        esac
        limit=$LIMIT
        [ -n "$todo" ] && limit=$TODO_LIMIT
        rm -rf "$base/out" && mkdir "$base/out"
        case $cmd in
        info) set -- info "$input" ;;
        info-json) set -- info --json "$input" ;;
        optimize) set -- optimize "$input" -o "$base/out/o.onnx" ;;
        export) set -- export "$input" -d "$base/out/exp" ;;
        # shellcheck disable=SC2086 # RUN_LIMITS is a list of arguments
        run) set -- run "$input" $RUN_LIMITS ;;
        # shellcheck disable=SC2086
        run-dnnl) set -- run "$input" --backend dnnl $RUN_LIMITS ;;
        # shellcheck disable=SC2086
        bisect) set -- bisect "$input" $RUN_LIMITS ;;
        esac
        t0=$(date +%s)
        (
            [ -z "$VMEM_KB" ] || ulimit -v "$VMEM_KB"
            exec timeout -k 1 "$limit" "$GL" "$@"
        ) >"$base/stdout" 2>"$base/stderr" </dev/null
        rc=$?
        # timeout says 124, or 137 when the program also needed a KILL
        if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ $(($(date +%s) - t0)) -ge "$limit" ]; }; then
            rc=hang
        fi
        verdict "$base/stderr"
        desc="$file $cmd: exit $want$([ "$want" = 0 ] || echo ', one line'), no signal, input unchanged"
        report
    done
done

# --- zero-size tensors (issue 26) -------------------------------------------------------
# Each zero_*.onnx (tests/data/make_zero_models.py) on every backend, fused and not, under
# the default passes and --passes all, compared with the reference: exit 0, no signal.
for path in $files; do
    file=${path##*/} input=$base/in/$path
    case $file in zero_*.onnx) ;; *) continue ;; esac
    for how in "--backend ref --compare dnnl" "--backend dnnl --compare ref" \
        "--backend ref --compare dnnl --passes all" "--backend fused --compare ref --passes all" \
        "--backend fused --compare unfused --passes all"; do
        # shellcheck disable=SC2086 # how and RUN_LIMITS are lists of arguments
        (
            [ -z "$VMEM_KB" ] || ulimit -v "$VMEM_KB"
            exec timeout -k 1 "$LIMIT" "$GL" run "$input" $how $RUN_LIMITS
        ) >"$base/stdout" 2>"$base/stderr" </dev/null
        rc=$?
        why=
        [ "$rc" = 0 ] || why="exit status $rc: $(grep -v '^graphlab run: passes' "$base/stderr" | head -n 1)"
        check "$file run $how: exit 0, the same as the other backend" [ -z "$why" ]
        [ -z "$why" ] || diag "$why"
    done
done

# --- an export's manifest from a model with a hostile path (issue 26) -----------------------
# DIR/.graphlab-export.json records the model's path: quotes, a backslash, a newline, a
# terminal escape and a byte that is not UTF-8 in it still make a manifest that parses
# (python's json, when there is one), and the next export into the folder reads its file
# list back: the .onnx files it does not write again are removed.
hostile_dir=$base/hostile-path
mkdir "$hostile_dir"
hostile_model=$hostile_dir/$(printf 'm "q" \\ \n\033[31m \377.onnx')
cp "$SRC/examples/conv_nhwc/model.onnx" "$hostile_model"
"$GL" export "$hostile_model" -d "$base/out/hostile" --passes toposort >/dev/null 2>"$base/stderr"
rc=$?
check "a hostile model path: export exits 0" [ "$rc" = 0 ]
if [ -n "${GL_PYTHON:-}" ] && [ "$GL_PYTHON" != none ]; then
    check "a hostile model path: the manifest parses as JSON, source and files" \
        "$GL_PYTHON" -c 'import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
assert "\x1b[31m" in m["source"] and "\n" in m["source"] and "\ufffd" in m["source"], m
assert "01-toposort.onnx" in m["files"], m' "$base/out/hostile/.graphlab-export.json"
else
    skip "no python (GL_PYTHON): the manifest is not parsed as JSON"
fi
"$GL" export "$hostile_model" -d "$base/out/hostile" --passes toposort --no-onnx >/dev/null 2>&1
check "a hostile model path: the manifest read back, the .onnx removed" \
    [ "$(find "$base/out/hostile" -name '*.onnx' | wc -l)" -eq 0 ]

# --- the workbench ----------------------------------------------------------------------
if ! command -v tmux >/dev/null 2>&1; then
    skip "the workbench: tmux not found"
    tap_done
    exit
fi
export LANG=C.UTF-8
work=$base/tui
mkdir "$work"
TIMEOUT=$LIMIT
. "$GL_SRCDIR/tests/tmux.sh"
trap '$T kill-server >/dev/null 2>&1; rm -rf "$base"' EXIT
for file in $TUI_FILES; do
    path=$(for p in $files; do [ "${p##*/}" = "$file" ] && echo "$p"; done)
    [ -n "$path" ] || continue
    input=$base/in/$path
    expect "$file" tui
    limit=$LIMIT
    [ -n "$todo" ] && limit=$TODO_LIMIT
    TIMEOUT=$limit
    before=$(snapshot "$input")
    start 100 30 ${VMEM_KB:+GL_VMEM_KB=$VMEM_KB} -- "$input"
    opened=yes
    if [ "$want" = 0 ]; then
        if wait_for "| step 0/" >/dev/null; then keys q; else opened=no; fi
    fi
    rc= left=
    if [ "$opened" = yes ] && rc=$(wait_rc) && [ -n "$rc" ]; then
        # what the program left on the terminal is its stderr (wrapped lines joined)
        $T capture-pane -p -J -t t | grep -v '^$' >"$base/screen"
        left=$base/screen
    fi
    verdict "$left"
    [ "$opened" = yes ] || why="; the workbench did not open within $limit s$why"
    [ -z "$rc" ] || restored || why="$why; the terminal is not restored"
    desc="$file in the workbench: exit $want$([ "$want" = 0 ] || echo ', one line on the restored terminal'), input unchanged"
    report
    $T kill-session -t t >/dev/null 2>&1
done
tap_done
