#!/usr/bin/env bash
# scripts/system-packages.sh — install the Debian packages the tests need, when missing:
# gcc for -race, Node/npm for the e2e checks, the database servers that
# scripts/test-services.sh starts when nothing answers on the standard ports, and
# Chromium, in which the tool catalog page is rendered and screenshotted.
# Run by scripts/test.sh and .ci/run. As root with apt-get it installs them; otherwise it
# prints the apt-get line and goes on (the tests that need a missing part then fail
# saying what is missing).
set -euo pipefail

missing=()
for pair in gcc:gcc node:nodejs npm:npm mariadbd:mariadb-server redis-server:redis-server chromium:chromium; do
	command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
if ((${#missing[@]} == 0)); then
	echo "system packages: all present"
	exit 0
fi
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
	echo "system packages missing: ${missing[*]}. Install them with:  apt-get install -y ${missing[*]}" >&2
	exit 0
fi
echo "system packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}"
