#!/usr/bin/env bash
# An outside appender (O_APPEND, one numbered line at a time) against
# `nib apply` editing the head of the same file over and over: counts the
# appended lines that went missing. nib re-plans on every change it sees;
# what it cannot see (a write landing between its last look and the
# rename) is the remaining loss.
#
#   scripts/appender.sh [EDITS] [NIB]
set -u
edits=${1:-2000}
nib=$(realpath "${2:-target/release/nib}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
mkdir -p "$work/ws"
printf 'counter 0\n' > "$work/ws/log.txt"
python3 - "$edits" > "$work/calls.jsonl" <<'PY'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"path": "log.txt", "old": f"counter {i}\n", "new": f"counter {i+1}\n"}))
PY
python3 - "$work/ws/log.txt" "$work/stop" > "$work/appended" <<'PY' &
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, f"appended {n}\n".encode())
    os.close(fd)
    n += 1
    time.sleep(float(os.environ.get("APPEND_EVERY", "0.001")))
print(n)
PY
appender=$!
t0=$(date +%s%N)
(cd "$work/ws" && "$nib" apply "$work/calls.jsonl" > "$work/out" 2>&1)
code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
touch "$work/stop"; wait $appender
sent=$(cat "$work/appended")
kept=$(grep -c '^appended ' "$work/ws/log.txt")
head=$(head -1 "$work/ws/log.txt")
echo "nib apply: exit $code, $edits edits in $ms ms ($head); appender: $sent lines sent, $kept kept, $((sent - kept)) lost"
