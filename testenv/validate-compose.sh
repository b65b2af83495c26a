#!/usr/bin/env bash
# Validate every compose file under docker/ (docker/**/docker-compose*.yml) with Debian's
# docker-compose, which checks a file without any Docker daemon. Installs docker-compose with
# apt-get when it is missing. Exits non-zero, naming the file and the bad key, on any error.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "validate-compose: installing docker-compose (apt-get)" >&2
  sudo=()
  [[ "$(id -u)" == 0 ]] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >&2
  "${sudo[@]}" apt-get install -y -q docker-compose >&2
fi

mapfile -t files < <(find "$root/docker" -type f \( -name 'docker-compose*.yml' -o -name 'docker-compose*.yaml' \) | sort)
((${#files[@]} > 0)) || { echo "validate-compose: no compose files under docker/" >&2; exit 1; }

failed=0
for f in "${files[@]}"; do
  rel="${f#"$root"/}"
  # --project-directory keeps relative paths (env files, volumes) resolved beside the file.
  if out="$(docker-compose -f "$f" --project-directory "$(dirname "$f")" config -q 2>&1)"; then
    echo "ok    $rel"
  else
    echo "FAIL  $rel"
    awk '{ print "      " $0 }' <<<"$out"
    failed=1
  fi
done
exit "$failed"
