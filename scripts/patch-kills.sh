#!/usr/bin/env bash
# Kills `nib apply --format v4a` at random points of a multi-file patch
# (Add, Delete, Update, Move with Update, 1 MiB files) and counts trees
# left mixed after the next nib command: the target is 0.
#
#   scripts/patch-kills.sh [KILLS] [NIB]
#
# KILLS defaults to 500, NIB to target/release/nib. Prints the counts of
# trees found old, new and mixed, and how the next command said it.
set -u
kills=${1:-500}
nib=$(realpath "${2:-target/release/nib}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

filler() { for i in $(seq -w 1 20000); do echo "$1 line $i of filler text"; done; }
filler a > "$work/a.base"; filler b > "$work/b.base"; filler c > "$work/c.base"
cat > "$work/patch.v4a" <<'P'
*** Begin Patch
*** Add File: n/new.txt
+a new file
*** Delete File: b.txt
*** Update File: a.txt
@@
-head of a
+HEAD OF A
*** Update File: c.txt
*** Move to: d/c2.txt
@@
-head of c
+HEAD OF C
*** End Patch
P

setup() {
  rm -rf "$work/ws"; mkdir -p "$work/ws"
  { echo "head of a"; cat "$work/a.base"; } > "$work/ws/a.txt"
  cp "$work/b.base" "$work/ws/b.txt"
  { echo "head of c"; cat "$work/c.base"; } > "$work/ws/c.txt"
}
state() {
  local ws=$work/ws
  if [ -f "$ws/a.txt" ] && [ "$(head -1 "$ws/a.txt")" = "head of a" ] && [ -f "$ws/b.txt" ] \
     && [ -f "$ws/c.txt" ] && [ ! -e "$ws/d/c2.txt" ] && [ ! -e "$ws/n/new.txt" ]; then
    echo old
  elif [ -f "$ws/a.txt" ] && [ "$(head -1 "$ws/a.txt")" = "HEAD OF A" ] && [ ! -e "$ws/b.txt" ] \
     && [ ! -e "$ws/c.txt" ] && [ "$(head -1 "$ws/d/c2.txt" 2>/dev/null)" = "HEAD OF C" ] \
     && [ "$(cat "$ws/n/new.txt" 2>/dev/null)" = "a new file" ]; then
    echo new
  else
    echo mixed
  fi
}

# How long one whole patch takes, to spread the kills over it.
setup
t0=$(date +%s%N); (cd "$work/ws" && "$nib" apply --format v4a "$work/patch.v4a" >/dev/null)
span_us=$(( ($(date +%s%N) - t0) / 1000 + 1000 ))
echo "one patch: ${span_us} us"

old=0; new=0; mixed=0; rolled=0; completed=0
for i in $(seq 1 "$kills"); do
  setup
  (cd "$work/ws" && exec "$nib" apply --format v4a "$work/patch.v4a" >/dev/null 2>&1) &
  pid=$!
  delay=$(( RANDOM * 32768 + RANDOM ))
  delay=$(( delay % (span_us + span_us / 4) ))
  sleep "$(printf '0.%06d' "$delay")"
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  said=$(cd "$work/ws" && printf '*** Begin Patch\n*** End Patch\n' | "$nib" apply --format v4a - 2>&1 >/dev/null)
  case "$said" in *"rolled back"*) rolled=$((rolled+1));; *completed*) completed=$((completed+1));; esac
  s=$(state)
  case $s in old) old=$((old+1));; new) new=$((new+1));; *) mixed=$((mixed+1)); echo "mixed at kill $i (${delay} us): $said"; ls -R "$work/ws" | head -20;; esac
done
echo "kills=$kills old=$old new=$new mixed=$mixed (rolled back: $rolled, completed: $completed)"
