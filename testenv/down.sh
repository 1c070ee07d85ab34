#!/usr/bin/env bash
# Stop the services that testenv/up.sh started (listed in testenv/.started,
# or $ETLD_TESTENV_STARTED_FILE), or with --all every service testenv runs.
# Services testenv did not start are never touched.
#
# Usage: testenv/down.sh [--all]
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STARTED_FILE=${ETLD_TESTENV_STARTED_FILE:-$TESTENV_ROOT/.started}

services=()
if [[ "${1:-}" == "--all" ]]; then
	services=(elasticsearch kafka postgres mariadb registry s3)
elif [[ -s "$STARTED_FILE" ]]; then
	mapfile -t services <"$STARTED_FILE"
elif [[ $# -gt 0 ]]; then
	die "usage: $0 [--all]"
fi
if [[ ${#services[@]} -eq 0 ]]; then
	log "nothing to stop (up.sh started nothing that is recorded in $STARTED_FILE)"
	exit 0
fi

pids=()
for s in "${services[@]}"; do
	[[ -f "$TESTENV_ROOT/$s.sh" ]] || continue
	bash "$TESTENV_ROOT/$s.sh" stop >&2 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
rm -f "$STARTED_FILE"
exit "$rc"
