package inject

import (
	"bytes"
	"testing"
)

// insertAt runs the scanner over p in the given pieces and returns the
// stream offset of the insertion marker (-1 if none) and sawDocument.
func insertAt(p []byte, cuts []int) (int64, bool) {
	s := newScanner()
	prev := 0
	for _, c := range cuts {
		if c < prev || c > len(p) {
			continue
		}
		s.feed(p[prev:c])
		prev = c
	}
	s.feed(p[prev:])
	return s.found, s.sawDocument
}

func TestScanner_Marker(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantDoc bool
	}{
		{"<body></body>", 6, true},
		{"<!DOCTYPE html>x", -1, true},
		{"<!doctype html></html>", 15, true},
		{"<div></div>", -1, false},
		{"<script></body></script></body>", 24, false},
		{"<script></scriptx></body></script></body>", 34, false},
		{"<style>a{}</STYLE></body>", 18, false},
		{"<textarea></body></textarea ></body>", 29, false},
		{"<plaintext></body>", -1, false},
		{"<!-- </body> --></body>", 16, false},
		{"<!-- a --!></body>", 11, false},
		{"<!--->x</body>", 7, false},
		{"<?xml x?></body>", 9, false},
		{"</>x</body>", 4, false},
		{"</ body></body>", 8, false},
		{"<a b='</body>' c=\"</body>\"></body>", 27, false},
		{"</body\n>", 0, false},
		{"</body/>", 0, false},
		{"</body", -1, false},
		{"<<</body>", 2, false},
		{"</html></body>", 0, false},
	}
	for _, tt := range tests {
		got, doc := insertAt([]byte(tt.in), nil)
		if got != tt.want || doc != tt.wantDoc {
			t.Errorf("scan(%q) = %d, %v; want %d, %v", tt.in, got, doc, tt.want, tt.wantDoc)
		}
	}
}

// FuzzScanner checks that the result does not depend on how the page is
// split into writes, and that injection only adds the snippet.
func FuzzScanner(f *testing.F) {
	f.Add([]byte("<!doctype html><html><head><title>x</title></head><body><p>x</p></body></html>"), 3, 17)
	f.Add([]byte("<body><script>if(a</body)</script><!-- </body> --></body>"), 10, 40)
	f.Add([]byte("<a href='</body>'>x</a></bo"), 1, 2)
	f.Add([]byte("<textarea></textarea</textarea></html>"), 5, 25)
	f.Fuzz(func(t *testing.T, page []byte, c1, c2 int) {
		whole, wholeDoc := insertAt(page, nil)
		if c1 < 0 {
			c1 = -c1
		}
		if c2 < 0 {
			c2 = -c2
		}
		if len(page) > 0 {
			c1 %= len(page) + 1
			c2 %= len(page) + 1
		}
		if c1 > c2 {
			c1, c2 = c2, c1
		}
		split, splitDoc := insertAt(page, []int{c1, c2})
		if whole != split || wholeDoc != splitDoc {
			t.Fatalf("whole=%d,%v split(%d,%d)=%d,%v", whole, wholeDoc, c1, c2, split, splitDoc)
		}
		if whole >= 0 {
			m := bytes.ToLower(page[whole:])
			if !bytes.HasPrefix(m, []byte("</body")) && !bytes.HasPrefix(m, []byte("</html")) {
				t.Fatalf("marker at %d is %q", whole, page[whole:])
			}
		}
	})
}
