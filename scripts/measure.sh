#!/usr/bin/env bash
# measure.sh: what `make measure` prints, in one run on this machine.
#
#  1. The dashboard beside bmon: each under tmux at 160x48 for SECONDS_EACH
#     (20) seconds, at 1 s and at 100 ms, ROUNDS (3) times, one after the
#     other so that each round compares runs a minute apart. bondtop shows
#     a 4-slave --root tree whose counters move every 100 ms, bmon this
#     host's interfaces; bondtop also shows a tree of 64 bonds of 8 slaves
#     at 1 s. Each row: CPU in % of one core (schedstat of every thread),
#     anonymous memory (RssAnon: heap and stacks, what the host gives the
#     process) and RSS at the end of the run; the summary gives the
#     medians, bondtop's ratio to bmon (the median of the rounds' ratios)
#     and the goals of docs/performance.md.
#  2. The many-bonds table (scripts/measure-bonds): the real binary's
#     --root --count --json at 100 ms on generated trees, its CPU per tick
#     against the floor (a program that reads the same files at the same
#     pace and nothing else), and its peak anonymous memory.
#
# Needs tmux and bmon (apt-get install tmux bmon); it is a measurement,
# not part of `make test`.
#
#   scripts/measure.sh [path/to/bondtop]
#   ROUNDS=5 SECONDS_EACH=30 scripts/measure.sh
#   SIZES=64x8 scripts/measure.sh      only this size in the many-bonds table
#   SKIP_BONDS=1 scripts/measure.sh    only the dashboard beside bmon
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-bin/bondtop}
SECONDS_EACH=${SECONDS_EACH:-20}
ROUNDS=${ROUNDS:-3}
missing=()
for tool in tmux bmon; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "make measure: ${missing[*]} missing: it runs bondtop's dashboard under tmux beside bmon." >&2
    echo "Install with: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
[ -x "$BIN" ] || { echo "make measure: $BIN not built (make build)" >&2; exit 1; }

# The terminal an admin has: UTF-8 (in a C locale the dashboard's
# painter steps aside for tcell's ASCII fallbacks, docs/performance.md).
export LC_ALL=C.UTF-8
work=$(mktemp -d)
session=measure-$$
# A tmux server of its own, started with this environment: a server the
# user already runs would give the panes its own.
# Its socket sits in $work, which the cleanup removes.
tmux() { command tmux -S "$work/tmux" "$@"; }
tree_pids=()
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    tmux kill-server 2>/dev/null || true
    for p in "${tree_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
# A session that outlives each run keeps the tmux server up: a new session
# started while the server exits after the last one ends fails.
tmux new-session -d -s "$session-keep" "sleep 86400"
go build -o "$work/measure-bonds" ./scripts/measure-bonds
for size in 1x4 64x8; do
    "$work/measure-bonds" -tree "$work/tree-$size" -size "$size" &
    tree_pids+=($!)
done
sleep 2

# cpu_ns PID: CPU time of every thread of PID, in nanoseconds
# (/proc/PID/task/*/schedstat, exact; /proc/PID/stat counts in 10 ms ticks,
# a third of what the dashboard spends in 20 s at 1 s).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# run COMMAND...: the command in a 160x48 tmux pane for SECONDS_EACH,
# measured after 2 s to settle; prints "cpu% anonMB rssMB".
run() {
    tmux new-session -d -s "$session" -x 160 -y 48 "$*"
    sleep 2
    local pid t0 s0 t1 s1 anon rss
    pid=$(tmux list-panes -t "$session" -F '#{pane_pid}') # tmux execs a single command
    t0=$(cpu_ns "$pid"); s0=$(date +%s.%N)
    sleep "$SECONDS_EACH"
    t1=$(cpu_ns "$pid"); s1=$(date +%s.%N)
    anon=$(status_kb "$pid" RssAnon); rss=$(status_kb "$pid" VmRSS)
    tmux kill-session -t "$session"
    awk -v a="$t0" -v b="$t1" -v s="$s0" -v e="$s1" -v an="$anon" -v r="$rss" \
        'BEGIN { printf "%.3f %.1f %.1f\n", (b-a)/1e9/(e-s)*100, an/1024, r/1024 }'
}

echo "== The dashboard beside bmon: tmux 160x48, ${SECONDS_EACH} s a run, $ROUNDS rounds ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
rows=$work/rows
printf '%-5s %-24s %-6s %8s %8s %8s\n' round tool pace "CPU %" "anon MB" "RSS MB"
for i in $(seq "$ROUNDS"); do
    for pace in 1s 100ms; do
        case $pace in 1s) bm=1 ;; 100ms) bm=0.1 ;; esac
        # bond1 named: with several bonds the dashboard would wait for a pick.
        read -r c a r < <(run "$BIN" --root "$work/tree-1x4" --interval "$pace" bond1)
        printf '%-5s %-24s %-6s %8s %8s %8s\n' "$i" "bondtop, 1x4 tree" "$pace" "$c" "$a" "$r"
        echo "bondtop $pace $i $c $a $r" >>"$rows"
        read -r c a r < <(run bmon -r "$bm")
        printf '%-5s %-24s %-6s %8s %8s %8s\n' "$i" bmon "$pace" "$c" "$a" "$r"
        echo "bmon $pace $i $c $a $r" >>"$rows"
    done
    read -r c a r < <(run "$BIN" --root "$work/tree-64x8" --interval 1s bond1)
    printf '%-5s %-24s %-6s %8s %8s %8s\n' "$i" "bondtop, 64x8 tree" 1s "$c" "$a" "$r"
    echo "bondtop64 1s $i $c $a $r" >>"$rows"
done

# median COLUMN TOOL PACE: the median of a column over the rounds.
median() {
    awk -v t="$2" -v p="$3" -v c="$1" '$1 == t && $2 == p { print $c }' "$rows" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'
}
# ratio PACE: the median over the rounds of bondtop's CPU over bmon's.
ratio() {
    awk -v p="$1" '$2 == p && $1 == "bondtop" { b[$3] = $4 } $2 == p && $1 == "bmon" { m[$3] = $4 }
        END { for (i in b) if (m[i] > 0) print b[i] / m[i] }' "$rows" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'
}
verdict() { awk -v v="$1" -v g="$2" 'BEGIN { print (v <= g) ? "met" : "MISSED" }'; }
echo
echo "Medians of $ROUNDS rounds:"
printf '%-22s %-6s %8s %8s %8s %10s  %s\n' tool pace "CPU %" "anon MB" "RSS MB" "CPU/bmon" "goal"
for pace in 1s 100ms; do
    r=$(ratio "$pace")
    case $pace in
        1s) goal="CPU ≤ bmon's: $(verdict "$r" 1.00)" ;;
        100ms) a=$(median 5 bondtop 100ms)
            goal="CPU ≤ 1.25× bmon's: $(verdict "$r" 1.25); anon ≤ 8 MB: $(verdict "$a" 8)" ;;
    esac
    printf '%-22s %-6s %8.2f %8.1f %8.1f %9s×  %s\n' "bondtop, 1x4 tree" "$pace" \
        "$(median 4 bondtop "$pace")" "$(median 5 bondtop "$pace")" "$(median 6 bondtop "$pace")" "$r" "$goal"
    printf '%-22s %-6s %8.2f %8.1f %8.1f %10s\n' bmon "$pace" \
        "$(median 4 bmon "$pace")" "$(median 5 bmon "$pace")" "$(median 6 bmon "$pace")" "1.00×"
done
c=$(median 4 bondtop64 1s)
printf '%-22s %-6s %8.2f %8.1f %8.1f %10s  %s\n' "bondtop, 64x8 tree" 1s "$c" \
    "$(median 5 bondtop64 1s)" "$(median 6 bondtop64 1s)" "-" "CPU ≤ 2 %: $(verdict "$c" 2)"

[ -n "${SKIP_BONDS:-}" ] && exit 0
# The trees' counters stop: rewriting 5,760 files every 100 ms is load
# the many-bonds table would measure beside its own.
for p in "${tree_pids[@]}"; do kill "$p" 2>/dev/null || true; done
tree_pids=()
echo
echo "== Many bonds: --root --count --json at 100 ms against the floor (goal for 64×8: peak anon ≤ 64 MB)"
"$work/measure-bonds" -bin "$BIN" -sizes "${SIZES:-1x2,4x4,64x8,256x2}"
