#!/usr/bin/env bash
# The programs some tests drive rather than talk to: headless Chromium (the
# web console's browser tests), Graphviz's dot (explain --format dot) and
# podman with umoci (the container image test). All from Debian's packages;
# installed once, nothing to start or stop.
#
# Usage: testenv/tools.sh {start|stop|status|env}
#   start installs what is missing; env prints the ETLD_TEST_* exports.
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=tools

# package:command pairs; the command is what the tests run.
TOOLS=(chromium:chromium graphviz:dot podman:podman umoci:umoci)

missing_packages() {
	local t pkg cmd
	for t in "${TOOLS[@]}"; do
		pkg=${t%%:*} cmd=${t#*:}
		command -v "$cmd" >/dev/null 2>&1 || printf '%s\n' "$pkg"
	done
}

start() {
	local missing
	mapfile -t missing < <(missing_packages)
	if [[ ${#missing[@]} -eq 0 ]]; then
		log "all present"
		return 0
	fi
	[[ "$(id -u)" -eq 0 ]] || die "need root to install ${missing[*]} with apt-get"
	log "installing ${missing[*]} from apt"
	with_lock apt env DEBIAN_FRONTEND=noninteractive sh -c \
		"apt-get update -qq && apt-get install -y -q --no-install-recommends ${missing[*]} >/dev/null"
	mapfile -t missing < <(missing_packages)
	[[ ${#missing[@]} -eq 0 ]] || die "still missing after apt-get: ${missing[*]}"
	log "installed"
}

status() {
	local missing
	mapfile -t missing < <(missing_packages)
	if [[ ${#missing[@]} -eq 0 ]]; then
		echo "tools: present"
		return 0
	fi
	echo "tools: missing ${missing[*]}"
	return 1
}

env_lines() {
	echo "export ETLD_TEST_CHROMIUM=$(command -v chromium)"
	echo "export ETLD_TEST_DOT=$(command -v dot)"
	echo "export ETLD_TEST_PODMAN=$(command -v podman)"
	echo "export ETLD_TEST_UMOCI=$(command -v umoci)"
}

case "${1:-}" in
start) start ;;
stop) log "nothing to stop" ;;
status) status ;;
env) env_lines ;;
*)
	echo "usage: $0 {start|stop|status|env}" >&2
	exit 2
	;;
esac
