# tmux.sh — a private tmux server to drive the workbench as a person would (sourced by
# tui.sh and hostile.sh; STACK.md). Needs `GL` (the program) set first; `work` (a fresh
# folder, removed on exit) and `TIMEOUT` (seconds to wait for a screen or an exit) are
# made here unless set.
# start's ENV may set GL_VMEM_KB: graphlab then runs under `ulimit -v` that many KB.
# Golden screens (golden NAME) read SRC (the source folder) and GOLDEN (their folder).
# Without tmux the whole script is skipped (as TAP says it).
if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux not found"
    exit 0
fi
if [ -z "${TIMEOUT:-}" ]; then
    TIMEOUT=$([ -n "${GL_SANITIZED:-}" ] && echo 60 || echo 15) # ASan: several times slower
fi
work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/gltmux.XXXXXX")}
SRC=${SRC:-$GL_SRCDIR}
GOLDEN=${GOLDEN:-$SRC/tests/golden}
T="tmux -L gl-test-$$ -f /dev/null"
trap '$T kill-server >/dev/null 2>&1; rm -rf "$work"' EXIT

# A launcher, so that the exit status lands in a file (tmux's dead-pane status is
# unreliable) and the pane stays open afterwards to be read.
# The inner sh writes graphlab's pid (it execs into it) for the signal tests.
cat >"$work/launch" <<EOF
#!/bin/sh
cd "$work"
ulimit -c 0
[ -z "\${GL_VMEM_KB:-}" ] || ulimit -v "\$GL_VMEM_KB"
/bin/sh -c 'echo \$\$ >"\$0"; exec "\$@"' "$work/pid" "\$@"
echo \$? >"$work/rc"
exec /bin/sleep 600
EOF
chmod +x "$work/launch"

# start COLS ROWS ENV... -- ARGS...: a fresh session running graphlab ARGS
start() {
    cols=$1 rows=$2
    shift 2
    envs=""
    while [ "$1" != "--" ]; do
        envs="$envs $1"
        shift
    done
    shift
    $T kill-session -t t >/dev/null 2>&1
    rm -f "$work/rc"
    # Killing the last session makes the server exit; a new-session that reaches it while
    # it exits fails (seen under load: a blank screen, then every check of the case
    # failed), so a failed start is tried again on a fresh server.
    tries=0
    until $T new-session -d -s t -x "$cols" -y "$rows" \
        "env $envs TERM=tmux-256color LANG=C.UTF-8 $work/launch $GL $*" 2>"$work/tmux-err"; do
        tries=$((tries + 1))
        if [ "$tries" -ge 5 ]; then
            diag "tmux new-session failed: $(cat "$work/tmux-err")"
            return 1
        fi
        sleep 0.5
    done
}
screen() { $T capture-pane -p -t t; }
keys() { $T send-keys -t t "$@"; }
# wait_for TEXT: true once TEXT is on the screen (fixed string), false after TIMEOUT
wait_for() {
    i=0
    while [ "$i" -lt $((TIMEOUT * 10)) ]; do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    diag "waited for '$1'; the screen:"
    screen | sed 's/^/#   /'
    return 1
}
# wait_rc: the exit status once the program ended
wait_rc() {
    i=0
    while [ ! -s "$work/rc" ] && [ "$i" -lt $((TIMEOUT * 10)) ]; do
        sleep 0.1
        i=$((i + 1))
    done
    cat "$work/rc" 2>/dev/null
}
# the terminal modes the workbench changes, as tmux sees them: cursor visible, then
# alternate screen, mouse reporting (two kinds), keypad mode; "10000" once restored
restored() {
    [ "$($T display-message -p -t t '#{cursor_flag}#{alternate_on}#{mouse_standard_flag}#{mouse_any_flag}#{keypad_flag}')" = 10000 ]
}
# settle: the screen stopped changing (two captures 0.2 s apart agree)
settle() {
    prev=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        now=$(screen)
        [ "$now" = "$prev" ] && return 0
        prev=$now
        sleep 0.2
    done
}
# A time right-aligned text follows is padded to a width that does not depend on its
# digits: "12.5 ms    diff" and "1234.5 ms  diff" both become "N ms       diff" (a slow,
# busy machine must not change a golden screen). oneDNN's kernel names depend on the CPU
# ("brg:avx512_core" on one, "gemm:jit" on another): an "implementation" field reads KERNELS.
normalise() {
    sed -E -e "s|$work|WORK|g" -e "s|$SRC|SRC|g" | awk '{
        out = ""
        while (match($0, /[0-9]+(\.[0-9]+)? m?s  +/)) {
            t = substr($0, RSTART, RLENGTH)
            unit = t ~ /^[0-9.]+ ms/ ? "N ms" : "N s"
            pad = ""
            for (i = length(unit); i < RLENGTH; i++) pad = pad " "
            out = out substr($0, 1, RSTART - 1) unit pad
            $0 = substr($0, RSTART + RLENGTH)
        }
        print out $0
    }' | sed -E -e 's/[0-9]+(\.[0-9]+)? ms/N ms/g' -e 's/[0-9]+\.[0-9] s\b/N s/g' \
        -e 's/(implementation +)[^ ].*$/\1KERNELS/'
}
# golden NAME: the screen equals tests/golden/NAME.txt
golden() {
    settle
    screen | normalise >"$work/$1.txt"
    [ -n "$GL_UPDATE_GOLDEN" ] && cp "$work/$1.txt" "$GOLDEN/$1.txt"
    if diff -u "$GOLDEN/$1.txt" "$work/$1.txt" >"$work/$1.diff" 2>&1; then
        ok "golden screen $1"
    else
        not_ok "golden screen $1"
        sed 's/^/#   /' "$work/$1.diff"
    fi
}
# not_on_screen TEXT: TEXT is nowhere on the screen
not_on_screen() { ! screen | grep -qF -- "$1"; }
# reverse_on TEXT: the line holding TEXT is drawn in reverse video (how the selection shows
# without colours); capture-pane -e keeps the attributes as SGR sequences
reverse_on() { $T capture-pane -e -p -t t | grep -F -- "$1" | grep -q "$(printf '\033')\[[0-9;]*7m"; }
# each line of the screen fits in COLS columns and there are ROWS of them
fits() {
    # one x per character (sed counts characters in a UTF-8 locale, awk may count bytes)
    screen | sed 's/./x/g' | awk -v c="$1" -v r="$2" '{ if (length($0) > c) bad = 1 } END { exit bad || NR > r }'
}
# click COL ROW: a left click (press and release, X10 encoding, 1-based cells)
click() {
    $T send-keys -t t -l "$(printf '\033[M %b%b\033[M#%b%b' "\\0$(printf %o $((32 + $1)))" \
        "\\0$(printf %o $((32 + $2)))" "\\0$(printf %o $((32 + $1)))" "\\0$(printf %o $((32 + $2)))")"
    sleep 0.5 # curses holds a press for mouseinterval (1/6 s) to tell a click from a drag
}
# wheel up|down COL ROW: one turn of the mouse wheel (buttons 4 and 5: codes 64 and 65)
wheel() {
    code=$([ "$1" = up ] && echo 96 || echo 97)
    $T send-keys -t t -l "$(printf '\033[M%b%b%b' "\\0$(printf %o "$code")" \
        "\\0$(printf %o $((32 + $2)))" "\\0$(printf %o $((32 + $3)))")"
    sleep 0.3
}
