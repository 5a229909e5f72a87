#!/bin/sh
# bench/vs_ort.sh — graphlab's oneDNN backend next to ONNX Runtime 1.30 on the shared
# models: same inputs (each model's test_data_set_0), same thread count, ratios printed.
#
#   bench/vs_ort.sh [BUILDDIR]     BUILDDIR: a configured and built folder (default: the
#                                  current one); it runs BUILDDIR/graphlab
# Environment:
#   THREADS   threads for both runtimes (default 2)
#   RUNS      timed runs per measurement (default 20), WARMUP untimed ones before (5)
#   ROUNDS    measurements per runtime and model, interleaved; the table shows the median
#             of their medians (default 3)
#   UNFUSED_PASSES  the pass list of the "unfused" run (default: the default pipeline's
#             steps as `graphlab optimize` lists them, without its fusion step)
#   MODELS    names to run (default: every model in the corpus with a test_data_set_0)
#   ORT_DIR   where onnxruntime-node is installed (default ~/.cache/graphlab-ort; never
#             inside the source tree)
#   GL_SHARED_MODELS  the corpus (default: ../shared/models beside the tree)
#   QDQ_MODELS  a folder of quantized models (bench/quantize_corpus.sh makes one, NAME_qdq/
#             with test_data_set_0 and info.json): time those instead, graphlab
#             `--passes all --backends fused` against ORT `all` only, and give each one's
#             error against ONNX Runtime's outputs in steps of its output scale (issue 21)
# ONNX Runtime is installed on first use with `npm install --ignore-scripts` (its install
# script would fetch CUDA files); without npm or a registry the script says so and exits 0.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-.}
gl="$builddir/graphlab"
threads=${THREADS:-2}
runs=${RUNS:-20}
warmup=${WARMUP:-5}
rounds=${ROUNDS:-3}
corpus=${QDQ_MODELS:-${GL_SHARED_MODELS:-$srcdir/../shared/models}}
ort_dir=${ORT_DIR:-${HOME:-/tmp}/.cache/graphlab-ort}
ort_version=1.30.0

if [ ! -x "$gl" ]; then
    echo "bench/vs_ort.sh: no $gl; build first (make -C BUILDDIR graphlab)" >&2
    exit 2
fi
case "$(cd "$(dirname "$ort_dir")" 2>/dev/null && pwd)/" in
"$srcdir"/*) echo "bench/vs_ort.sh: ORT_DIR must be outside the source tree" >&2; exit 2 ;;
esac
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "bench/vs_ort.sh: skipped: node and npm are needed to run ONNX Runtime"
    exit 0
fi
if [ ! -d "$corpus" ]; then
    echo "bench/vs_ort.sh: skipped: no model corpus at $corpus"
    exit 0
fi

installed() {
    node -e "process.exit(require('$ort_dir/node_modules/onnxruntime-node/package.json')
             .version === '$ort_version' ? 0 : 1)" 2>/dev/null
}
if ! installed; then
    echo "installing onnxruntime-node@$ort_version into $ort_dir ..." >&2
    mkdir -p "$ort_dir"
    if ! (cd "$ort_dir" && npm install --ignore-scripts --no-audit --no-fund --silent \
            "onnxruntime-node@$ort_version" >&2) || ! installed; then
        echo "bench/vs_ort.sh: skipped: cannot install onnxruntime-node@$ort_version" \
             "(no network or registry?)"
        exit 0
    fi
fi

# json_ms FILE RUN: runs.RUN.median_ms of a graphlab profile --json, or of ort_time.js
json_ms() {
    node -e "const d = JSON.parse(require('fs').readFileSync('$1', 'utf8'));
             const r = '$2' ? d.runs['$2'] : d; console.log(r.median_ms)"
}
# median of the numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                                        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs_ort.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

names=${MODELS:-$(for d in "$corpus"/*/; do
    [ -f "$d/model.onnx" ] && [ -d "$d/test_data_set_0" ] && basename "$d"; done)}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
# ort_measure M DATA LEVEL: one ort_time.js measurement (its JSON in $tmp/ort.json), the
# median appended to $tmp/LEVEL; on failure its message is in $tmp/err
ort_measure() {
    node "$srcdir/bench/ort_time.js" --ort "$ort_dir" --model "$1" --data "$2" \
        --threads "$threads" --warmup "$warmup" --runs "$runs" --level "$3" \
        >"$tmp/ort.json" 2>"$tmp/err" && json_ms "$tmp/ort.json" "" >>"$tmp/$3"
}

# ---- QDQ_MODELS: the quantized models, fused graphlab against ORT all --------------------------

# info_scale DIR: the scale of DIR's first graph output (info.json, make_qdq_models.py)
info_scale() {
    node -e "console.log(require('$1/info.json').outputs[0].scale)"
}
# steps ABS SCALE: ABS in steps of SCALE
steps() {
    awk -v a="$1" -v s="$2" 'BEGIN { printf "%.2f", a / s }'
}
# profile_fused M DATA: one `profile --passes all --backends fused` measurement into
# $tmp/out.json; a run over the data set's (float) tolerance still counts (exit 1)
profile_fused() {
    "$gl" profile "$1" --data "$2" --backends fused --threads "$threads" --passes all \
        --reps "$runs" --warmup "$warmup" --json >"$tmp/out.json" 2>"$tmp/err"
    [ $? -le 1 ] && json_ms "$tmp/out.json" fused >/dev/null 2>&1
}
qdq_table() {
    echo "QDQ models of $corpus: graphlab profile --passes all --backends fused vs" \
         "onnxruntime-node $ort_version level all: $threads threads, $warmup warm-up + $runs" \
         "timed runs, median of $rounds rounds (ms); load average $(loadavg)"
    printf '%-32s %9s %9s %8s %9s %9s %9s\n' model "gl fused" "ORT all" "fus/all" \
        "ref err" "fused err" "ORT err"
    for name in $names; do
        dir="$corpus/$name"
        data="$dir/test_data_set_0"
        if [ ! -f "$dir/info.json" ] || [ ! -d "$data" ]; then
            printf '%-32s %s\n' "$name" "failed: no $dir/info.json or $data"
            continue
        fi
        scale=$(info_scale "$dir")
        : >"$tmp/fused" && : >"$tmp/all"
        failed=""
        # exit 1: over the float tolerance, as int8 results are; the max_abs is what counts
        "$gl" run "$dir/model.onnx" --data "$data" --backend ref >"$tmp/ref.out" 2>"$tmp/err" ||
            true
        ref_abs=$(sed -n 's/^[^ ]*: max_abs \([^,]*\),.*/\1/p' "$tmp/ref.out" | head -n 1)
        [ -n "$ref_abs" ] || failed="graphlab run --backend ref: $(head -1 "$tmp/err")"
        r=0
        while [ "$r" -lt "$rounds" ] && [ -z "$failed" ]; do
            if profile_fused "$dir/model.onnx" "$data"; then
                json_ms "$tmp/out.json" fused >>"$tmp/fused"
                fused_abs=$(node -e "const r = require('$tmp/out.json').runs.fused;
                    console.log(Math.max(...(r.expected || []).map((e) => e.max_abs)))")
            else
                failed="graphlab --passes all --backends fused: $(head -1 "$tmp/err")"
            fi
            ort_measure "$dir/model.onnx" "$data" all || failed="ORT all: $(head -1 "$tmp/err")"
            r=$((r + 1))
        done
        [ -z "$failed" ] || { printf '%-32s failed: %s\n' "$name" "$failed"; continue; }
        ort_abs=$(node -e "console.log(require('$tmp/ort.json').max_abs_vs_data)")
        f=$(median <"$tmp/fused")
        a=$(median <"$tmp/all")
        awk -v n="$name" -v f="$f" -v a="$a" -v re="$(steps "$ref_abs" "$scale")" \
            -v fe="$(steps "$fused_abs" "$scale")" -v oe="$(steps "$ort_abs" "$scale")" \
            'BEGIN { printf "%-32s %9.3f %9.3f %7.2fx %9s %9s %9s\n", n, f, a, f / a, re, fe, oe }'
    done | tee "$tmp/table"
    awk '$4 ~ /x$/ { s += log($4 + 0); n++ }
         END { if (n) printf "geometric mean of fus/all over %d models: %.2fx\n", n, exp(s / n) }' \
        "$tmp/table"
    echo "load average at the end: $(loadavg)"
    echo "(fus/all: graphlab's time over ORT's, below 1 graphlab is faster; errors: max abs"
    echo " against the data set's outputs (ORT level all, 1 thread) in steps of the output's"
    echo " scale, info.json's: ref = graphlab's reference run, fused = graphlab fused, ORT ="
    echo " ORT all at $threads threads)"
}
if [ -n "${QDQ_MODELS:-}" ]; then
    qdq_table
    exit 0
fi

echo "graphlab profile --backends dnnl vs onnxruntime-node $ort_version: $threads threads," \
     "$warmup warm-up + $runs timed runs, median of $rounds rounds (ms); load average" \
     "$(loadavg)"
# three graphlab runs per round: the model as it is (one primitive per original op, next to
# ORT with no graph optimization), the default pipeline without its last step (unfused) and
# with it (fused, next to ORT at level all)
# the default pipeline's steps, as optimize prints them ("07-constant-folding ..."), less fusion
default_steps() {
    "$gl" optimize "$srcdir/examples/conv_nhwc/model.onnx" -o "$tmp/steps.onnx" 2>/dev/null |
        sed -n 's/^[0-9][0-9]-\([a-z-]*\) .*/\1/p' | grep -vx 'input\|fusion' | paste -sd, -
}
unfused_passes=${UNFUSED_PASSES:-$(default_steps)}
if [ -z "$unfused_passes" ]; then
    echo "bench/vs_ort.sh: cannot read the default pipeline from graphlab optimize" >&2
    exit 2
fi
printf '%-32s %9s %9s %9s %9s %9s %8s %8s %8s\n' model "gl none" "gl unfus" "gl fused" \
    "ORT dis" "ORT all" "none/dis" "fus/all" "unf/fus"
for name in $names; do
    m="$corpus/$name/model.onnx"
    data="$corpus/$name/test_data_set_0"
    : >"$tmp/gl" && : >"$tmp/unfused" && : >"$tmp/fused" && : >"$tmp/disabled" && : >"$tmp/all"
    failed=""
    r=0
    while [ "$r" -lt "$rounds" ] && [ -z "$failed" ]; do
        for run in gl:none unfused:$unfused_passes fused:all; do
            if "$gl" profile "$m" --data "$data" --backends dnnl --threads "$threads" \
                    --passes "${run#*:}" --reps "$runs" --warmup "$warmup" --json \
                    >"$tmp/out.json" 2>"$tmp/err"; then
                json_ms "$tmp/out.json" dnnl >>"$tmp/${run%%:*}"
            else
                failed="graphlab --passes ${run#*:}: $(head -1 "$tmp/err")"
            fi
        done
        for level in disabled all; do
            if ort_measure "$m" "$data" "$level"; then
                # the data set's outputs vouch for the inputs both runtimes were given
                node -e "process.exit(require('$tmp/ort.json').max_abs_vs_data <= 1e-3 ? 0 : 1)" ||
                    failed="ORT $level: outputs differ from $data/output_*.pb"
            else
                failed="ORT $level: $(head -1 "$tmp/err")"
            fi
        done
        r=$((r + 1))
    done
    if [ -n "$failed" ]; then
        printf '%-32s %s\n' "$name" "failed: $failed"
        continue
    fi
    g=$(median <"$tmp/gl")
    u=$(median <"$tmp/unfused")
    f=$(median <"$tmp/fused")
    d=$(median <"$tmp/disabled")
    a=$(median <"$tmp/all")
    awk -v n="$name" -v g="$g" -v u="$u" -v f="$f" -v d="$d" -v a="$a" \
        'BEGIN { printf "%-32s %9.3f %9.3f %9.3f %9.3f %9.3f %7.2fx %7.2fx %7.2fx\n",
                 n, g, u, f, d, a, g / d, f / a, u / f }'
done
echo "(none/dis, fus/all: graphlab's time over ORT's, below 1 graphlab is faster; unf/fus:"
echo " what fusion buys, the default pipeline without and with its fusion step)"
