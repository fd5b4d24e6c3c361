#!/usr/bin/env bash
# Soft-RoCE runner: boots a small VM (virtme-ng, TCG: KVM is not available here) on the host's filesystem with
# Debian's kernel, loads rdma_rxe, creates device rxe0 on a dummy interface (10.9.9.1) and runs, inside:
#   - the environment check (ibv_devices), and perftest's ib_write_bw / ib_write_lat on rxe0,
#   - the FFM verbs smoke test (io.rdmx.verbs.Smoke: rdma_cm connect/accept, WRITE, SEND, WRITE_WITH_IMM),
# writing bench/results/perftest-rxe.json (the baseline the verbs provider will be compared with).
# Installs what is missing (Debian packages, virtme-ng from PyPI). Exits non-zero on any failure; every step
# is bounded. The verbs provider's conformance run will be added here when the provider lands (issue: verbs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RESULTS="$ROOT/bench/results"
WORK="$(mktemp -d /tmp/rdmx-softroce.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

need_pkgs=()
for p in qemu-system-x86 linux-image-amd64 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest \
         libibverbs-dev librdmacm-dev busybox-static; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "softroce: installing ${need_pkgs[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
if ! command -v vng >/dev/null; then
  echo "softroce: installing virtme-ng"
  timeout 300 python3 -m pip install -q virtme-ng
  hash -r
fi
KERNEL="$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)"
# shellcheck source=env.sh
. "$ROOT/scripts/env.sh"
if [ "$RDMX_JAVA_FEATURE" -lt 22 ]; then
  echo "softroce: the verbs smoke test needs Java 22+ (found $RDMX_JAVA_FEATURE)"; exit 1
fi
(cd "$ROOT" && $MVN -q -DskipTests install -pl core,verbs -am >/dev/null)
[ -n "$KERNEL" ] || { echo "softroce: no kernel image in /boot (linux-image-amd64)"; exit 1; }

cat > "$WORK/inside.sh" <<INSIDE
set -eu
cd "$WORK"
modprobe rdma_rxe
ip link add dummy0 type dummy
ip link set dummy0 up
ip addr add 10.9.9.1/24 dev dummy0
rdma link add rxe0 type rxe netdev dummy0
ibv_devices > devices.txt
(timeout 120 ib_write_bw -d rxe0 -x 1 -s 65536 -n 2000 > bw_server.txt 2>&1 &)
sleep 2
timeout 120 ib_write_bw -d rxe0 -x 1 -s 65536 -n 2000 10.9.9.1 > bw.txt 2>&1
(timeout 120 ib_write_lat -d rxe0 -x 1 -s 64 -n 2000 > lat_server.txt 2>&1 &)
sleep 2
timeout 120 ib_write_lat -d rxe0 -x 1 -s 64 -n 2000 10.9.9.1 > lat.txt 2>&1
ulimit -l unlimited
timeout 300 "$JAVA" --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 \
  -cp "$ROOT/verbs/target/classes" io.rdmx.verbs.Smoke 10.9.9.1 7471 > smoke.txt 2>&1 || true
echo ok > done.txt
INSIDE

echo "softroce: booting a VM with $KERNEL (TCG, about a minute)"
start=$(date +%s)
if ! timeout 900 vng --disable-kvm --run "$KERNEL" --user root --cpus 2 --memory 2G --rwdir "$WORK" \
      --exec "bash $WORK/inside.sh" > "$WORK/vng.log" 2>&1 || [ ! -f "$WORK/done.txt" ]; then
  echo "softroce: the VM run failed; its log:"
  tail -40 "$WORK/vng.log"
  exit 1
fi
grep -q rxe0 "$WORK/devices.txt" || { echo "softroce: rxe0 missing"; cat "$WORK/devices.txt"; exit 1; }
grep -q "VERBS SMOKE OK" "$WORK/smoke.txt" || { echo "softroce: the FFM verbs smoke test failed:"; cat "$WORK/smoke.txt"; exit 1; }
echo "softroce: $(grep 'VERBS SMOKE OK' "$WORK/smoke.txt")"
bw=$(awk '$1 == 65536 {print $4}' "$WORK/bw.txt" | tail -1)
lat=$(awk '$1 == 64 {print $5}' "$WORK/lat.txt" | tail -1)
[ -n "$bw" ] && [ -n "$lat" ] || { echo "softroce: perftest output not understood"; cat "$WORK/bw.txt" "$WORK/lat.txt"; exit 1; }
mkdir -p "$RESULTS"
cat > "$RESULTS/perftest-rxe.json" <<JSON
{
  "benchmark": "perftest-rxe",
  "device": "rxe0 (Soft-RoCE in a TCG virtual machine, kernel $(basename "$KERNEL"))",
  "results": [
    {"name": "ib_write_bw 64 KiB average", "value": $bw, "unit": "MB/s"},
    {"name": "ib_write_lat 64 B typical", "value": $lat, "unit": "us"}
  ],
  "comparisons": []
}
JSON
echo "softroce: rxe0 works; ib_write_bw 64 KiB = $bw MB/s, ib_write_lat 64 B = $lat us ($(( $(date +%s) - start )) s)"
echo "softroce: wrote $RESULTS/perftest-rxe.json"
