#!/bin/sh
# optimize_write.sh — what `graphlab optimize M -o OUT/model.onnx` costs on a model with
# big external weights (issue 23): wall, user+sys CPU and peak RSS (/usr/bin/time), and
# the bytes it wrote (files of OUT that are not a link to the input's data), the median
# of RUNS runs, each into a fresh folder beside the model's file system's temp folder.
#
#   bench/optimize_write.sh [BUILDDIR] [MODEL] [-- OPTIMIZE OPTIONS...]
#
# BUILDDIR defaults to ./build, MODEL to /tmp/graphlab-bench/decoder/model.onnx
# (bench/make_big_decoder.py). RUNS (default 3), OUTDIR (default: a folder made in
# TMPDIR, removed at the end). Run it with an older build folder for the "before" row;
# `-- --self-contained` times the whole copy. Wall time on a shared machine is inflated
# by the others' load: user+sys is the steadier number.
set -u
build=${1:-build}
model=${2:-/tmp/graphlab-bench/decoder/model.onnx}
[ $# -ge 2 ] && shift 2 || shift $#
[ "${1:-}" = "--" ] && shift
runs=${RUNS:-3}
gl="$build/graphlab"
[ -x "$gl" ] || { echo "optimize_write.sh: no graphlab in '$build'" >&2; exit 2; }
[ -f "$model" ] || { echo "optimize_write.sh: no model '$model' (bench/make_big_decoder.py writes it)" >&2; exit 2; }
case "$runs" in '' | *[!0-9]* | 0) echo "optimize_write.sh: RUNS must be a positive number, not '$runs'" >&2; exit 2 ;; esac
tmp=${OUTDIR:-$(mktemp -d "${TMPDIR:-/tmp}/gl-optwrite.XXXXXX")}
[ -n "${OUTDIR:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp" || exit 2

# the inodes of the model's own folder's files: a file of OUT that is one is a link, no bytes
inputs=$(find "$(dirname "$model")" -maxdepth 1 -type f -exec stat -c '%d:%i' {} + | sort)
written_bytes() {
    total=0
    for f in "$1"/*; do
        [ -f "$f" ] || continue
        if ! echo "$inputs" | grep -qx "$(stat -c '%d:%i' "$f")"; then
            total=$((total + $(stat -c %s "$f")))
        fi
    done
    echo "$total"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$tmp/rows"
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    out="$tmp/run$i"
    rm -rf "$out" && mkdir "$out"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$gl" optimize "$model" -o "$out/model.onnx" "$@" \
        >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    echo "$wall $(echo "$user + $sys" | bc) $rss $(written_bytes "$out")" >>"$tmp/rows"
    rm -rf "$out"
done
echo "# $gl optimize $model -o OUT/model.onnx $*: median of $runs"
printf '%-10s %-12s %-14s %s\n' wall_s cpu_s peak_rss_MB written_MB
printf '%-10s %-12s %-14s %s\n' \
    "$(cut -d' ' -f1 "$tmp/rows" | median)" "$(cut -d' ' -f2 "$tmp/rows" | median)" \
    "$(cut -d' ' -f3 "$tmp/rows" | median | awk '{ printf "%.0f", $1 / 1024 }')" \
    "$(cut -d' ' -f4 "$tmp/rows" | median | awk '{ printf "%.1f", $1 / 1e6 }')"
grep '^weights:' "$tmp/stdout" || true
