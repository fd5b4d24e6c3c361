#!/usr/bin/env bash
# Builds libdisni.so (the JNI library IBM DiSNI's Java classes load) from DiSNI's own source, at the release the
# disni module depends on (com.ibm.disni:disni 2.1 = tag v2.1 = commit 095a23b of github.com/zrlio/disni).
#
#   disni/scripts/build-libdisni.sh SOURCE [OUT_DIR]
#
# SOURCE is one of: a git repository of DiSNI (a clone or a bare mirror: the pinned commit is taken from it with
# git archive, whatever is checked out), a .tar.gz of that commit (GitHub's archive of v2.1), or a directory
# holding DiSNI's tree at that commit; either way the four native sources must match v2.1's sha256 sums. The
# library lands in OUT_DIR (default disni/target/native): the same bytes from each form of the source, with the
# same compiler (checked: a clone, GitHub's v2.1 tarball and an extracted tree gave one sha256).
#
# DiSNI's native source is on GitHub only: Maven Central has no sources jar for com.ibm.disni:disni:2.1 (and the
# binary jar holds only classes), and neither Debian nor Ubuntu package libdisni. So a build without GitHub access
# (CI) cannot run this script; it must be handed the source.
#
# DiSNI builds with autotools; its two sources need nothing autoconf finds but the JDK's headers and the
# ibverbs/rdmacm libraries (its only optional feature, ODP prefetch, needs MLNX_OFED's verbs_exp.h, absent from
# rdma-core), so they are compiled here directly: g++/gcc plus libibverbs-dev and librdmacm-dev, no autotools.
set -euo pipefail
COMMIT=095a23b179ba26401612fec4859ba630cd8c4df7
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="${1:?usage: build-libdisni.sh SOURCE(git repo | tar.gz | directory) [OUT_DIR]}"
OUT="${2:-$ROOT/disni/target/native}"
. "$ROOT/scripts/env.sh"

for p in g++ gcc; do command -v "$p" >/dev/null || missing=1; done
for h in /usr/include/infiniband/verbs.h /usr/include/rdma/rdma_cma.h; do [ -f "$h" ] || missing=1; done
if [ -n "${missing:-}" ]; then
  echo "build-libdisni: installing g++, gcc, libibverbs-dev, librdmacm-dev"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ gcc libibverbs-dev librdmacm-dev
fi

WORK="$(mktemp -d /tmp/libdisni.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$SRC" cat-file -e "$COMMIT^{commit}" 2>/dev/null \
    || { echo "build-libdisni: $SRC lacks DiSNI's commit $COMMIT (v2.1)"; exit 1; }
  git -C "$SRC" archive --format=tar "$COMMIT" libdisni | tar -x -C "$WORK"
  TREE="$WORK"
elif [ -f "$SRC" ]; then
  tar -xzf "$SRC" -C "$WORK"
  TREE="$(dirname "$(find "$WORK" -path '*/libdisni/configure.ac' | head -1)")/.."
  [ -d "$TREE" ] || { echo "build-libdisni: no libdisni/configure.ac in $SRC"; exit 1; }
else
  TREE="$SRC"
fi
TREE="$(cd "$TREE" && pwd)"
N="$TREE/libdisni/src"
[ -f "$N/verbs/com_ibm_disni_verbs_impl_NativeDispatcher.cpp" ] \
  || { echo "build-libdisni: no DiSNI native source under $SRC"; exit 1; }
# the sources of v2.1, whatever form they came in (a tarball or directory carries no commit to check)
(cd "$N" && sha256sum --quiet -c - <<'SUMS') || { echo "build-libdisni: $SRC is not DiSNI 2.1's source"; exit 1; }
0072b52d8b40e660eb42f96507d099c21debf7e60b469eaa1b2b497383e8e207  verbs/com_ibm_disni_verbs_impl_NativeDispatcher.cpp
202570eca3a3eb0f1d963d6869f0809874ed72526956e4701866d5eae5c9ae45  verbs/com_ibm_disni_verbs_impl_NativeDispatcher.h
7354b261acb24941ca69fe943c42165e97dc8ad2ba18417ab4f9860198fb091f  affinity/com_ibm_disni_util_NativeAffinity.c
c5c53171254dc1e5acdb3c0a9c1501c681111f245828918bde31368a6ed599dc  affinity/com_ibm_disni_util_NativeAffinity.h
SUMS

mkdir -p "$OUT"
# the same bytes from every checkout: no temporary paths in the debug information
CFLAGS="-O2 -g -fPIC -ffile-prefix-map=$TREE=disni-2.1 -I$JAVA_HOME/include -I$JAVA_HOME/include/linux"
g++ $CFLAGS -c "$N/verbs/com_ibm_disni_verbs_impl_NativeDispatcher.cpp" -o "$WORK/verbs.o"
gcc $CFLAGS -c "$N/affinity/com_ibm_disni_util_NativeAffinity.c" -o "$WORK/affinity.o"
g++ -shared -Wl,-soname,libdisni.so.0 -Wl,--no-undefined -o "$OUT/libdisni.so" "$WORK/verbs.o" "$WORK/affinity.o" \
  -libverbs -lrdmacm
echo "build-libdisni: $OUT/libdisni.so (DiSNI $COMMIT)"
