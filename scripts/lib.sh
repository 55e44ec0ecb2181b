# Shared helpers for SignalKit's scripts (sourced, not executed).
# shellcheck shell=bash

log() { printf '%s\n' "$*" >&2; }
fatal() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        fatal "need root to run: $* (no sudo available)"
    fi
}

# Installs the Debian packages given as arguments, only if some are missing.
ensure_packages() {
    local missing=()
    local package
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null 2>&1 || fatal "missing packages ${missing[*]} and no apt-get to install them"
    log "installing ${missing[*]} (apt-get)"
    as_root apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null \
        || fatal "apt-get install ${missing[*]} failed"
}

# libatomic_ops headers are what CSignalRuntime compiles against.
ensure_build_dependencies() {
    if [ ! -f /usr/include/atomic_ops.h ]; then
        ensure_packages libatomic-ops-dev
    fi
    command -v swift >/dev/null 2>&1 || fatal "swift is not on PATH (Swift 6.1 or later is required)"
}

# The example service's Python clients need python3 and the websockets package.
ensure_example_clients() {
    command -v python3 >/dev/null || ensure_packages python3
    python3 -c 'import websockets' 2>/dev/null || python3 -m pip install --quiet websockets >/dev/null 2>&1 \
        || fatal "the example's clients need the websockets package (pip install websockets)"
}

# Builds Examples/MarketService in release, its build output to the file $1,
# and prints the market-server binary's path.
# --disable-build-manifest-caching: SwiftPM's cached build plan does not see
# files added to or removed from a path dependency (the root package).
build_example() {
    local example=Examples/MarketService
    (cd "$example" && swift build -c release --disable-build-manifest-caching >"$1" 2>&1) \
        || { tail -50 "$1" >&2; fatal "the example does not build (see $1)"; }
    echo "$(cd "$example" && swift build -c release --show-bin-path)/market-server"
}
