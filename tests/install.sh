#!/bin/sh
# install.sh — `make install DESTDIR=...` puts the program, its manual page and the
# bundled examples where the installed program finds them; the page carries the version
# and renders without warnings.
. "$GL_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"

# The build's own make, away from the jobserver of a make that runs this test.
(cd "$GL_BUILDDIR" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s install \
    DESTDIR="$root") >"$tmp/log" 2>&1
rc=$?
check "make install DESTDIR=...: exit 0" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || diag "$(tail -n 5 "$tmp/log")"

bin=$(find "$root" -path '*/bin/graphlab' -type f)
page=$(find "$root" -path '*/man1/graphlab.1' -type f)
example=$(find "$root" -path '*/examples/conv_nhwc/model.onnx' -type f)
check "installs bin/graphlab" [ -x "$bin" ]
check "installs man1/graphlab.1" [ -s "$page" ]
check "installs the bundled examples" [ -s "$example" ]
for f in transformer_block/model.onnx tiny_if/model.onnx mlp_external/weights.bin; do
    check "installs examples/$f" [ -s "$(dirname "$(dirname "$example")")/$f" ]
done

# No MODEL, stdout not a terminal: the summary of the installed copy of the example.
"$bin" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
check "installed graphlab with no MODEL: exit 0" [ "$rc" -eq 0 ]
check "...summarises the example installed beside it" grep -qF "model      $example (" "$tmp/out"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/err")"
"$bin" --help >"$tmp/help"
check "installed graphlab --help names that example" grep -qF "no MODEL: $example" "$tmp/help"

version=$("$bin" --version)
check "the page carries the version ($version)" grep -qF "\"$version\"" "$page"
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man --warnings -l "$page" >"$tmp/page" 2>"$tmp/warn"
    rc=$?
    check "man -l renders the page" sh -c "[ $rc -eq 0 ] && grep -q 'graphlab optimize MODEL' '$tmp/page'"
    check "...without warnings" [ ! -s "$tmp/warn" ]
    [ -s "$tmp/warn" ] && diag "$(head -n 5 "$tmp/warn")"
elif command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$page" 2>"$tmp/warn"
    check "groff renders the page without warnings" sh -c "[ $? -eq 0 ] && [ ! -s '$tmp/warn' ]"
else
    skip "neither man nor groff installed: the page is not rendered"
fi
tap_done
