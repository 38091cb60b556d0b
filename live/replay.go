package live

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// Replay evidence profiles (reference §4.12).
const (
	profileAnchorsTranscriptOnly = "anchors_transcript_only"
	profileStrokesComposite      = "strokes_composite"
	profileEverything            = "everything"
)

// ReplayOptions configure [Replay]. Profile is anchors_transcript_only,
// strokes_composite or everything (reference §4.12). To is the target
// endpoint origin and Token its page token; Log is a log-ended-<stamp> name
// under state/ or a directory holding events.ndjson (empty: state/log).
type ReplayOptions struct {
	Root, Profile, To, Token, Log string
	Client                        *http.Client // nil: 30 s timeout client
}

// ReplayReport is what the replay CLI prints.
type ReplayReport struct {
	Status           string `json:"status"`
	To               string `json:"to"`
	Profile          string `json:"profile"`
	SessionID        string `json:"session_id"`
	EnvelopesSent    int    `json:"envelopes_sent"`
	EnvelopesSkipped int    `json:"envelopes_skipped"`
}

var telemetryTypes = []string{"click", "navigation", "network_request", "console_error"}

// Replay re-emits a session log to another endpoint as a fresh session,
// filtered by the evidence profile (reference §3.3, §4.12).
func Replay(ctx context.Context, o ReplayOptions) (ReplayReport, error) {
	if !slices.Contains([]string{profileAnchorsTranscriptOnly, profileStrokesComposite, profileEverything}, o.Profile) {
		return ReplayReport{}, fmt.Errorf("live: unknown profile %q", o.Profile)
	}
	if o.To == "" || o.Token == "" {
		return ReplayReport{}, errors.New("live: replay needs --to and --token")
	}
	root, err := statePaths(o.Root)
	if err != nil {
		return ReplayReport{}, err
	}
	dir := filepath.Join(root, stateDirName, logDirName)
	if o.Log != "" {
		dir = o.Log
		if strings.HasPrefix(o.Log, "log-ended-") && !strings.ContainsAny(o.Log, `/\`) {
			dir = filepath.Join(root, stateDirName, o.Log)
		}
	}
	lines, err := readLogLines(filepath.Join(dir, eventsFile))
	if err != nil {
		return ReplayReport{}, err
	}
	framesDir := filepath.Join(dir, framesDirName)
	frameBytes := map[int]([]byte){} // line index -> bytes to send
	emitted := map[string]bool{}
	for i, ll := range lines {
		if ll.Type != "frame" {
			continue
		}
		p, _ := parseObj(ll.Payload)
		kind, _ := p.str("kind")
		if o.Profile == profileAnchorsTranscriptOnly || (o.Profile == profileStrokesComposite && kind != "composite") {
			continue
		}
		id, _ := p.str("id")
		ff := ll.frameFile(p)
		if ff.Kind() != '"' {
			frameBytes[i] = nil // dropped: re-sent with empty bytes
			emitted[id] = true
			continue
		}
		rel, _ := strVal(ff)
		data, ok := safeFrame(framesDir, rel)
		if !ok {
			continue
		}
		frameBytes[i] = data
		emitted[id] = true
	}
	sid := newReplaySessionID(lines)
	rep := ReplayReport{Status: "replayed", To: strings.TrimRight(o.To, "/"), Profile: o.Profile, SessionID: sid}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	var batch []jsontext.Value
	size := 2
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var body []byte
		if len(batch) == 1 {
			body = batch[0]
		} else {
			body, _ = json.Marshal(batch)
		}
		batch, size = nil, 2
		return replayPost(ctx, client, rep.To, o.Token, sid, body)
	}
	var seq int64
	for i, ll := range lines {
		payload := ll.Payload
		switch {
		case slices.Contains(telemetryTypes, ll.Type) && o.Profile != profileEverything,
			ll.Type == "annotation" && o.Profile == profileAnchorsTranscriptOnly:
			rep.EnvelopesSkipped++
			continue
		case ll.Type == "frame":
			data, ok := frameBytes[i]
			if !ok {
				rep.EnvelopesSkipped++
				continue
			}
			p, _ := parseObj(payload)
			delete(p, "frame_file")
			b64, _ := json.Marshal(base64.StdEncoding.EncodeToString(data))
			p["jpeg_base64"] = b64
			payload, _ = json.Marshal(p, jsonOut)
		case ll.Type == "unit":
			payload = pruneEvidence(payload, o.Profile, emitted)
		}
		seq++
		env, _ := json.Marshal(envelope{SchemaVersion: schemaVersion, SessionID: sid, Seq: seq, T: ll.T, Type: ll.Type, Payload: payload}, jsonOut)
		if ll.Type == "frame" {
			if err := flush(); err != nil {
				return rep, err
			}
			if err := replayPost(ctx, client, rep.To, o.Token, sid, env); err != nil {
				return rep, err
			}
			rep.EnvelopesSent++
			continue
		}
		if len(env)+2 > maxEventBody {
			return rep, fmt.Errorf("live: envelope seq %d alone exceeds 64 KiB", ll.Seq)
		}
		if size+len(env)+1 > maxEventBody {
			if err := flush(); err != nil {
				return rep, err
			}
		}
		batch = append(batch, env)
		size += len(env) + 1
		rep.EnvelopesSent++
		if ll.Type == "checkpoint" {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	return rep, flush()
}

// frameFile is a frame line's frame_file: the top-level one (upstream's
// lines and pikit's since both carry it), else the payload's (pikit's
// earlier lines). A missing or null value means a dropped frame.
func (ll *logLine) frameFile(payload obj) jsontext.Value {
	if len(ll.FrameFile) > 0 {
		return ll.FrameFile
	}
	return payload["frame_file"]
}

func readLogLines(path string) ([]logLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("live: open log: %w", err)
	}
	defer f.Close()
	// Lines that are not an envelope are passed over (a torn last line, a
	// blank or invalid one); a line over the journal's record cap cannot
	// be one of ours and is too large to post, so it ends the replay.
	var out []logLine
	r := jsonl.NewReader(f, 0)
	for {
		line, err := r.Next()
		var re *jsonl.RecordError
		switch {
		case err == io.EOF:
			return out, nil
		case errors.Is(err, jsonl.ErrOversized):
			return nil, fmt.Errorf("live: log line %d exceeds %d bytes: %w", r.Record(), jsonl.DefaultMaxRecord, err)
		case errors.As(err, &re):
			continue
		case err != nil:
			return nil, fmt.Errorf("live: read log: %w", err)
		}
		var ll logLine
		if strictjson.Unmarshal(line, &ll, nil) == nil {
			out = append(out, ll)
		}
	}
}

// safeFrame reads a frame only when it is a regular, non-symlink file
// directly inside frames/ (a traversing frame_file or a symlink is skipped).
func safeFrame(framesDir, rel string) ([]byte, bool) {
	name, ok := strings.CutPrefix(rel, framesDirName+"/")
	if !ok || name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, false
	}
	p := filepath.Join(framesDir, name)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, err := os.ReadFile(p)
	return data, err == nil
}

func pruneEvidence(payload jsontext.Value, profile string, emitted map[string]bool) jsontext.Value {
	p, ok := parseObj(payload)
	if !ok {
		return payload
	}
	ev, ok := parseObj(p["evidence"])
	if !ok {
		return payload
	}
	var frames []string
	_ = json.Unmarshal(ev["frame_ids"], &frames)
	kept := []string{}
	for _, id := range frames {
		if emitted[id] && profile != profileAnchorsTranscriptOnly {
			kept = append(kept, id)
		}
	}
	ev["frame_ids"], _ = json.Marshal(kept)
	if profile == profileAnchorsTranscriptOnly {
		ev["annotation_ids"] = jsontext.Value("[]")
	}
	if profile != profileEverything {
		delete(ev, "audio_clip_id")
		delete(ev, "telemetry_window")
	}
	p["evidence"], _ = json.Marshal(ev, jsonOut)
	out, _ := json.Marshal(p, jsonOut)
	return out
}

func newReplaySessionID(lines []logLine) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "r" + hex.EncodeToString(b[:])
	n := 8
	if len(lines) > 0 {
		n = max(len(lines[0].SessionID), 8)
	}
	return id[:min(n, len(id))]
}

func replayPost(ctx context.Context, c *http.Client, to, token, sid string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to+"/events", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("live: replay request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Riffrec-Session", sid)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("live: replay post: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("live: replay: target answered HTTP %d", resp.StatusCode)
	}
	return nil
}
