#!/bin/sh
# scripts/easyjson.sh (make generate): write FILE_easyjson.go beside each
# FILE.go that marks a type //easyjson:json: the JSON codecs of the types a
# stop hook reads and writes. The generator is the easyjson tool pinned in
# go.mod.
#
# A type's first use through encoding/json costs it tens of microseconds of
# reflection, and a hook is a new process at every stop (docs/benchmarks.md).
# Only the methods MarshalEasyJSON/UnmarshalEasyJSON are generated, so
# json.Marshal and json.Unmarshal keep encoding/json's behaviour everywhere
# else; package jsoncodec calls them.
#
# The generator builds each package to read its types, so every file's
# methods are first written as stubs: packages whose code calls them (and
# their importers) build from none. It imports the easyjson root package
# for a compile-time check only; that package imports net/http, whose
# start-up every hook would pay. The check is dropped here: the codecs use
# jlexer and jwriter alone (TestHookBuildLinks keeps it so).
#
# scripts/easyjson.sh --check (make lint) also fails, naming them, when the
# files it wrote differ from those it found (left regenerated).
set -eu
cd "$(dirname "$0")/.."
files=$(grep -rl --include='*.go' --exclude='*_easyjson.go' --exclude-dir=.tools '^//easyjson:json' . | sort)
if [ "${1-}" = --check ]; then
	was=$(mktemp -d)
	trap 'rm -rf "$was"' EXIT
	for in in $files; do
		out=${in%.go}_easyjson.go
		mkdir -p "$was/$(dirname "$out")"
		cp "$out" "$was/$out" 2>/dev/null || :
	done
fi
for in in $files; do
	go tool easyjson -no_std_marshalers -stubs -output_filename "${in%.go}_easyjson.go" "$in"
done
for in in $files; do
	out=${in%.go}_easyjson.go
	go tool easyjson -no_std_marshalers -output_filename "$out" "$in"
	sed -e '/^[[:space:]]*easyjson "github.com\/mailru\/easyjson"$/d' \
	    -e '/^[[:space:]]*_ easyjson\.Marshaler$/d' "$out" > "$out.tmp"
	mv "$out.tmp" "$out"
done
if [ "${1-}" = --check ]; then
	stale=
	for in in $files; do
		out=${in%.go}_easyjson.go
		cmp -s "$out" "$was/$out" || stale="$stale $out"
	done
	if [ -n "$stale" ]; then
		echo "the generated JSON codecs were not those of their types (now regenerated: commit them):$stale" >&2
		exit 1
	fi
fi
