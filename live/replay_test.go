package live

import (
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
		{ProfileAnchorsTranscriptOnly, []string{"transcript", "unit", "checkpoint"}, `[]`, `[]`, 5, false},
		{ProfileStrokesComposite, []string{"transcript", "annotation", "unit", "frame", "checkpoint"}, `["c1"]`, `[]`, 3, false},
		{ProfileEverything, []string{"click", "transcript", "annotation", "unit", "frame", "frame", "checkpoint"}, `["g1","c1"]`, `[]`, 1, true},
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
					if c.profile == ProfileAnchorsTranscriptOnly && string(ev["annotation_ids"]) != c.annIDs {
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
