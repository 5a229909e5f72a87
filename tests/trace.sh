#!/bin/sh
# trace.sh — `graphlab profile --trace` opens cleanly in Perfetto (issue 24): every run on
# a track of its own named for it, slices nested (a group's members, a Loop's or If's
# body, the nodes of a run inside its model_run), no node slice of length 0, the provider
# saying what ran the node. tests/trace_check.py holds a trace to that, on the examples
# with every backend; it refuses tests/data/trace_before_issue24.json (lines of a trace
# from before: a node of 0 us, slices ending 1 us after their parents, no track names).
# profile.sh holds the same trace to ONNX Runtime's profile format.
. "$GL_SRCDIR/tests/tap.sh"
GL="$GL_BUILDDIR/graphlab"
EX="$GL_SRCDIR/examples"
CHECK="$GL_SRCDIR/tests/trace_check.py"
CONF="$GL_SRCDIR/../shared/conformance/node"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gltrace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ -z "${GL_PYTHON:-}" ] || ! "$GL_PYTHON" -c 'import json' 2>/dev/null; then
    skip "no Python to read the traces with"
    tap_done
    exit
fi

# trace NAME RUNS ARGS...: profile --trace with ARGS, then the checker, naming RUNS' tracks
trace() {
    name=$1 runs=$2
    shift 2
    "$GL" profile "$@" --reps 2 --warmup 1 --trace "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "$name: exit 0" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || diag "$(cat "$tmp/err")"
    check "$name: Perfetto's nesting, names and lengths" "$GL_PYTHON" "$CHECK" "$tmp/t.json" "$runs"
    "$GL_PYTHON" "$CHECK" "$tmp/t.json" "$runs" | head -n 10 | while read -r l; do diag "$l"; done
}

# --- the checker refuses the trace of before ----------------------------------------------
"$GL_PYTHON" "$CHECK" "$GL_SRCDIR/tests/data/trace_before_issue24.json" >"$tmp/old"
rc=$?
check "the trace of before: refused (exit 1)" [ "$rc" -eq 1 ]
for problem in "node slice 'v_transpose_kernel_time' .*dur is 0" \
               "'SequentialExecutor::Execute' .* ends 1.000 us after its parent 'model_run'" \
               "'qk_matmul_kernel_time' .* ends 1.000 us after its parent 'k_transpose_last2" \
               "no process_name" "tid 2: no thread_name" "tid 3: no thread_sort_index"; do
    check "...says: $problem" grep -q "$problem" "$tmp/old"
done

# --- every example, every backend ---------------------------------------------------------
dnnl=0
"$GL" run "$EX/conv_nhwc/model.onnx" --backend dnnl >/dev/null 2>&1 && dnnl=1
for m in conv_nhwc transformer_block tiny_if mlp_external; do
    dim=""
    [ "$m" = transformer_block ] && dim="--dim seq=3"
    # shellcheck disable=SC2086 # dim is a list
    trace "$m, ref" ref "$EX/$m/model.onnx" $dim --backends ref
    if [ "$dnnl" -eq 1 ]; then
        # shellcheck disable=SC2086
        trace "$m, ref and dnnl" ref,dnnl "$EX/$m/model.onnx" $dim --backends ref,dnnl
        # shellcheck disable=SC2086
        trace "$m, ref, unfused and fused" ref,unfused,fused "$EX/$m/model.onnx" $dim --passes all
    fi
done
[ "$dnnl" -eq 1 ] || skip "dnnl, unfused and fused runs: built without oneDNN"

# what the tracks say, on conv_nhwc's default runs (its groups run as bodies on ref)
if [ "$dnnl" -eq 1 ]; then
    trace "conv_nhwc, the default runs" ref,unfused,fused "$EX/conv_nhwc/model.onnx" --passes all
    "$GL_PYTHON" - "$tmp/t.json" >"$tmp/tracks" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))
names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
order = {e["tid"]: e["args"]["sort_index"] for e in events if e.get("name") == "thread_sort_index"}
print("tracks:", ", ".join(names[t] for t in sorted(names, key=order.get)))
ref = [t for t, n in names.items() if n == "ref"][0]
for e in events:
    if e.get("cat") == "Node" and e["tid"] == ref and e["name"].startswith("conv1_"):
        group = [g for g in events if g.get("cat") == "Node" and g["tid"] == ref and
                 g["name"] == "FusedNhwcConvRelu_1_kernel_time" and g["ts"] <= e["ts"]]
        g = max(group, key=lambda g: g["ts"])
        inside = g["ts"] < e["ts"] and e["ts"] + e["dur"] < g["ts"] + g["dur"]
        print("conv1 strictly inside FusedNhwcConvRelu_1:", inside)
        break
fused = [t for t, n in names.items() if n == "fused (dnnl)"][0]
group = [e for e in events if e.get("cat") == "Node" and e["tid"] == fused and
         e["name"] == "FusedNhwcConvRelu_1_kernel_time"]
print("fused FusedNhwcConvRelu_1:", sorted({e["args"]["provider"] for e in group}))
PY
    check "...the tracks: the load, then the runs in the table's order" \
        grep -qx "tracks: load (and passes), ref, unfused (dnnl), fused (dnnl)" "$tmp/tracks"
    check "...a member's slice strictly inside its group's (ref)" \
        grep -qx "conv1 strictly inside FusedNhwcConvRelu_1: True" "$tmp/tracks"
    check "...the fused run's group on oneDNN, as its provider says" \
        grep -qx "fused FusedNhwcConvRelu_1: \['DnnlExecutionProvider'\]" "$tmp/tracks"
    while read -r l; do diag "$l"; done <"$tmp/tracks"
fi

# --- subgraph bodies: Loop, Scan, If (ONNX's conformance cases, when ../shared is there) ---
for t in test_loop11 test_scan9_sum test_if; do
    if [ -d "$CONF/$t" ]; then
        runs=ref
        [ "$dnnl" -eq 1 ] && runs=ref,dnnl
        trace "$t" "$runs" "$CONF/$t/model.onnx" --data "$CONF/$t/test_data_set_0" \
            --backends "$runs"
    else
        skip "$t: ../shared/conformance is absent"
    fi
done

# --- the object form of the format: {"traceEvents": [...]} reads the same ----------------------
"$GL_PYTHON" -c 'import json, sys
print(json.dumps({"traceEvents": json.load(open(sys.argv[1]))}))' "$tmp/t.json" >"$tmp/object.json"
check "the checker reads the object form too" "$GL_PYTHON" "$CHECK" "$tmp/object.json"

tap_done
