#!/bin/sh
# pip_offline.sh LOG: exit 0 when pip's LOG says it could not reach its package index (no
# network, no name resolution, a proxy refusing, or no version found at all), else 1. The venv
# makers and the pip tests then skip (exit 77) instead of failing.
grep -qE 'NewConnectionError|Network is unreachable|Temporary failure in name resolution|Name or service not known|Failed to establish|ProxyError|from versions: none' "$1"
