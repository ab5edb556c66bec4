#!/usr/bin/env bash
# Runs `nib exec --timeout T` against hostile model servers (raw TCP on
# loopback, OpenAI protocol) and prints, per server, the wall time, the
# peak RSS and the error nib printed. Targets: every run ends within
# T + 1 s, no process above 1 GiB.
#
#   scripts/hostile-rss.sh [T] [NIB]
set -u
t=${1:-10}
nib=$(realpath "${2:-target/release/nib}")
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/server.py" <<'PY'
import socket, sys, threading, time
mode, port_file = sys.argv[1], sys.argv[2]
one = 'data: {"choices":[{"index":0,"delta":{"content":"spam spam spam spam "}}]}\n\n'
bodies = {"text": one * 200, "keepalive": ": keep-alive\n\n", "toolargs":
  'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"xxxxxxxxxxxxxxxx"}}]}}]}\n\n' * 200}
def serve(c):
    try:
        c.settimeout(0.5)
        try: c.recv(1 << 20)
        except Exception: pass
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        if mode == "toolargs":
            first = 'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"fs-read","arguments":""}}]}}]}\n\n'
            c.sendall(("%x\r\n%s\r\n" % (len(first), first)).encode())
        body = bodies[mode]
        chunk = ("%x\r\n%s\r\n" % (len(body), body)).encode()
        while True:
            c.sendall(chunk)
            if mode == "keepalive": time.sleep(0.01)
    except Exception:
        pass
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(port_file, "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
mkdir -p "$work/ws"
for mode in text toolargs keepalive; do
  rm -f "$work/port"
  python3 "$work/server.py" "$mode" "$work/port" & server=$!
  while [ ! -s "$work/port" ]; do sleep 0.05; done
  port=$(cat "$work/port")
  /usr/bin/time -f "%e %M" -o "$work/time" "$nib" exec --root "$work/ws" --provider openai \
    --base-url "http://127.0.0.1:$port" --model m --timeout "$t" "say hi" \
    >"$work/out" 2>"$work/err"
  code=$?
  read -r secs kib < <(tail -1 "$work/time")
  echo "$mode: exit $code, ${secs} s, peak $((kib / 1024)) MiB; error: $(grep -v '^\s*$' "$work/err" | tail -2 | tr '\n' ' ' | cut -c1-300)"
  kill $server 2>/dev/null; wait $server 2>/dev/null
done
