package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReplay_Profiles(t *testing.T) {
	src := newRig(t, nil)
	unit := strings.Replace(unitPayload("u1"), `"frame_ids":["f1"]`, `"frame_ids":["g1","c1","gone"],"audio_clip_id":"clip1"`, 1)
	src.mustPost(src.env("click", fixturePayloads["click"]), src.env("transcript", fixturePayloads["transcript"]),
		src.env("annotation", annotationPayload("a1")), src.env("unit", unit))
	src.mustPost(src.env("frame", `{"id":"g1","t":1,"route":"/","kind":"gesture","jpeg_base64":"/9j/AA=="}`))
	src.mustPost(src.env("frame", `{"id":"c1","t":1,"route":"/","kind":"composite","jpeg_base64":"/9j/AQ=="}`))
	src.mustPost(src.env("frame", `{"id":"gone","t":1,"route":"/","kind":"composite","jpeg_base64":"/9j/Ag=="}`))
	src.mustPost(src.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	// A frame file that was replaced by a symlink is never read.
	frames := filepath.Join(src.e.opts.Root, "state/log/frames")
	os.Remove(filepath.Join(frames, "7-gone.jpg"))
	os.Symlink("/etc/hostname", filepath.Join(frames, "7-gone.jpg"))

	for _, c := range []struct {
		profile   string
		types     []string
		frameIDs  string
		annIDs    string
		skipped   int
		keepsClip bool
	}{
		{profileAnchorsTranscriptOnly, []string{"transcript", "unit", "checkpoint"}, `[]`, `[]`, 5, false},
		{profileStrokesComposite, []string{"transcript", "annotation", "unit", "frame", "checkpoint"}, `["c1"]`, `[]`, 3, false},
		{profileEverything, []string{"click", "transcript", "annotation", "unit", "frame", "frame", "checkpoint"}, `["g1","c1"]`, `[]`, 1, true},
	} {
		t.Run(c.profile, func(t *testing.T) {
			dst := newRig(t, nil)
			rep, err := Replay(context.Background(), ReplayOptions{Root: src.e.opts.Root, Profile: c.profile, To: dst.srv.URL, Token: "page-tok"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.EnvelopesSkipped != c.skipped || rep.EnvelopesSent != len(c.types) || !strings.HasPrefix(rep.SessionID, "r") || len(rep.SessionID) != 8 {
				t.Fatalf("report %+v", rep)
			}
			lines := readLog(t, dst.e.opts.Root)
			var types []string
			for i, l := range lines {
				types = append(types, l.Type)
				if l.Seq != int64(i+1) {
					t.Fatalf("seq %d at %d", l.Seq, i)
				}
				if l.Type == "unit" {
					p, _ := parseObj(l.Payload)
					ev, _ := parseObj(p["evidence"])
					if string(ev["frame_ids"]) != c.frameIDs || ev.has("audio_clip_id") != c.keepsClip {
						t.Fatalf("evidence %s", p["evidence"])
					}
					if c.profile == profileAnchorsTranscriptOnly && string(ev["annotation_ids"]) != c.annIDs {
						t.Fatalf("annotation_ids %s", ev["annotation_ids"])
					}
				}
			}
			if diff := cmp.Diff(c.types, types); diff != "" {
				t.Fatal(diff)
			}
			if _, w := dst.wait(); w == nil || w.CheckpointID != "cp1" {
				t.Fatalf("replayed checkpoint did not wake: %+v", w)
			}
		})
	}
}

// TestReplay_LogForms replays a log in each form replay must read: upstream's
// (no session_id, frame_file inside payload and at the top level) and the
// one pikit wrote before lines carried a top-level frame_file (payload
// only). Frames arrive with their bytes; a dropped frame is re-sent empty.
func TestReplay_LogForms(t *testing.T) {
	want, err := os.ReadFile("testdata/replay/upstream/frames/2-f1.jpg")
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"upstream", "pikit-2026"} {
		t.Run(form, func(t *testing.T) {
			dir, _ := filepath.Abs(filepath.Join("testdata/replay", form))
			dst := newRig(t, nil)
			rep, err := Replay(context.Background(), ReplayOptions{Root: t.TempDir(), Log: dir, Profile: profileEverything, To: dst.srv.URL, Token: "page-tok"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.EnvelopesSent != 5 || rep.EnvelopesSkipped != 0 {
				t.Fatalf("report %+v", rep)
			}
			lines := readLog(t, dst.e.opts.Root)
			if len(lines) != 5 {
				t.Fatalf("%d lines", len(lines))
			}
			if got := string(lines[1].FrameFile); got != `"frames/2-f1.jpg"` {
				t.Fatalf("frame line frame_file %s", got)
			}
			got, err := os.ReadFile(filepath.Join(dst.e.opts.Root, "state/log/frames/2-f1.jpg"))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("replayed frame bytes %x (%v), want %x", got, err, want)
			}
			if ff := string(lines[2].FrameFile); ff != "null" {
				t.Fatalf("dropped frame_file %s", ff)
			}
		})
	}
}
