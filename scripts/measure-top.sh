#!/usr/bin/env bash
# measure-top.sh: bondtop's dashboard beside bmon and nload, in one run, as
# an admin leaves them open: each under tmux at 160x48 for SECONDS (20)
# at 1 s and at 100 ms, bondtop on a 4-slave 802.3ad --root tree whose
# counters move every 100 ms, bmon and nload on this host's interfaces.
# Prints CPU (% of one core) and RSS per tool and pace, and bondtop's
# ratio to bmon; bondtop also runs --demo with its flows view closed and
# open (a --root tree has no flows), and the build without the /metrics
# server (-tags nometrics) on the tree. Installs bmon and nload (apt) when
# missing: it is a measurement, not part of `make test`.
#
#   scripts/measure-top.sh [path/to/bondtop]
#   SIZE=64x8 scripts/measure-top.sh     bondtop on 64 bonds of 8 slaves
#   PAIRS=5 scripts/measure-top.sh       five rounds at 100 ms, and medians
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin/bondtop}
SECONDS_EACH=${SECONDS_EACH:-20}
[ -x "$BIN" ] || make build >/dev/null
need=()
command -v tmux >/dev/null || need+=(tmux)
command -v bmon >/dev/null || need+=(bmon)
command -v nload >/dev/null || need+=(nload)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi

work=$(mktemp -d)
session=measure-top-$$
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    tmux kill-session -t "$session-keep" 2>/dev/null || true
    for s in $(tmux list-sessions -F '#{session_name}' 2>/dev/null | grep "^$session-live-" || true); do
        tmux kill-session -t "$s"
    done
    [ -n "${tree_pid:-}" ] && kill "$tree_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# A session that outlives each run keeps the tmux server up: a new session
# started while the server exits after the last one ends fails.
tmux new-session -d -s "$session-keep" "sleep 86400"
go build -o "$work/measure-bonds" ./scripts/measure-bonds
# The dashboard without the /metrics server (make build TAGS=nometrics):
# the same program less net/http, TLS and the Prometheus libraries.
LITE=$work/bondtop-nometrics
CGO_ENABLED=0 go build -trimpath -tags nometrics -ldflags "-s -w" -o "$LITE" ./cmd/bondtop
"$work/measure-bonds" -tree "$work/tree" -size "${SIZE:-1x4}" &
tree_pid=$!
sleep 1

# cpu_ns PID: CPU time of every thread of PID, in nanoseconds
# (/proc/PID/task/*/schedstat, exact; /proc/PID/stat counts in 10 ms ticks,
# a third of what bondtop spends in 20 s at 1 s).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# RssAnon: the process's own memory (heap, stacks); the rest of VmRSS is
# file pages mapped (the program and its libraries), clean and shared
# with the page cache.
anon_kb() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }

# run KEYS COMMAND...: the command in a 160x48 tmux pane for SECONDS_EACH
# (after a second to settle, then KEYS typed, if any, and another second);
# prints "cpu% rssMB anonMB".
run() {
    local keys=$1
    shift
    tmux new-session -d -s "$session" -x 160 -y 48 "$*"
    sleep 1
    if [ -n "$keys" ]; then
        tmux send-keys -t "$session" "$keys"
        sleep 1
    fi
    local pid
    pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
    # the pane runs the command itself (tmux execs a single command)
    local t0 s0 t1
    t0=$(cpu_ns "$pid"); s0=$(date +%s.%N)
    sleep "$SECONDS_EACH"
    t1=$(cpu_ns "$pid"); local s1; s1=$(date +%s.%N)
    local rss anon; rss=$(rss_kb "$pid"); anon=$(anon_kb "$pid")
    tmux kill-session -t "$session"
    awk -v a="$t0" -v b="$t1" -v s="$s0" -v e="$s1" -v r="$rss" -v an="$anon" \
        'BEGIN { printf "%.3f %.1f %.1f\n", (b-a)/1e9/(e-s)*100, r/1024, an/1024 }'
}

# PAIRS=N: only the 100 ms rows that sit at bmon's level, as N rounds
# of bondtop on the tree, bmon, and the demo with its flows open, run one
# after the other so each round's ratios compare runs minutes apart, not
# a whole table apart; then the median of each ratio. One run's row moves
# by ±25% on this VM, bmon's by ±15%: the medians are the measure.
if [ -n "${PAIRS:-}" ]; then
    printf '%-6s %12s %12s %12s %10s %10s\n' round "tree CPU %" "bmon CPU %" "flows CPU %" "tree/bmon" "flows/bmon"
    ratios=$work/ratios
    for i in $(seq "$PAIRS"); do
        read -r t _ < <(run "" "$BIN" --root "$work/tree" --interval 100ms bond1)
        read -r b _ < <(run "" bmon -r 0.1)
        read -r f _ < <(run f "$BIN" --demo --interval 100ms bond0)
        awk -v i="$i" -v t="$t" -v b="$b" -v f="$f" 'BEGIN { printf "%-6s %12s %12s %12s %9.2f× %9.2f×\n", i, t, b, f, t/b, f/b }'
        echo "$t $b $f" >>"$ratios"
    done
    median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.2f×", m }'; }
    printf '%-6s %12s %12s %12s %10s %10s\n' median "" "" "" \
        "$(awk '{ print $1/$2 }' "$ratios" | median)" "$(awk '{ print $3/$2 }' "$ratios" | median)"
    exit 0
fi

row() { printf '%-22s %-6s %8s %8s %8s %12s\n' "$@"; }
row tool pace "CPU %" "RSS MB" "anon MB" "CPU vs bmon"
# HISTORY_ONLY=1: only the rows with an hour of history.
for pace in 1s 100ms; do
    [ -n "${HISTORY_ONLY:-}" ] && break
    case $pace in 1s) bm=1; nl=1000 ;; 100ms) bm=0.1; nl=100 ;; esac
    # bond1 chosen: with several bonds the list would wait for a pick.
    read -r bt_cpu bt_rss bt_anon < <(run "" "$BIN" --root "$work/tree" --interval "$pace" bond1)
    read -r bm_cpu bm_rss bm_anon < <(run "" bmon -r "$bm")
    read -r nl_cpu nl_rss nl_anon < <(run "" nload -t "$nl")
    # The flows view needs sockets or the flow meter, which a --root tree
    # has not: the demo (8 bonds, a simulated flow table) closed and open.
    read -r dc_cpu dc_rss dc_anon < <(run "" "$BIN" --demo --interval "$pace" bond0)
    read -r do_cpu do_rss do_anon < <(run f "$BIN" --demo --interval "$pace" bond0)
    read -r lt_cpu lt_rss lt_anon < <(run "" "$LITE" --root "$work/tree" --interval "$pace" bond1)
    ratio() { awk -v a="$1" -v b="$bm_cpu" 'BEGIN { if (b > 0) printf "%.2f×", a/b; else print "-" }'; }
    row "bondtop --root" "$pace" "$bt_cpu" "$bt_rss" "$bt_anon" "$(ratio "$bt_cpu")"
    row "bondtop --demo" "$pace" "$dc_cpu" "$dc_rss" "$dc_anon" "$(ratio "$dc_cpu")"
    row "bondtop --demo, flows" "$pace" "$do_cpu" "$do_rss" "$do_anon" "$(ratio "$do_cpu")"
    row "nometrics --root" "$pace" "$lt_cpu" "$lt_rss" "$lt_anon" "$(ratio "$lt_cpu")"
    row bmon "$pace" "$bm_cpu" "$bm_rss" "$bm_anon" "1.00×"
    row nload "$pace" "$nl_cpu" "$nl_rss" "$nl_anon" "$(ratio "$nl_cpu")"
done

# Memory with the history full: an hour of the tree recorded at each pace
# (measure-bonds -hour), replayed at 360 times its pace so that the hour
# passes in 10 s (at 100 ms its 36,000 snapshots take longer: the
# script waits until the replay is idle), the 1 h window shown (g g),
# then held 10 s. Replay builds the same history the live dashboard
# keeps, and its anonymous memory is the row's. A replay that reached its
# end runs neither the sampler nor a redraw, and the dashboard lets go of
# the program's pages it does not run (programpages.Trim), so the replay's
# own file pages say nothing of a live dashboard's: the row's RSS adds
# to its anonymous memory the file pages (RssFile) of the same build live
# on the tree at the same pace, started before the replays and read for
# a minute from LIVE_SECONDS (300) after: the pages a dashboard maps back
# grow for a few minutes (the collector meets new frames on the
# goroutines' stacks and reads their part of the pc tables), then level
# off. Its CPU is the replay's, so it is not shown.
live_start=$(date +%s)
for pace in 1s 100ms; do
    for build in bondtop nometrics; do
        bin=$BIN
        [ "$build" = nometrics ] && bin=$LITE
        tmux new-session -d -s "$session-live-$build-$pace" -x 160 -y 48 \
            "$bin --root $work/tree --interval $pace bond1"
    done
done
declare -A replay_anon
for pace in 1s 100ms; do
    "$work/measure-bonds" -hour "$work/hour-$pace.rec" -size 1x4 -pace "$pace"
    for build in bondtop nometrics; do
        bin=$BIN
        [ "$build" = nometrics ] && bin=$LITE
        tmux new-session -d -s "$session" -x 160 -y 48 "$bin --replay $work/hour-$pace.rec --speed 360 bond1"
        sleep 11
        tmux send-keys -t "$session" g g
        pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
        # The replay has played the hour when it stops using the CPU (at
        # 100 ms it decodes 36,000 snapshots, which takes longer than
        # the 10 s asked): wait for 3 s in a row under 1 ms of CPU each
        # (3 minutes at most), then hold 10 s.
        idle=0 last=$(cpu_ns "$pid")
        for _ in $(seq 180); do
            sleep 1
            now=$(cpu_ns "$pid")
            if [ $((now - last)) -lt 1000000 ]; then idle=$((idle + 1)); else idle=0; fi
            [ "$idle" -ge 3 ] && break
            last=$now
        done
        sleep 10
        replay_anon[$build-$pace]=$(anon_kb "$pid")
        tmux kill-session -t "$session"
    done
done
left=$((live_start + ${LIVE_SECONDS:-300} - $(date +%s)))
[ "$left" -gt 0 ] && sleep "$left"
# The live dashboards' file pages rise and fall within each minute (the
# pages not run in the last minute are let go, every minute): the
# median of 12 readings 5 s apart, a minute's worth.
declare -A live_files
for _ in $(seq 12); do
    for pace in 1s 100ms; do
        for build in bondtop nometrics; do
            pid=$(tmux list-panes -t "$session-live-$build-$pace" -F '#{pane_pid}')
            live_files[$build-$pace]+="$(awk '/^RssFile:/ { print $2 }' "/proc/$pid/status") "
        done
    done
    sleep 5
done
for pace in 1s 100ms; do
    for build in bondtop nometrics; do
        file=$(echo "${live_files[$build-$pace]}" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }')
        anon=${replay_anon[$build-$pace]}
        row "$build, 1 h history" "$pace" "-" "$(awk -v a="$anon" -v f="$file" 'BEGIN { printf "%.1f", (a + f) / 1024 }')" \
            "$(awk -v a="$anon" 'BEGIN { printf "%.1f", a / 1024 }')" "-"
        tmux kill-session -t "$session-live-$build-$pace"
    done
done
