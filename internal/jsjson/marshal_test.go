package jsjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

type sample struct {
	Z    string         `json:"z"`
	A    float64        `json:"a"`
	Meta map[string]any `json:"meta,omitempty"`
}

func TestMarshal(t *testing.T) {
	sorted := &jsjson.Options{SortKeys: true}
	tests := []struct {
		name string
		v    any
		opts *jsjson.Options
		want string
	}{
		{"nil", nil, nil, `null`},
		{"bools", []any{true, false}, nil, `[true,false]`},
		{"html and separators raw", "<a href=\"x\">&</a>\u2028\u2029", nil, "\"<a href=\\\"x\\\">&</a>\u2028\u2029\""},
		{"controls", "\x00\x01\b\f\n\r\t\x1f\x7f", nil, `"\u0000\u0001\b\f\n\r\t\u001f` + "\x7f\""},
		{"non-ASCII raw", "é漢😀", nil, `"é漢😀"`},
		{"invalid UTF-8 as U+FFFD per maximal subpart", "a\xe2\x82Ab\xff", nil, "\"a\uFFFDAb\uFFFD\""},
		{"WTF-8 in a Go string is not a surrogate", "\xed\xa0\x80", nil, "\"\uFFFD\uFFFD\uFFFD\""},
		{"numbers", []any{1e21, 1e-7, 1.5e-7, 1e-6, 123e-20, 0.1, -0.0, math.Copysign(0, -1), 100.0, 2e20}, nil,
			`[1e+21,1e-7,1.5e-7,0.000001,1.23e-18,0.1,0,0,100,200000000000000000000]`},
		{"non-finite", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, nil, `[null,null,null]`},
		{"integers as JS numbers", []any{int64(1) << 60, uint64(math.MaxUint64), 42, int32(-7)}, nil,
			`[1152921504606847000,18446744073709552000,42,-7]`},
		{"json.Number read as float64", []any{json.Number("9007199254740993"), json.Number("1.50"), json.Number("-0")}, nil,
			`[9007199254740992,1.5,0]`},
		{"map: array indices first, then UTF-16 order", map[string]any{"b": 1, "a": 2, "10": 3, "2": 4, "😀": 5, "\uE000": 6, "01": 7}, nil,
			`{"2":4,"10":3,"01":7,"a":2,"b":1,"😀":5,"` + "\uE000" + `":6}`},
		{"map sorted: pure UTF-16 order", map[string]any{"b": 1, "a": 2, "10": 3, "2": 4, "😀": 5, "\uE000": 6}, sorted,
			`{"10":3,"2":4,"a":2,"b":1,"😀":5,"` + "\uE000" + `":6}`},
		{"map sorted, index keys first", map[string]any{"b": 1, "a": 2, "10": 3, "2": 4, "01": 5}, &jsjson.Options{SortKeys: true, IndexKeysFirst: true},
			`{"2":4,"10":3,"01":5,"a":2,"b":1}`},
		{"RawMessage sorted, index keys first", json.RawMessage(`{"b":{"10":1,"9":2,"x":3},"1":0}`), &jsjson.Options{SortKeys: true, IndexKeysFirst: true},
			`{"1":0,"b":{"9":2,"10":1,"x":3}}`},
		{"RawMessage keeps member order and JS rules", json.RawMessage(`{"b":1,"a":{"y":1,"x":2},"1":0,"b":3}`), nil,
			`{"1":0,"b":3,"a":{"y":1,"x":2}}`},
		{"RawMessage sorted", json.RawMessage(`{"b":1,"a":{"y":1,"x":2}}`), sorted, `{"a":{"x":2,"y":1},"b":1}`},
		{"RawMessage lone surrogate kept", json.RawMessage(`"\uD800x\udfff"`), nil, `"\ud800x\udfff"`},
		{"nil RawMessage", json.RawMessage(nil), nil, `null`},
		{"struct field order", sample{Z: "<", A: 1e21}, nil, `{"z":"<","a":1e+21}`},
		{"struct sorted", sample{Z: "z", A: 0.5, Meta: map[string]any{"k": []any{}}}, sorted, `{"a":0.5,"meta":{"k":[]},"z":"z"}`},
		{"indent", map[string]any{"a": []any{1.0, map[string]any{}}, "b": []any{}}, &jsjson.Options{Indent: "  "},
			"{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"},
		{"indent cut to 10 units", []any{1.0}, &jsjson.Options{Indent: "0123456789AB"}, "[\n01234567891\n]"},
		{"indent cut inside an astral character", []any{1.0}, &jsjson.Options{Indent: "012345678😀"}, "[\n0123456781\n]"},
		{"indent stops at NUL (V8)", []any{[]any{1.0}}, &jsjson.Options{Indent: "a\x00b"}, "[\na[\naa1\na]\n]"},
		{"indent of only NUL", map[string]any{"a": 1.0}, &jsjson.Options{Indent: "\x00"}, "{\n\"a\": 1\n}"},
		{"nested RawMessage indented", map[string]any{"r": json.RawMessage(`[1,{"a":2}]`)}, &jsjson.Options{Indent: "\t"},
			"{\n\t\"r\": [\n\t\t1,\n\t\t{\n\t\t\t\"a\": 2\n\t\t}\n\t]\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsjson.Marshal(tt.v, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestMarshal_Errors(t *testing.T) {
	var se *jsjson.SyntaxError
	for _, v := range []any{json.Number("1."), json.Number(""), json.Number("0x10"), json.RawMessage(`{"a":}`), json.RawMessage(`1 2`)} {
		if _, err := jsjson.Marshal(v, nil); !errors.As(err, &se) {
			t.Errorf("Marshal(%#v) error = %v, want *SyntaxError", v, err)
		}
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if _, err := jsjson.Marshal(cyclic, nil); !errors.Is(err, jsjson.ErrDepth) {
		t.Errorf("cyclic map: error = %v, want ErrDepth", err)
	}
	if _, err := jsjson.Marshal(make(chan int), nil); err == nil {
		t.Error("chan: want an encoding/json error")
	}
	deep := []byte{}
	for range jsjson.MaxDepth + 1 {
		deep = append(deep, '[')
	}
	if _, err := jsjson.Reencode(deep, nil); !errors.Is(err, jsjson.ErrDepth) {
		t.Errorf("deep text: error = %v, want ErrDepth", err)
	}
}

func TestReencode_SyntaxErrorOffset(t *testing.T) {
	_, err := jsjson.Reencode([]byte(`{"a": tru}`), nil)
	var se *jsjson.SyntaxError
	if !errors.As(err, &se) || se.Offset != 9 {
		t.Fatalf("error = %#v, want *SyntaxError at offset 9", err)
	}
}

func TestFormatNumber(t *testing.T) {
	tests := map[float64]string{
		math.NaN(): "NaN", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity",
		1e21: "1e+21", 1.5e-7: "1.5e-7", -1e-7: "-1e-7", 123456789012345680000: "123456789012345680000",
		5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308", 0.000001: "0.000001", -1.25: "-1.25",
	}
	for f, want := range tests {
		if got := jsjson.FormatNumber(f); got != want {
			t.Errorf("FormatNumber(%v) = %q, want %q", f, got, want)
		}
	}
}
