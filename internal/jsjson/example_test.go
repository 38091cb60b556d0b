package jsjson_test

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

func ExampleReencode() {
	src := []byte(`{"b":1e21,"a":"<&>\u0001","10":0,"2":-0,"b":0.0000001}`)
	js, _ := jsjson.Reencode(src, nil)
	sorted, _ := jsjson.Reencode(src, &jsjson.Options{SortKeys: true})
	fmt.Println(string(js))
	fmt.Println(string(sorted))
	// Output:
	// {"2":0,"10":0,"b":1e-7,"a":"<&>\u0001"}
	// {"10":0,"2":0,"a":"<&>\u0001","b":1e-7}
}

func ExampleMarshal() {
	v := map[string]any{"b": []any{1e21, "<&>"}, "a": 1.5e-7, "2": nil, "10": true}
	compact, _ := jsjson.Marshal(v, nil)
	sorted, _ := jsjson.Marshal(v, &jsjson.Options{SortKeys: true, Indent: "  "})
	fmt.Println(string(compact))
	fmt.Println(string(sorted))
	// Output:
	// {"2":null,"10":true,"a":1.5e-7,"b":[1e+21,"<&>"]}
	// {
	//   "10": true,
	//   "2": null,
	//   "a": 1.5e-7,
	//   "b": [
	//     1e+21,
	//     "<&>"
	//   ]
	// }
}

func ExampleFormatNumber() {
	a, b := 0.1, 0.2
	fmt.Println(jsjson.FormatNumber(a+b), jsjson.FormatNumber(1<<60), jsjson.FormatNumber(1e21), jsjson.FormatNumber(1.5e-7))
	// Output: 0.30000000000000004 1152921504606847000 1e+21 1.5e-7
}
