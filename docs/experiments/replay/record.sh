#!/bin/sh
# The expensive half of docs/experiments/replay.md (make
# experiment-replay-record, ~4 min of wall time): a real incident recorded
# by a real Prometheus. `throttlesim serve` runs incident.yaml's backend
# and its 60 s outage on its own schedule; Debian's Prometheus scrapes it
# every second; `throttlesim live --target` drives it with incident.yaml's
# clients for 3 minutes; then `throttlesim fit` reads the window back
# through Prometheus's HTTP API and its query answers (a few KB of
# query_range JSON) are copied to recording/, which the cheap half
# (make experiment-replay) reads with --from-files.
#
# usage: record.sh BIN OUT   (BIN: the throttlesim binary; OUT: a scratch folder)
set -eu
BIN=$1
OUT=$2
DOC=docs/experiments/replay
PROM=${PROMETHEUS:-prometheus}
command -v "$PROM" >/dev/null || { echo "record.sh: no prometheus binary (Debian: apt-get install prometheus)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SP=$(port); PP=$(port)
cat > "$OUT/prometheus.yml" <<CFG
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: serve
    static_configs: [{targets: ['127.0.0.1:$SP']}]
CFG
"$PROM" --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/data" \
	--web.listen-address="127.0.0.1:$PP" --log.level=warn > "$OUT/prometheus.log" 2>&1 &
PPID_=$!
SPID=
cleanup() { kill "$PPID_" 2>/dev/null || true; [ -n "$SPID" ] && kill "$SPID" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
for i in $(seq 100); do
	curl -fs "http://127.0.0.1:$PP/-/ready" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fs "http://127.0.0.1:$PP/-/ready" >/dev/null || { echo "record.sh: prometheus not ready" >&2; cat "$OUT/prometheus.log" >&2; exit 1; }
# The window starts on a whole second, serve (and its outage clock) with it.
python3 -c 'import time; time.sleep(1 - time.time() % 1)'
START=$(date +%s)
"$BIN" serve "$DOC/incident.yaml" --listen "127.0.0.1:$SP" > "$OUT/serve.log" 2>&1 &
SPID=$!
for i in $(seq 50); do curl -fs "http://127.0.0.1:$SP/metrics" >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN" live "$DOC/incident.yaml" --target "http://127.0.0.1:$SP/work" --out "$OUT/live" --force -q
END=$(( $(date +%s) ))
sleep 6 # the last scrapes
# The window: whole 5 s steps from serve's start.
END=$(( START + (END - START) / 5 * 5 ))
"$BIN" fit --prometheus "http://127.0.0.1:$PP" --start "$START" --end "$END" --step 5s \
	--convention throttlesim --selector 'job="serve"' --clients 200 --name incident --seeds 0 --out "$OUT/fit" --force
rm -rf "$DOC/recording" && cp -r "$OUT/fit/queries" "$DOC/recording"
"$BIN" summarize "$OUT/live" > "$DOC/recording/live-summary.txt" 2>&1 || true
echo "record.sh: window $START to $END; wrote $DOC/recording ($(du -sh "$DOC/recording" | cut -f1))"
