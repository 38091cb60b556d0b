package midcompact

import (
	"encoding/base64"
	"encoding/binary"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Metrics are the factual content measurements of a message, atom or range
// (reference §2.5): ContentChars counts code points of text, thinking, tool
// call name + JSON arguments (never the id), bash command + output and a
// custom message's string summary; images are never counted as chars.
// Nothing in this package estimates tokens from them for a decision.
type Metrics struct {
	ContentChars int
	Images       []ImageFact
}

// ImageFact describes one image part. Index is its position among the images
// of the measured unit (renumbered when metrics are added up); PayloadBytes
// is the decoded base64 length (0 when the data does not decode); Width and
// Height are 0 when the header is not PNG, GIF, JPEG or WebP.
type ImageFact struct {
	Index         int
	MimeType      string
	PayloadBytes  int
	Width, Height int
}

// ImageCount is the number of image parts.
func (m Metrics) ImageCount() int { return len(m.Images) }

// ImagePayloadBytes is the sum of the images' decoded payload bytes.
func (m Metrics) ImagePayloadBytes() int {
	n := 0
	for _, f := range m.Images {
		n += f.PayloadBytes
	}
	return n
}

// add appends o's facts to m, renumbering image indexes.
func (m *Metrics) add(o Metrics) {
	m.ContentChars += o.ContentChars
	for _, f := range o.Images {
		f.Index = len(m.Images)
		m.Images = append(m.Images, f)
	}
}

// messageMetrics measures one message.
func messageMetrics(msg *Message) Metrics {
	var m Metrics
	if msg.ContentIsString {
		m.ContentChars += utf8.RuneCountInString(msg.ContentString)
	}
	for i := range msg.Parts {
		p := &msg.Parts[i]
		switch p.Type {
		case pimessage.KindText:
			m.ContentChars += utf8.RuneCountInString(p.Text)
		case pimessage.KindThinking:
			m.ContentChars += utf8.RuneCountInString(p.Thinking)
		case pimessage.KindToolCall:
			m.ContentChars += utf8.RuneCountInString(p.Name) + utf8.RuneCountInString(argumentsJSON(p))
		case pimessage.KindImage:
			m.Images = append(m.Images, imageFact(len(m.Images), p))
		}
	}
	if msg.Role == pimessage.RoleBashExecution {
		m.ContentChars += utf8.RuneCountInString(msg.Command) + utf8.RuneCountInString(msg.Output)
	}
	if msg.Role == pimessage.RoleCustom && msg.HasSummary {
		m.ContentChars += utf8.RuneCountInString(msg.Summary)
	}
	return m
}

func imageFact(index int, p *Part) ImageFact {
	f := ImageFact{Index: index, MimeType: imageMime(p)}
	data, ok := decodeBase64(p.Data)
	if ok {
		f.PayloadBytes = len(data)
		f.Width, f.Height = imageSize(data)
	}
	return f
}

func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// imageSize reads the pixel size from a PNG, GIF, JPEG or WebP header.
func imageSize(b []byte) (w, h int) {
	switch {
	case len(b) >= 24 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		return int(binary.BigEndian.Uint32(b[16:])), int(binary.BigEndian.Uint32(b[20:]))
	case len(b) >= 10 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		return int(binary.LittleEndian.Uint16(b[6:])), int(binary.LittleEndian.Uint16(b[8:]))
	case len(b) >= 4 && b[0] == 0xFF && b[1] == 0xD8:
		return jpegSize(b)
	case len(b) >= 30 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return webpSize(b)
	}
	return 0, 0
}

func jpegSize(b []byte) (w, h int) {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return 0, 0
		}
		marker := b[i+1]
		if marker == 0xFF {
			i++
			continue
		}
		if marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7) {
			i += 2
			continue
		}
		size := int(binary.BigEndian.Uint16(b[i+2:]))
		if marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
			if i+9 > len(b) {
				return 0, 0
			}
			return int(binary.BigEndian.Uint16(b[i+7:])), int(binary.BigEndian.Uint16(b[i+5:]))
		}
		if size < 2 {
			return 0, 0
		}
		i += 2 + size
	}
	return 0, 0
}

func webpSize(b []byte) (w, h int) {
	switch string(b[12:16]) {
	case "VP8 ":
		return int(binary.LittleEndian.Uint16(b[26:]) & 0x3FFF), int(binary.LittleEndian.Uint16(b[28:]) & 0x3FFF)
	case "VP8L":
		if len(b) < 25 {
			return 0, 0
		}
		bits := binary.LittleEndian.Uint32(b[21:])
		return int(bits&0x3FFF) + 1, int((bits>>14)&0x3FFF) + 1
	case "VP8X":
		u24 := func(o int) int { return int(b[o]) | int(b[o+1])<<8 | int(b[o+2])<<16 }
		return u24(24) + 1, u24(27) + 1
	}
	return 0, 0
}
