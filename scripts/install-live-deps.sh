#!/usr/bin/env bash
# Installs what the live rack (`shoal live`) needs beyond the Rust toolchain, from Debian's
# packages: iproute2 (network namespaces and veth pairs), ping, iperf3, curl (an HTTP request
# across the rack) and tshark (to read the captures with the Lua dissector in
# assets/wireshark/). Needs root. CI does not run this: the tests that need these tools skip,
# saying why, when they are missing.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    echo "install-live-deps: run as root (apt-get install)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; the live rack runs as root anyway.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update
apt-get install -y --no-install-recommends iproute2 iputils-ping iperf3 curl tshark
