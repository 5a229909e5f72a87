#!/bin/sh
# bench_readme.sh — bench/README.md lists every benchmark in bench/ (bench_*.c, *.sh,
# *.js, *.py) in its table, so none is there without a word on what it measures and
# how to run it.
. "$GL_SRCDIR/tests/tap.sh"
readme="$GL_SRCDIR/bench/README.md"
n=0
for f in "$GL_SRCDIR"/bench/bench_*.c "$GL_SRCDIR"/bench/*.sh "$GL_SRCDIR"/bench/*.js \
         "$GL_SRCDIR"/bench/*.py; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    n=$((n + 1))
    check "bench/README.md lists $name" grep -q "^| .*\`$name\`.* |" "$readme"
done
check "bench/ has benchmarks to list ($n)" [ "$n" -gt 0 ]
tap_done
