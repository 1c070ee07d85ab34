#!/usr/bin/env bash
# The test command: start the real services (testenv/up.sh), run go vet and
# every test with the race detector against them, then a short run of the
# pipeline-file fuzzer (FuzzLoadPlan), then stop what this run started.
# Exits with go test's status, or else go vet's or the fuzzer's, so that
# any of them failing fails the run.
#
# Usage: scripts/test.sh [go test flags...]     e.g. scripts/test.sh -timeout 30m -run Kafka
#   Packages default to ./...; set ETLD_TEST_PKGS to narrow them
#   (e.g. ETLD_TEST_PKGS="./sinks/... ./sources/...").
#   ETLD_TEST_FUZZTIME is how long the fuzzer runs: a count of inputs
#   (default 20000x, about 30 s on 2 cores) or a duration; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a pkgs <<<"${ETLD_TEST_PKGS:-./...}"

ETLD_TESTENV_STARTED_FILE=$(mktemp -t etld-testenv-started.XXXXXX)
export ETLD_TESTENV_STARTED_FILE
# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	bash testenv/down.sh || echo "scripts/test.sh: testenv/down.sh failed" >&2
	rm -f "$ETLD_TESTENV_STARTED_FILE"
}
trap cleanup EXIT

t0=$SECONDS
bash testenv/up.sh >/dev/null
# shellcheck source=/dev/null
source testenv/.env
# A missing service is a failure here, never a silent skip.
export ETLD_TEST_REQUIRE=1
echo "scripts/test.sh: services ready after $((SECONDS - t0))s" >&2

# A vet failure fails the run too, but the tests still run so one CI run
# reports both.
echo "+ go vet ${pkgs[*]}" >&2
vet=0
go vet "${pkgs[@]}" || vet=$?

# go test's default of 10 minutes per package is too short for cmd/etld,
# whose end-to-end tests include several runs of Flink (a JVM each) and
# the Kafka scale-out test; a -timeout given on the command line wins.
timeout=(-timeout 45m)
for arg in "$@"; do
	case $arg in -timeout | -timeout=* | -test.timeout*) timeout=() ;; esac
done
echo "+ go test -race -count=1 ${timeout[*]} $* ${pkgs[*]}" >&2
status=0
go test -race -count=1 "${timeout[@]}" "$@" "${pkgs[@]}" || status=$?

# Random options for every connector, through spec parse and planning (no
# run): nothing may panic and every error must name file:line:col. A
# failing input is written under builtin/testdata/fuzz/; commit it
# with the fix so that it stays a regression test. The budget is a count
# of inputs, not a duration: Go 1.26's fuzzing coordinator can report its
# own -fuzztime deadline as a failure ("context deadline exceeded", no
# input written) when a worker is mid-call as it expires, which a loaded
# CI machine made happen (golang/go#75804, fixed in Go 1.27). A count
# never sets that deadline.
fuzztime=${ETLD_TEST_FUZZTIME:-20000x}
fuzz=0
if [[ $fuzztime != 0 ]]; then
	echo "+ go test -run '^\$' -fuzz '^FuzzLoadPlan\$' -fuzztime $fuzztime ./builtin" >&2
	go test -run '^$' -fuzz '^FuzzLoadPlan$' -fuzztime "$fuzztime" ./builtin || fuzz=$?
fi
echo "scripts/test.sh: go vet exited $vet, go test exited $status, the fuzzer exited $fuzz, $((SECONDS - t0))s in total" >&2
if ((status == 0 && vet != 0)); then
	status=$vet
fi
if ((status == 0 && fuzz != 0)); then
	status=$fuzz
fi
exit "$status"
