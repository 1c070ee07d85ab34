#!/usr/bin/env bash
# The programs some tests drive rather than talk to: headless Chromium (the
# web console's browser tests), Graphviz's dot (explain --format dot) and
# podman with umoci (the container image test), all from Debian's
# packages; a Python with DuckDB and pyarrow from PyPI, in a virtual
# environment of its own (the Parquet tests read etld's files with both),
# and fastavro in it with the codecs it reads through cramjam and
# backports.zstd (the Avro file tests read etld's files with it, and write
# files for etld);
# and AssemblyScript's compiler from npm (a function in a second language
# proves the WebAssembly ABI is not Go's), in a directory of its own.
# Installed once, nothing to start or stop.
#
# Usage: testenv/tools.sh {start|stop|status|env}
#   start installs what is missing; env prints the ETLD_TEST_* exports.
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=tools

# package:command pairs; the command is what the tests run.
TOOLS=(chromium:chromium graphviz:dot podman:podman umoci:umoci)

# The Python packages, pinned, and the environment that holds them.
PY_PACKAGES=(duckdb==2.0.0 pyarrow==26.0.1)
# Added to the same environment afterwards, with a mark of their own, so
# that an environment made for PY_PACKAGES alone is added to, never made
# anew under tests that use it.
PY_AVRO_PACKAGES=(fastavro==1.13.1 cramjam==2.14.0 backports.zstd==1.8.0)
PY_ENV="$ETLD_TESTENV_DIR/python"
PY="$PY_ENV/bin/python"

# AssemblyScript, pinned, and where npm installs it.
ASC_PACKAGE=assemblyscript@0.28.20
ASC_DIR="$ETLD_TESTENV_DIR/assemblyscript"
ASC="$ASC_DIR/node_modules/.bin/asc"

asc_ok() {
	[[ -x "$ASC" ]] && [[ "$(cat "$ASC_DIR/.package" 2>/dev/null)" == "$ASC_PACKAGE" ]]
}

install_asc() {
	asc_ok && return 0
	command -v npm >/dev/null 2>&1 || die "need npm (Node.js) for AssemblyScript's compiler"
	log "installing $ASC_PACKAGE into $ASC_DIR"
	rm -rf "$ASC_DIR"
	mkdir -p "$ASC_DIR"
	npm install --prefix "$ASC_DIR" --no-audit --no-fund --silent "$ASC_PACKAGE" || die "npm install $ASC_PACKAGE failed"
	printf '%s' "$ASC_PACKAGE" >"$ASC_DIR/.package"
	asc_ok || die "$ASC is still missing"
}

python_base_ok() {
	[[ -x "$PY" ]] && "$PY" -c 'import duckdb, pyarrow' >/dev/null 2>&1 &&
		[[ "$(cat "$PY_ENV/.packages" 2>/dev/null)" == "${PY_PACKAGES[*]}" ]]
}

python_avro_ok() {
	"$PY" -c 'import fastavro, cramjam, backports.zstd' >/dev/null 2>&1 &&
		[[ "$(cat "$PY_ENV/.packages-avro" 2>/dev/null)" == "${PY_AVRO_PACKAGES[*]}" ]]
}

python_ok() { python_base_ok && python_avro_ok; }

install_python_avro() {
	python_avro_ok && return 0
	log "adding ${PY_AVRO_PACKAGES[*]} to $PY_ENV"
	"$PY_ENV/bin/pip" install -q --disable-pip-version-check "${PY_AVRO_PACKAGES[@]}" || die "pip install ${PY_AVRO_PACKAGES[*]} failed"
	printf '%s' "${PY_AVRO_PACKAGES[*]}" >"$PY_ENV/.packages-avro"
	python_avro_ok || die "the Python environment still lacks fastavro, cramjam or backports.zstd"
}

install_python() {
	python_ok && return 0
	if python_base_ok; then
		install_python_avro
		return 0
	fi
	command -v python3 >/dev/null 2>&1 || die "need python3 for the Parquet readers (DuckDB, pyarrow)"
	log "installing ${PY_PACKAGES[*]} into $PY_ENV"
	rm -rf "$PY_ENV"
	python3 -m venv "$PY_ENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
	"$PY_ENV/bin/pip" install -q --disable-pip-version-check "${PY_PACKAGES[@]}" || die "pip install ${PY_PACKAGES[*]} failed"
	printf '%s' "${PY_PACKAGES[*]}" >"$PY_ENV/.packages"
	python_base_ok || die "the Python environment still lacks duckdb or pyarrow"
	install_python_avro
}

missing_packages() {
	local t pkg cmd
	for t in "${TOOLS[@]}"; do
		pkg=${t%%:*} cmd=${t#*:}
		command -v "$cmd" >/dev/null 2>&1 || printf '%s\n' "$pkg"
	done
}

start() {
	local missing
	mkdir -p "$ETLD_TESTENV_DIR"
	install_python
	install_asc
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
	python_ok || missing+=("python:${PY_PACKAGES[*]} ${PY_AVRO_PACKAGES[*]}")
	asc_ok || missing+=("npm:$ASC_PACKAGE")
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
	echo "export ETLD_TEST_PYTHON=$PY"
	echo "export ETLD_TEST_ASC=$ASC"
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
