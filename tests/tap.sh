# tap.sh — minimal TAP helpers for shell tests (sourced).
tap_n=0
tap_failed=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - # SKIP $*"; }
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# todo REASON DESCRIPTION COMMAND...: check for a known failure: "# TODO REASON" keeps a
# failure from failing the suite (XFAIL); a pass is XPASS, which does: remove the mark.
todo() {
    r=$1 d=$2
    shift 2
    tap_n=$((tap_n + 1))
    if "$@"; then echo "ok $tap_n - $d # TODO $r"; else echo "not ok $tap_n - $d # TODO $r"; fi
}
diag() { echo "# $*"; }
# signal_when_shown SIG PID PATTERN: waits (polling, 30 s at most) until a path matching
# PATTERN exists, then sends SIG to PID; gives up when PID ends first. sent=1 when sent.
signal_when_shown() {
    polls=0 sent=0
    while [ "$polls" -lt 6000 ] && kill -0 "$2" 2>/dev/null; do
        # shellcheck disable=SC2086 # $3 is a pattern
        if ls -d $3 >/dev/null 2>&1; then
            kill -"$1" "$2" 2>/dev/null && sent=1
            return
        fi
        sleep 0.005
        polls=$((polls + 1))
    done
}
tap_done() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
