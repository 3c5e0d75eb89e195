#!/bin/sh
# scripts/easyjson.sh FILE.go: generate FILE_easyjson.go, the JSON codecs
# of FILE.go's types marked //easyjson:json (go generate runs it; the
# generator is the easyjson tool pinned in go.mod).
#
# The codecs serve the stop hook's hot path: a type's first use through
# encoding/json costs it tens of microseconds of reflection, at every stop
# (docs/benchmarks.md). Only the methods MarshalEasyJSON/UnmarshalEasyJSON
# are generated, so json.Marshal and json.Unmarshal keep encoding/json's
# behaviour everywhere else.
#
# The generator imports the easyjson root package for a compile-time
# check only; that package imports net/http, whose start-up every hook
# would pay. The check is dropped here: the codecs use jlexer and jwriter
# alone (TestHookBinaryLinks keeps it so).
set -eu
in=$1
out=${in%.go}_easyjson.go
go tool easyjson -no_std_marshalers -output_filename "$out" "$in"
sed -e '/^[[:space:]]*easyjson "github.com\/mailru\/easyjson"$/d' \
    -e '/^[[:space:]]*_ easyjson\.Marshaler$/d' "$out" > "$out.tmp"
mv "$out.tmp" "$out"
gofmt -l "$out" >/dev/null
