// Package jsoncodectest checks a generated JSON codec (package jsoncodec)
// against encoding/json: for random values of the type, and for the
// inputs a test adds, the codec must read what encoding/json reads and
// write what it writes.
package jsoncodectest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runtasks/runtasks/internal/jsoncodec"
)

// Codec is a pointer to a type with both generated codecs; encoding/json
// sees the type without them (they are not its MarshalJSON/UnmarshalJSON).
type Codec[T any] interface {
	*T
	jsoncodec.Decoder
	jsoncodec.Encoder
}

// Decodes checks T's generated decoder alone (for a type only ever read),
// on Rounds random values encoded by encoding/json and on inputs.
func Decodes[T any, PT interface {
	*T
	jsoncodec.Decoder
}](t *testing.T, inputs ...string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < Rounds; i++ {
		var v T
		Fill(rng, &v)
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		decodeSame[T, PT](t, data)
		for _, m := range mutations(rng, data) {
			decodeSame[T, PT](t, m)
		}
	}
	for _, in := range inputs {
		decodeSame[T, PT](t, []byte(in))
	}
}

// Equivalent checks both of T's generated codecs: Decodes, and on Rounds
// random values the encoder writes what encoding/json writes (read back:
// the same JSON value), escaping HTML or not as escapeHTML says.
func Equivalent[T any, PT Codec[T]](t *testing.T, escapeHTML bool, inputs ...string) {
	t.Helper()
	Decodes[T, PT](t, inputs...)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < Rounds; i++ {
		var v T
		Fill(rng, &v)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(escapeHTML)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := jsoncodec.Marshal(PT(&v), escapeHTML)
		if err != nil {
			t.Fatalf("generated encoder: %v", err)
		}
		var a, b any
		if err := json.Unmarshal(want.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("generated encoder wrote invalid JSON: %v\n%s", err, got)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("generated encoder of %T:\n got %s\nwant %s", v, got, want.Bytes())
		}
		if bytes.ContainsAny(got, "\u2028\u2029") {
			t.Fatalf("generated encoder left U+2028 or U+2029 unescaped: %s", got)
		}
	}
}

// Rounds is how many random values each check makes.
var Rounds = 300

// decodeSame decodes data with encoding/json and with T's generated
// decoder: both fail, or both succeed with the same value.
func decodeSame[T any, PT interface {
	*T
	jsoncodec.Decoder
}](t *testing.T, data []byte) {
	t.Helper()
	var want, got T
	werr := json.Unmarshal(data, &want)
	gerr := jsoncodec.Unmarshal(data, PT(&got))
	if gerr == nil && !utf8.Valid(data) {
		// The generated decoder keeps invalid UTF-8 as it is, where
		// encoding/json writes U+FFFD; the next encoding of either writes
		// \ufffd. Compare them from there.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		got = *new(T)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
	}
	// encoding/json keeps a null as json.RawMessage("null"), the generated
	// decoder as nil: both read as null.
	nullRaw(reflect.ValueOf(&want).Elem())
	nullRaw(reflect.ValueOf(&got).Elem())
	switch {
	case (werr == nil) != (gerr == nil):
		t.Fatalf("decoding %q into %T: encoding/json: %v; generated: %v", data, want, werr, gerr)
	case werr == nil && !reflect.DeepEqual(want, got):
		t.Fatalf("decoding %q into %T:\n got %#v\nwant %#v", data, want, got, want)
	}
}

var rawType = reflect.TypeFor[json.RawMessage]()

// nullRaw sets every json.RawMessage in v that holds null to nil.
func nullRaw(v reflect.Value) {
	switch {
	case v.Type() == rawType:
		if string(v.Bytes()) == "null" && v.CanSet() {
			v.SetBytes(nil)
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		nullRaw(v.Elem())
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := 0; i < v.Len(); i++ {
			nullRaw(v.Index(i))
		}
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous {
				nullRaw(v.Field(i))
			}
		}
	}
}

// mutations are broken and reshaped copies of a valid encoding: cut
// short, a byte dropped, a structural character put in, white space
// added, an unknown key added, a field set to null.
func mutations(rng *rand.Rand, data []byte) [][]byte {
	var out [][]byte
	n := len(data)
	if n > 1 {
		out = append(out, data[:rng.IntN(n)])
		i := rng.IntN(n)
		out = append(out, append(append([]byte{}, data[:i]...), data[i+1:]...))
		j := rng.IntN(n)
		ins := []byte{"{}[],:\"0"[rng.IntN(8)]}
		out = append(out, append(append(append([]byte{}, data[:j]...), ins...), data[j:]...))
	}
	out = append(out, append([]byte(" \n\t"), append(append([]byte{}, data...), " \r\n"...)...))
	if n > 1 && data[0] == '{' && data[1] != '}' {
		out = append(out, append([]byte(`{"zz_unknown":{"a":[1,"x",null,true]},`), data[1:]...))
		// null for the first field: encoding/json leaves it as it is.
		if k := bytes.IndexByte(data, ':'); k > 0 {
			if end := valueEnd(data, k+1); end > 0 {
				out = append(out, append(append(append([]byte{}, data[:k+1]...), "null"...), data[end:]...))
			}
		}
	}
	return out
}

// valueEnd is the end of the JSON value that starts at i in data (a
// valid encoding), or -1.
func valueEnd(data []byte, i int) int {
	dec := json.NewDecoder(bytes.NewReader(data[i:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return -1
	}
	return i + int(dec.InputOffset())
}

// Fill sets every exported field of *v (recursively) to a random value:
// strings with quotes, backslashes, HTML, control and non-ASCII
// characters; small and large numbers; nil and set pointers; empty and
// short slices and maps; zero and set times.
func Fill(rng *rand.Rand, v any) {
	fill(rng, reflect.ValueOf(v).Elem(), 0)
}

var timeType = reflect.TypeFor[time.Time]()

// raws are the random values of a json.RawMessage.
var raws = []string{`null`, `1`, `"t"`, `[]`, `[{"type":"output_text","text":"a <b>"}]`, `{"a":[true,null]}`, `[{"text":"x"},{"text":"y"}]`}

// pieces make up the random strings.
var pieces = []string{"a", "Z", "9", " ", "bd-e.1", `"`, `\`, "<promise>", "&", ">", "\n", "\t", "\r", "\x01", "\b", "\f", "\x7f",
	"é", "日本", "😀", "\u2028", "\u2029", "/", "'", "{", "]"}

func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	if v.Type() == rawType {
		if v.CanSet() && rng.IntN(4) > 0 {
			v.SetBytes([]byte(raws[rng.IntN(len(raws))]))
		}
		return
	}
	if v.Type() == timeType {
		if rng.IntN(3) > 0 {
			v.Set(reflect.ValueOf(time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC()))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		var s string
		for i := rng.IntN(6); i > 0; i-- {
			s += pieces[rng.IntN(len(pieces))]
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		n := rng.Int64N(1<<(bits-1)-1) >> rng.IntN(bits)
		if rng.IntN(4) == 0 {
			n = -n
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := v.Type().Bits()
		v.SetUint(rng.Uint64() >> (64 - bits) >> rng.IntN(bits))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 0.5, 1.25, 0.000123, 12.5, 1e-7, 1234567, 3.14159, 1e21}[rng.IntN(9)])
	case reflect.Pointer:
		if depth < 4 && rng.IntN(2) == 0 {
			p := reflect.New(v.Type().Elem())
			fill(rng, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		if depth < 4 && rng.IntN(3) > 0 {
			n := rng.IntN(4)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := 0; i < n; i++ {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		if depth < 4 && rng.IntN(3) > 0 && v.Type().Key().Kind() == reflect.String {
			m := reflect.MakeMap(v.Type())
			for i := rng.IntN(3); i > 0; i-- {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(rng, k, depth+1)
				fill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		// Embedded structs count, exported or not: encoding/json reads
		// their exported fields as the outer struct's.
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous {
				fill(rng, v.Field(i), depth)
			}
		}
	}
}
