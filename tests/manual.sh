#!/bin/sh
# manual.sh — the documents a newcomer reads first stay complete and true (issue 24):
#  - the manual page (graphlab --man) has a KEYS section with every key of ui/keys.def and
#    ui/views.def, and an ENVIRONMENT section naming every variable the source getenv()s,
#    so a key or a variable added without its line fails here; man renders it at 80 and
#    200 columns without a warning, and --help names the variables;
#  - README.md's top (its first 40 lines, the first screen) keeps lines of at most 100
#    columns, holds the quickstart, and its two commands are the ones CI runs: the test
#    command is a line of .ci/run and the install command installs .ci/run's packages.
. "$GL_SRCDIR/tests/tap.sh"
G="$GL_BUILDDIR/graphlab"
readme="$GL_SRCDIR/README.md"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glmanual.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$G" --man >"$tmp/page"
check "graphlab --man writes the page" [ -s "$tmp/page" ]

# A section of the page's source, from `.SH NAME` to the next .SH, roff escapes undone.
section() {
    awk -v name="$1" '$0 == ".SH " name { on = 1; next } on && /^\.SH / { exit } on' \
        "$tmp/page" | sed 's/\\-/-/g; s/\\e/\\/g; s/\\&//g'
}
# The words of a section's `.B` lines (the tags of its entries), one per line.
tags() { sed -n 's/^\.B //p' | tr ' ,' '\n\n' | grep -v '^$' | sort -u; }

# ---- KEYS ----
section KEYS >"$tmp/keys"
tags <"$tmp/keys" >"$tmp/key_tags"
check "the page has a KEYS section" [ -s "$tmp/key_tags" ]
# The key names: the first quoted string of each GL_REQ( and GL_VIEW( row.
grep -h -E '^GL_(REQ|VIEW)\(' "$GL_SRCDIR/ui/keys.def" "$GL_SRCDIR/ui/views.def" |
    sed -n 's/^[^"]*"\([^"]*\)".*/\1/p' >"$tmp/key_rows"
rows=$(wc -l <"$tmp/key_rows" | tr -d ' ')
entries=$(grep -c '^\.TP' "$tmp/keys")
# (more than 30 rows: fewer means the extraction broke)
check "KEYS has one entry per request of keys.def ($entries entries, $rows requests)" \
    sh -c "[ $rows -gt 30 ] && [ $entries -eq $rows ]"
tr ' ' '\n' <"$tmp/key_rows" | grep -v '^$' | sort -u >"$tmp/key_names"
# A run of digits is written as a range (0-9), as the `?` screen does.
grep -E '^[0-9]-[0-9]$' "$tmp/key_tags" >"$tmp/ranges" || :
listed() {
    grep -qxF -- "$1" "$tmp/key_tags" && return 0
    case $1 in
    [0-9]) while IFS=- read -r lo hi; do [ "$1" -ge "$lo" ] && [ "$1" -le "$hi" ] && return 0
           done <"$tmp/ranges" ;;
    esac
    return 1
}
missing=
while read -r key; do
    listed "$key" || missing="$missing $key"
done <"$tmp/key_names"
check "KEYS lists every key of keys.def and views.def (missing:${missing:- none})" [ -z "$missing" ]
# The help texts come from the same rows (spot check: one request, one view).
check "KEYS carries keys.def's help text" grep -qF 'one more rewrite inside this pass' "$tmp/keys"
check "KEYS carries views.def's help text" grep -qF 'decisions of this step' "$tmp/keys"

# ---- ENVIRONMENT ----
section ENVIRONMENT | tags >"$tmp/env_tags"
check "the page has an ENVIRONMENT section" [ -s "$tmp/env_tags" ]
grep -rhoE 'getenv\("[A-Za-z0-9_]+"\)' "$GL_SRCDIR/src" "$GL_SRCDIR/ui" "$GL_SRCDIR/passes" |
    sed 's/getenv("\(.*\)")/\1/' >"$tmp/env_read"
# getenv(NAME) of a macro: the name is its file's `#define NAME "VARIABLE"`.
grep -rnoE 'getenv\([A-Za-z_][A-Za-z0-9_]*\)' "$GL_SRCDIR/src" "$GL_SRCDIR/ui" "$GL_SRCDIR/passes" |
    sed 's/^\([^:]*\):[0-9]*:getenv(\(.*\))$/\1 \2/' | sort -u >"$tmp/env_macros"
unresolved=
while read -r file macro; do
    var=$(sed -n "s/^#define $macro \"\([A-Za-z0-9_]*\)\".*/\1/p" "$file")
    if [ -n "$var" ]; then echo "$var" >>"$tmp/env_read"
    else unresolved="$unresolved ${file#"$GL_SRCDIR"/}:$macro"; fi
done <"$tmp/env_macros"
check "every getenv names its variable, or a macro defined as one in its file (not:${unresolved:- none})" \
    [ -z "$unresolved" ]
sort -u -o "$tmp/env_read" "$tmp/env_read"
n=$(wc -l <"$tmp/env_read" | tr -d ' ')
check "the source reads variables ($n found)" [ "$n" -ge 8 ]
missing=
while read -r var; do
    grep -qxF -- "$var" "$tmp/env_tags" || missing="$missing $var"
done <"$tmp/env_read"
check "ENVIRONMENT names every getenv of src/, ui/, passes/ (missing:${missing:- none})" \
    [ -z "$missing" ]
for var in OMP_NUM_THREADS OMP_WAIT_POLICY LC_ALL; do
    check "ENVIRONMENT names $var (read by a library)" grep -qxF "$var" "$tmp/env_tags"
done

# The page as man shows it, narrow and wide: no warning, both sections there.
if command -v man >/dev/null 2>&1; then
    for width in 80 200; do
        MANWIDTH=$width man --warnings -l "$tmp/page" >"$tmp/shown" 2>"$tmp/warn"
        check "man renders KEYS and ENVIRONMENT at $width columns without warnings" \
            sh -c "[ ! -s '$tmp/warn' ] && grep -q '^KEYS' '$tmp/shown' &&
                   grep -q '^ENVIRONMENT' '$tmp/shown'"
    done
else
    skip "man not installed: the page is not rendered"
fi
"$G" --help >"$tmp/help"
check "--help names the variables and points to the page" \
    sh -c "grep -q '^environment: GRAPHLAB_SET' '$tmp/help' && grep -q 'KEYS' '$tmp/help'"

# ---- README's top ----
head -n 40 "$readme" >"$tmp/top"
# Columns, not bytes (the screen's box-drawing characters are 3 bytes): wc -L counts them.
long= nr=0
while IFS= read -r line; do
    nr=$((nr + 1))
    cols=$(printf '%s\n' "$line" | LC_ALL=C.UTF-8 wc -L)
    [ "$cols" -le 100 ] || long="$long $nr"
done <"$tmp/top"
check "README's first 40 lines are at most 100 columns (longer:${long:- none})" [ -z "$long" ]
check "README's top holds the quickstart" grep -q '^graphlab model.onnx --data ' "$tmp/top"
# The top's code blocks, one file each: the install line, then the test command.
awk '/^```/ { if (on) { on = 0; n++ } else on = 1; next } on { print > (dir "/block" n) }' \
    dir="$tmp" "$tmp/top"
test_cmd=$(cat "$tmp/block2" 2>/dev/null)
check "README's test command ($test_cmd) is a line of .ci/run" \
    grep -qxF -- "$test_cmd" "$GL_SRCDIR/.ci/run"
# The packages: the words after "install -y" up to the end of that command (its
# continued lines included), both sides.
packages() {
    awk '/apt-get install/ { on = 1 } on { print; if ($0 !~ /\\$/) exit }' | tr '\\\n' '  ' |
        sed 's/.*apt-get install -y \(-q \)*//; s/&&.*//' | tr ' ' '\n' | grep -v '^$' | sort
}
packages <"$tmp/block1" >"$tmp/readme_pkgs"
packages <"$GL_SRCDIR/.ci/run" >"$tmp/ci_pkgs"
check "README's install command installs .ci/run's packages" \
    sh -c "[ -s '$tmp/ci_pkgs' ] && cmp -s '$tmp/readme_pkgs' '$tmp/ci_pkgs'"
tap_done
