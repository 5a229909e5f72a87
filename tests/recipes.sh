#!/bin/sh
# recipes.sh — README.md's "Extending graphlab" tells a newcomer which table to edit, in
# which file, and where its tests go. Every `path` and `path:symbol` it names in
# backquotes must exist: the path in the source tree, the symbol as a whole word of that
# file. So a recipe cannot point at a table that was renamed or moved.
#
# A reference is a backquoted word whose path part holds a '/' or ends in a source
# extension (`Makefile.am:TESTS`, `src/ops/arity.def`, `tests/golden/`); other backquoted
# text (`GL_OP_RANDOM`, `--set PASS.veto=ID`) is prose. Names the reader chooses are in
# italics, not backquotes, and are not checked.
. "$GL_SRCDIR/tests/tap.sh"
readme="$GL_SRCDIR/README.md"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glrecipes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The section: from its heading to the next heading of the same level.
awk '/^## Extending graphlab$/ { on = 1; print; next } on && /^## / { exit } on' "$readme" \
    >"$tmp/section"
check "README.md has the section \"Extending graphlab\"" [ -s "$tmp/section" ]
check "the section has its five recipes" [ "$(grep -c '^### ' "$tmp/section")" -eq 5 ]
# An unpaired backquote would shift every span after it: no reference would be read right.
ticks=$(tr -cd '`' <"$tmp/section" | wc -c | tr -d ' ')
check "the section's backquotes pair up ($ticks)" [ $((ticks % 2)) -eq 0 ]

# Spans may wrap across lines; one per line, then the ones that are references.
tr '\n' ' ' <"$tmp/section" | grep -o '`[^`]*`' | tr -d '`' |
    grep -E '^[A-Za-z0-9_./-]+(:[A-Za-z_][A-Za-z0-9_]*)?$' |
    grep -E '^[^:]*/|^[^:]*\.(c|h|def|am|ac|md|sh|py|txt)(:|$)' | sort -u >"$tmp/refs"
n=$(wc -l <"$tmp/refs" | tr -d ' ')
# The recipes name well over a hundred; a handful means the extraction broke.
check "the section names files and tables ($n references)" [ "$n" -ge 50 ]

while read -r ref; do
    path=${ref%%:*}
    if [ ! -e "$GL_SRCDIR/$path" ]; then
        not_ok "$ref: no $path in the source tree"
        continue
    fi
    case $ref in
    *:*)
        symbol=${ref#*:}
        check "$ref: $path holds $symbol" grep -qw -- "$symbol" "$GL_SRCDIR/$path"
        ;;
    *) ok "$ref exists" ;;
    esac
done <"$tmp/refs"
tap_done
