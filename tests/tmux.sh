# tmux.sh — a private tmux server to drive the workbench as a person would (sourced by
# tui.sh and hostile.sh; STACK.md). Needs `work` (a fresh folder, removed on exit), `GL`
# (the program) and `TIMEOUT` (seconds to wait for a screen or an exit) set first.
# start's ENV may set GL_VMEM_KB: graphlab then runs under `ulimit -v` that many KB.
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
    $T new-session -d -s t -x "$cols" -y "$rows" \
        "env $envs TERM=tmux-256color LANG=C.UTF-8 $work/launch $GL $*"
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
