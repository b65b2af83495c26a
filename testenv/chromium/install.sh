#!/usr/bin/env bash
# Make sure Debian's headless-capable Chromium is installed and print the path of its binary
# (for SHARDBENCH_CHROMIUM, which the reports package's browser test needs). A fresh machine
# does not have it: install it with apt-get (as root, or through sudo). Diagnostics go to
# stderr; stdout carries only the path.
#
#   CHROMIUM_APT_INSTALL=0   never install; fail if no binary is found
#   SHARDBENCH_CHROMIUM=PATH use that binary (checked, not installed)
set -euo pipefail

find_chromium() {
  local c
  if [[ -n "${SHARDBENCH_CHROMIUM:-}" ]]; then
    [[ -x "$SHARDBENCH_CHROMIUM" ]] && { echo "$SHARDBENCH_CHROMIUM"; return 0; }
    echo "install.sh: SHARDBENCH_CHROMIUM=$SHARDBENCH_CHROMIUM is not executable" >&2
    return 1
  fi
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  for c in /usr/bin/chromium /usr/lib/chromium/chromium; do
    [[ -x "$c" ]] && { echo "$c"; return 0; }
  done
  return 1
}

if bin="$(find_chromium)"; then
  echo "$bin"
  exit 0
fi
if [[ -n "${SHARDBENCH_CHROMIUM:-}" || "${CHROMIUM_APT_INSTALL:-1}" != 1 ]]; then
  echo "install.sh: chromium not found (and CHROMIUM_APT_INSTALL=${CHROMIUM_APT_INSTALL:-1})" >&2
  exit 1
fi

sudo=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo -n)
  else
    echo "install.sh: chromium is missing and this is not root (and no sudo): apt-get install chromium" >&2
    exit 1
  fi
fi
echo "install.sh: installing chromium with apt-get (once per machine)..." >&2
export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when they are missing or chromium is unknown to them.
if ! apt-cache show chromium >/dev/null 2>&1; then
  "${sudo[@]}" apt-get update -q >&2
fi
"${sudo[@]}" apt-get install -y -q --no-install-recommends chromium fonts-liberation >&2

if bin="$(find_chromium)"; then
  echo "$bin"
  exit 0
fi
echo "install.sh: apt-get install chromium succeeded but no chromium binary was found" >&2
exit 1
