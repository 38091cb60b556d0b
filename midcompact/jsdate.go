package midcompact

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// maxTimeMs is ECMAScript's TimeClip bound (±8.64e15 ms).
const maxTimeMs = 8.64e15

// jsDateMs returns what `new Date(v).getTime()` gives for the JSON value v
// (Unix ms, NaN when invalid), the conversion Pi 1.6.0 applies to entry
// timestamps when it builds custom, branch-summary and compaction-summary
// messages. Strings are read in the ECMAScript date-time string format
// (YYYY[-MM[-DD]][THH:mm[:ss[.fraction]]][Z|±HH:mm|±HHmm], extended years
// ±YYYYYY, `t`/`z`/space accepted as V8 does; a date-only form is UTC, a
// date-time without offset is local time). Strings V8 reads only with its
// legacy heuristics give NaN here. Numbers are clipped as TimeClip does;
// true/false/null give 1/0/0; an absent value, arrays and objects give NaN.
func jsDateMs(v json.RawMessage) float64 {
	switch pimessage.FirstByte(v) {
	case 0:
		return math.NaN()
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return math.NaN()
		}
		return parseJSDate(s)
	case 't':
		return 1
	case 'f', 'n':
		return 0
	case '[', '{':
		return math.NaN()
	default:
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return math.NaN()
		}
		return timeClip(f)
	}
}

func timeClip(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > maxTimeMs {
		return math.NaN()
	}
	t := math.Trunc(f)
	if t == 0 {
		return 0 // -0 → +0
	}
	return t
}

// dateScanner walks an ECMAScript date-time string.
type dateScanner struct {
	s   string
	i   int
	bad bool
}

func (d *dateScanner) digits(n int) int {
	if d.i+n > len(d.s) {
		d.bad = true
		return 0
	}
	v := 0
	for k := 0; k < n; k++ {
		c := d.s[d.i+k]
		if c < '0' || c > '9' {
			d.bad = true
			return 0
		}
		v = v*10 + int(c-'0')
	}
	d.i += n
	return v
}

func (d *dateScanner) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *dateScanner) accept(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

func parseJSDate(s string) float64 {
	d := &dateScanner{s: s}
	var year int
	switch d.peek() {
	case '+', '-':
		neg := d.s[0] == '-'
		d.i++
		year = d.digits(6)
		if neg {
			if year == 0 {
				return math.NaN() // -000000 is not allowed
			}
			year = -year
		}
	default:
		year = d.digits(4)
	}
	month, day := 1, 1
	if d.accept('-') {
		month = d.digits(2)
		if d.accept('-') {
			day = d.digits(2)
		}
	}
	if d.bad || month < 1 || month > 12 || day < 1 || day > 31 {
		return math.NaN()
	}
	loc := time.UTC
	hour, minute, sec, ms := 0, 0, 0, 0
	if c := d.peek(); c == 'T' || c == 't' || c == ' ' {
		d.i++
		hour = d.digits(2)
		if !d.accept(':') {
			return math.NaN()
		}
		minute = d.digits(2)
		if d.accept(':') {
			sec = d.digits(2)
			if d.accept('.') {
				start := d.i
				for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
					d.i++
				}
				frac := d.s[start:d.i]
				if frac == "" {
					return math.NaN()
				}
				frac = (frac + "00")[:3]
				ms, _ = strconv.Atoi(frac)
			}
		}
		loc = time.Local
		switch c := d.peek(); c {
		case 'Z', 'z':
			d.i++
			loc = time.UTC
		case '+', '-':
			d.i++
			oh := d.digits(2)
			d.accept(':')
			om := d.digits(2)
			if d.bad || oh > 23 || om > 59 {
				return math.NaN()
			}
			off := (oh*60 + om) * 60
			if c == '-' {
				off = -off
			}
			loc = time.FixedZone("", off)
		}
		if d.bad || minute > 59 || sec > 59 || hour > 24 ||
			(hour == 24 && (minute != 0 || sec != 0 || ms != 0)) {
			return math.NaN()
		}
	}
	if d.bad || d.i != len(d.s) {
		return math.NaN()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), loc)
	return timeClip(float64(t.UnixMilli()))
}
